"""Path semantics: which paths a workload writes, where they land, and whether that survives the pod.

A container's command line is read as written (Kubernetes lists, Run:ai single strings
already split by the adapters, ``sh -c``/``bash -c`` scripts, ``runai … -- cmd``).  From it,
its environment and the run configs it references come :class:`~spikelint.facts.runconfig.Setting`
values; output/checkpoint/log paths among them are expanded (shell variables assigned earlier,
env vars, Kubernetes ``$(VAR)``), resolved against the working directory (``workingDir``,
``--working-dir``, ``cd`` in the script) and looked up in the container's mounts (longest
prefix) to decide whether they are persistent, and why not.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Callable
from typing import Iterable
from typing import NamedTuple
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Workload
from spikelint.facts.runconfig import CONFIG_REF
from spikelint.facts.runconfig import LOG
from spikelint.facts.runconfig import OUTPUT
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.runconfig import RunFacts
from spikelint.facts.runconfig import Setting
from spikelint.facts.runconfig import config_settings
from spikelint.facts.runconfig import env_setting
from spikelint.facts.runconfig import flag_settings
from spikelint.facts.runconfig import is_moot
from spikelint.facts.runconfig import is_remote
from spikelint.facts.runconfig import positional_configs
from spikelint.facts.runconfig import summarise

if TYPE_CHECKING:
    from spikelint.config import Config
    from spikelint.documents.shell import Script
    from spikelint.documents.shell import SimpleCommand
    from spikelint.documents.shell import Word
    from spikelint.discovery.project import Project

SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ash", "ksh"))
TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/run")
# a Slurm compute node's own disk: not shared with the other nodes, wiped when the job ends
NODE_LOCAL = ("/tmp", "/var/tmp", "/dev/shm", "/run")
NODE_LOCAL_STEMS = ("/local", "/scratch/local", "/raid/local")  # /local, /local_scratch, /raid/local0 …
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/proc/")
TRAINERS = frozenset(("python", "python3", "torchrun", "accelerate", "deepspeed", "composer", "horovodrun",
                      "mpirun", "srun", "lightning"))
WORKDIR_UNKNOWN = "\x01"  # the working directory was changed to something that cannot be resolved
# commands whose redirected output is not the run's log (setup steps, credentials, config files)
UTILITY_COMMANDS = frozenset((
    "echo", "printf", "cat", "env", "export", "mkdir", "cp", "mv", "ln", "touch", "rm", "ls", "du", "df", "date",
    "hostname", "sed", "awk", "grep", "head", "tail", "sort", "uniq", "cut", "tr", "wc", "nvidia-smi", "pip",
    "pip3", "apt-get", "apt", "yum", "conda", "mamba", "git", "curl", "wget", "chmod", "chown", "tar", "unzip",
    "gzip", "zcat", "jq", "yq", "base64", "openssl", "ssh-keygen", "ssh-keyscan", "sleep", "true", "false", "id",
    "whoami", "uname", "free", "lscpu", "nproc", "which", "command", "type", "set", "cd",
    "source", ".", "test", "[", "[[", "envsubst", "xargs", "find", "tee", "huggingface-cli", "gsutil", "aws",
    "rsync", "scp", "kubectl", "runai", "wandb"))
PRIVATE_TARGETS = lazy_regex(r"(^|/)(\.ssh|\.netrc|\.git-credentials|\.docker|\.aws|\.config|\.kube|etc)(/|$)|^~|"
                             r"^\$\{?HOME\b|^/root/\.|^/etc/")
_VARIABLE = lazy_regex(r"\$(?:\{(?P<braced>[^{}]*)\}|\((?P<paren>[^()]*)\)|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[0-9#?@*$!-]))|`[^`]*`")
_NAME = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = lazy_regex(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = lazy_regex(r"python[\d.]*")
_PARAMETER = lazy_regex(r"^([A-Za-z_][A-Za-z0-9_]*)(:?[-=?+])(.*)$", re.DOTALL)
MAX_EXPANSION_DEPTH = 8
PLATFORM_DEFAULTS = {"TMPDIR": "/tmp"}  # unset in containers unless the image says otherwise: /tmp is used
MAX_EXPANSIONS = 200


# --------------------------------------------------------------------------- variable expansion


class Variable(NamedTuple):
    """A variable's value as written, and where."""

    text: str
    where: Located


Lookup = Callable[[str, Located | None], Variable | None]


class Expanded(NamedTuple):
    """A word after expansion: unknown parts are ``UNRESOLVED``; ``sources`` are the written texts used."""

    text: str
    sources: tuple[tuple[Located, str], ...]


def expand(text: str, where: Located, lookup: Lookup, depth: int = 0, budget: list[int] | None = None) -> Expanded:
    """``$NAME``, ``${NAME}``, ``${NAME:-default}``, ``$(NAME)`` (Kubernetes) expanded through ``lookup``.

    Command substitutions (``$(date)``, backticks) and unknown variables become ``UNRESOLVED``;
    ``budget`` bounds the total work for pathological chains of variables.
    """
    sources: list[tuple[Located, str]] = [(where, text)]
    if "$" not in text and "`" not in text:
        return Expanded(text, tuple(sources))
    budget = budget if budget is not None else [MAX_EXPANSIONS]

    def substitute(match: re.Match[str]) -> str:
        if match.group(0).startswith("`"):
            return UNRESOLVED
        paren = match.group("paren")
        if paren is not None:
            if _NAME.fullmatch(paren):
                found = lookup(paren, where)
                if found is not None:
                    return _inner(found)
            return UNRESOLVED
        name = match.group("braced") if match.group("braced") is not None else match.group("plain")
        default = None
        operator = _PARAMETER.match(name or "")
        if operator:
            name, default = operator.group(1), operator.group(3) if operator.group(2) in (":-", "-", ":=", "=") \
                else None
        if not name or not _NAME.fullmatch(name):
            return UNRESOLVED
        found = lookup(name, where)
        if found is not None:
            return _inner(found)
        if default is not None:
            return expand(default, where, lookup, depth + 1, budget).text
        return PLATFORM_DEFAULTS.get(name, UNRESOLVED)

    def _inner(found: Variable) -> str:
        budget[0] -= 1
        if depth >= MAX_EXPANSION_DEPTH or budget[0] < 0:
            return UNRESOLVED
        inner = expand(found.text, found.where, lookup, depth + 1, budget)
        sources.extend(inner.sources)
        return inner.text

    result = _VARIABLE.sub(substitute, text)
    return Expanded(result, tuple(dict.fromkeys(sources)))


# --------------------------------------------------------------------------- resolving and placing paths


def is_relative(text: str) -> bool:
    """``out/run``, ``./ckpt`` — not ``/abs``, ``~/x``, ``$VAR/x`` (unknown) or ``s3://…``."""
    stripped = text.strip()
    if not stripped or stripped.startswith(("/", "~", UNRESOLVED, "$", "`", "{")):
        return False
    return not is_remote(stripped)


def resolve(text: str, cwd: str | None) -> str | None:
    """An absolute, normalised path (its known prefix); ``None`` when it cannot be known."""
    stripped = text.strip()
    if not stripped or stripped.startswith((UNRESOLVED, "~", "$", "`")):
        return None
    if not stripped.startswith("/"):
        if cwd is None or cwd.startswith(WORKDIR_UNKNOWN) or UNRESOLVED in cwd:
            return None
        stripped = posixpath.join(cwd, stripped)
    if UNRESOLVED in stripped:
        stripped = stripped[: stripped.index(UNRESOLVED)]
        stripped = stripped[: stripped.rfind("/") + 1] or "/"
    return posixpath.normpath(stripped)


def under(path: str, prefix: str) -> bool:
    prefix = posixpath.normpath(prefix) if prefix else prefix
    if not prefix:
        return False
    if prefix == "/":
        return True
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class Placement(NamedTuple):
    """Where an absolute path lands: persistent or not (``None``: cannot tell), and why."""

    persistent: bool | None
    path: str
    mount: Mount | None
    reason: str


VOLUME_REASONS = {
    "emptyDir": "on emptyDir volume {name!r} (mounted at {at}), which is deleted with the pod",
    "hostPath": "on hostPath volume {name!r} (mounted at {at}), which stays on one node while a rescheduled pod "
                "lands on another",
    "ephemeral-pvc": "on ephemeral PVC {name!r} (mounted at {at}), which is deleted with the workload",
    "configMap": "on configMap volume {name!r} (mounted at {at}), which is read-only",
    "secret": "on secret volume {name!r} (mounted at {at}), which is read-only",
    "git": "on git volume {name!r} (mounted at {at}), a checkout that is not kept",
}


def mount_for(path: str, mounts: Iterable[Mount]) -> Mount | None:
    """The mount holding ``path`` (longest mount path prefix)."""
    best: Mount | None = None
    best_length = -1
    for mount in mounts:
        mount_path = str(mount.path.value).strip()
        if not mount_path.startswith("/"):
            continue
        normal = posixpath.normpath(mount_path)
        if under(path, normal) and len(normal) > best_length:
            best, best_length = mount, len(normal)
    return best


def node_local(path: str) -> str | None:
    """The node-local folder an absolute path lies under (``/tmp``, ``/dev/shm``, ``/local*``, ``/raid/local*``)."""
    found = next((prefix for prefix in NODE_LOCAL if under(path, prefix)), None)
    if found is not None:
        return found
    for stem in NODE_LOCAL_STEMS:
        if path.startswith(stem):
            return "/" + path.lstrip("/").split("/")[0] if stem == "/local" else \
                stem.rsplit("/", 1)[0] + "/" + path[len(stem.rsplit("/", 1)[0]) + 1:].split("/")[0]
    return None


def place(path: str, container: Container, workload: Workload, config: Config) -> Placement:
    """Is the absolute ``path`` persistent for this container?"""
    for prefix in config.persistent_paths:
        if under(path, prefix):
            return Placement(True, path, None, f"configured persistent path {prefix}")
    if workload.source == "slurm":
        local = node_local(path)
        if local is None:
            return Placement(None, path, None, "on the cluster's filesystem (shared or not: the script does not say)")
        return Placement(False, path, None, f"in {local} on the compute node's local disk, which the other nodes do "
                                            f"not see and which is wiped when the job ends or is requeued elsewhere")
    mount = mount_for(path, container.mounts)
    if mount is not None:
        return _mount_placement(path, mount)
    for mount_path in workload.persistent_mount_paths:
        if isinstance(mount_path.value, str) and under(path, mount_path.value):
            return Placement(True, path, None, f"persistent mount {mount_path.value}")
    if storage_unknown(workload):
        return Placement(None, path, None, "storage attached by a data source or template the file does not show")
    temporary = next((prefix for prefix in TEMPORARY if under(path, prefix)), None)
    if temporary is not None:
        return Placement(False, path, None, f"in {temporary} inside the container, which is discarded with the pod")
    return Placement(False, path, None, "in the container's own filesystem (no volume is mounted there), which is "
                                         "discarded with the pod")


def _mount_placement(path: str, mount: Mount) -> Placement:
    volume = mount.volume
    at = str(mount.path.value)
    if volume is None:
        return Placement(None, path, mount, f"volume mounted at {at} (not declared in this file)")
    if volume.persistent:
        return Placement(True, path, mount, f"{volume.source} {volume.claim or volume.name!r}")
    if posixpath.normpath(at) == "/dev/shm":
        return Placement(False, path, mount, "in shared memory (/dev/shm), which is cleared with the pod")
    template = VOLUME_REASONS.get(volume.source, "on {source} volume {name!r} (mounted at {at}), which does not "
                                                 "outlive the pod")
    return Placement(False, path, mount, template.format(name=volume.name, source=volume.source, at=at))


def storage_unknown(workload: Workload) -> bool:
    """Storage may be attached by something the file only names: REST assets, a Run:ai template, a data source id."""
    if workload.extra.get("unresolved_assets") or workload.extra.get("unresolved_storage"):
        return True
    unresolved = workload.extra.get("unresolved")
    if isinstance(unresolved, list) and any(str(item).startswith("template") for item in unresolved):
        return True
    return any(volume.source == "datasource" and volume.persistent for volume in workload.volumes)


# --------------------------------------------------------------------------- what a container runs


@dataclass
class Invocation:
    """One simple command as the container runs it, with what was in effect at that point."""

    words: list[Located]
    writes: list[Write] = field(default_factory=list)  # redirect and tee targets
    cwd: str | None = None  # working directory in effect (None: not set anywhere)
    condition: str = ""  # enclosing if-conditions (rank-0 guards)
    lookup: Lookup | None = None  # variable values in effect
    programs: tuple[str, ...] = ()  # every program of its pipeline


class Write(NamedTuple):
    """A file a command writes its output to: ``> f``, ``>> f``, ``tee f``, ``tee -a f``."""

    target: Located
    operator: str
    append: bool


def program_name(words: Sequence[Located]) -> str:
    """``/usr/bin/python3`` -> ``python3``; skips ``exec``, ``env A=1``, ``time``, ``nohup`` prefixes."""
    for word in words:
        text = str(word.value)
        if "=" in text and not text.startswith("-") and _ASSIGNMENT.match(text):
            continue
        base = posixpath.basename(text)
        if base in ("exec", "env", "time", "nohup", "stdbuf", "nice", "ionice", "command", "builtin"):
            continue
        return base
    return ""


def script_argument(words: Sequence[Located]) -> tuple[int, Located] | None:
    """``bash -c 'script'`` / ``sh -lc "…"`` -> (index, script word)."""
    for index, word in enumerate(words):
        base = posixpath.basename(str(word.value))
        if base in ("exec", "env", "time", "nohup") or _ASSIGNMENT.match(str(word.value)):
            continue
        if base not in SHELLS:
            return None
        for position in range(index + 1, len(words)):
            option = str(words[position].value)
            if not option.startswith("-") or option == "--":
                return None
            if option.startswith("--"):
                continue
            if "c" in option[1:]:
                return (position + 1, words[position + 1]) if position + 1 < len(words) else None
        return None
    return None


def _word_located(word: Word) -> Located:
    return Located(word.text, word.line, word.column, word.end_line, word.end_column)


class _Finder:
    """Places words of an embedded script at their line and column in the file, by searching.

    Used when the script's lines cannot be found verbatim (folded YAML, escapes in a quoted
    string): each word is searched in order from the holder; a word inside an earlier one
    (an assignment's value) is placed by its offset in that word.
    """

    def __init__(self, lines: list[str], holder: Located) -> None:
        self.lines = lines
        self.holder = holder
        self.line = holder.line
        self.column = holder.column
        self.last = max(holder.end_line or holder.line, holder.line)
        self.previous: tuple[Word, int, int] | None = None  # original word, new line, new column

    def place(self, word: Word) -> tuple[int, int]:
        if self.previous is not None:
            outer, line, column = self.previous
            if word.line == outer.line == outer.end_line and outer.column <= word.column < outer.end_column:
                return line, column + word.column - outer.column
        for needle in (word.raw, word.text):
            if not needle or "\n" in needle:
                continue
            for number in range(self.line, min(self.last, len(self.lines)) + 1):
                source = self.lines[number - 1]
                offset = source.find(needle, self.column - 1 if number == self.line else 0)
                if offset >= 0:
                    self.line, self.column = number, offset + 1 + len(needle)
                    self.previous = (word, number, offset + 1)
                    return number, offset + 1
        return self.holder.line, self.holder.column


def script_segments(text: str, holder: Located, lines: list[str]) -> list[tuple[int, int, int]] | None:
    """Where each line of an embedded script sits in the file: ``(offset, line, column)`` runs.

    Every non-blank line must be found verbatim, in order, within the holder's lines (a YAML
    literal block, a one-line quoted or plain string, a JSON string with ``\\n`` escapes);
    otherwise ``None``.
    """
    segments: list[tuple[int, int, int]] = []
    line, column = holder.line, holder.column
    last = min(max(holder.end_line or holder.line, holder.line), len(lines))
    offset = 0
    for part in text.split("\n"):
        if part.strip():
            found = None
            for number in range(line, last + 1):
                position = lines[number - 1].find(part, column - 1 if number == line else 0)
                if position >= 0:
                    found = (number, position + 1)
                    break
            if found is None:
                return None
            segments.append((offset, found[0], found[1]))
            line, column = found[0], found[1] + len(part)
        else:
            segments.append((offset, line, column))
        offset += len(part) + 1
    return segments


def parse_script(text: str, holder: Located, lines: list[str] | None) -> Script | None:
    """Parse an embedded script with its words placed in the file (when ``lines`` are given)."""
    try:
        from spikelint.documents.shell import parse_shell
        from spikelint.documents.shell import parse_shell_segments
    except ImportError:  # pragma: no cover - the shell parser ships with the package
        return None
    try:
        if lines is None:
            return parse_shell(text, holder.line, holder.column)
        segments = script_segments(text, holder, lines)
        if segments is not None:
            return parse_shell_segments(text, segments)
        return _relocate(parse_shell(text, 1, 1), _Finder(lines, holder))
    except Exception:  # noqa: BLE001 - an unparseable embedded script is skipped, never fatal
        return None


def _relocate(script: Script, finder: _Finder) -> Script:
    """The same script with every word placed in the file by searching (see :class:`_Finder`)."""
    from dataclasses import replace as copy

    every: dict[tuple[int, int], Word] = {}
    for pipeline in script.pipelines:
        for command in pipeline.commands:
            for word in [*command.assignments, *command.words]:
                every.setdefault((word.line, word.column), word)
            for redirect in command.redirects:
                if redirect.target is not None:
                    every.setdefault((redirect.target.line, redirect.target.column), redirect.target)
    for words in script.assignments.values():
        for word in words:
            every.setdefault((word.line, word.column), word)
    moved: dict[tuple[int, int], Word] = {}
    for position in sorted(every):
        word = every[position]
        line, column = finder.place(word)
        end_column = column + (word.end_column - word.column if word.end_line == word.line else len(word.raw))
        moved[position] = copy(word, line=line, column=column, end_line=line, end_column=end_column)
    return _rebuild(script, moved)


def _rebuild(script: Script, moved: dict[tuple[int, int], Word]) -> Script:
    from dataclasses import replace as copy

    def word(item: Word) -> Word:
        return moved.get((item.line, item.column), item)

    pipelines = []
    for pipeline in script.pipelines:
        commands = []
        for command in pipeline.commands:
            redirects = [copy(r, target=word(r.target)) if r.target is not None else r for r in command.redirects]
            commands.append(copy(command, words=[word(w) for w in command.words],
                                 assignments=[word(w) for w in command.assignments], redirects=redirects))
        pipelines.append(copy(pipeline, commands=commands))
    assignments = {name: [word(w) for w in words] for name, words in script.assignments.items()}
    return copy(script, pipelines=pipelines, assignments=assignments)


def script_lookup(script: Script, fallback: Lookup | None = None) -> Lookup:
    """Variables assigned in ``script`` before the point of use, else ``fallback`` (env)."""
    def lookup(name: str, at: Located | None) -> Variable | None:
        best: Variable | None = None
        for word in script.assignments.get(name) or []:
            if at is None or (word.line, word.column) < (at.line, at.column):
                best = Variable(word.text, Located(word.text, word.line, word.column, word.end_line, word.end_column))
        if best is not None:
            return best
        return fallback(name, at) if fallback is not None else None

    return lookup


def env_lookup(container: Container, extra: Lookup | None = None) -> Lookup:
    values = {str(env.name.value): env.value for env in container.env if env.value is not None}

    def lookup(name: str, at: Located | None) -> Variable | None:
        where = values.get(name)
        if where is not None:
            return Variable(str(where.value), where)
        return extra(name, at) if extra is not None else None

    return lookup


def _command_writes(command: SimpleCommand) -> list[Write]:
    writes = []
    for redirect in command.redirects:
        operator = redirect.operator
        if redirect.target is None or "<" in operator or operator.endswith("&"):
            continue
        target = _word_located(redirect.target)
        writes.append(Write(target, operator, ">>" in operator))
    if command.words and posixpath.basename(command.words[0].text) == "tee":
        append = any(word.text in ("-a", "--append") or (word.text.startswith("-") and "a" in word.text[1:]
                                                         and not word.text.startswith("--"))
                     for word in command.words[1:])
        for word in command.words[1:]:
            if not word.text.startswith("-"):
                writes.append(Write(_word_located(word), "tee -a" if append else "tee", append))
    return writes


def script_invocations(script: Script, cwd: str | None, lookup: Lookup,
                       skip: frozenset[str] = frozenset()) -> list[Invocation]:
    """Every simple command of a script in order, with ``cd`` tracked and nested ``bash -c`` opened.

    Commands whose program is in ``skip`` (``runai``: its command line is a workload) are left out
    together with the scripts they embed.
    """
    found: list[Invocation] = []
    current = cwd
    for pipeline in script.pipelines:
        if pipeline.nested:
            continue  # runs inside $(…) or backticks: part of another command's word
        programs = tuple(program_name([_word_located(w) for w in command.words]) for command in pipeline.commands)
        pipe_writes = [write for command in pipeline.commands for write in _command_writes(command)]
        for position, command in enumerate(pipeline.commands):
            words = [_word_located(word) for word in command.words]
            assignments = [_word_located(word) for word in command.assignments]
            if words and words[0].value == "cd":
                current = _change_directory(current, words[1:], lookup)
                continue
            if not words and not command.redirects:
                continue  # NAME=value alone sets a shell variable, read through the lookup
            if skip and program_name(words) in skip:
                continue
            invocation = Invocation(assignments + words, [], current, pipeline.condition, lookup, programs)
            if position == 0:
                invocation.writes = pipe_writes
            found.append(invocation)
            if command.inner is not None:
                found.extend(script_invocations(command.inner, current, script_lookup(command.inner, lookup), skip))
    return found


def _change_directory(current: str | None, arguments: list[Located], lookup: Lookup) -> str | None:
    if not arguments:
        return WORKDIR_UNKNOWN
    target = expand(str(arguments[0].value), arguments[0], lookup).text
    if target.startswith("/") and UNRESOLVED not in target:
        return posixpath.normpath(target)
    if current is not None and not current.startswith(WORKDIR_UNKNOWN) and UNRESOLVED not in target \
            and not target.startswith(("~", "-")):
        return posixpath.normpath(posixpath.join(current, target))
    return WORKDIR_UNKNOWN


def container_invocations(container: Container, document: Document | None) -> list[Invocation]:
    """The commands a container runs: its argv, or the commands of its ``sh -c`` script."""
    argv = [*container.command, *container.args]
    cwd = str(container.working_dir.value) if container.working_dir is not None and \
        str(container.working_dir.value).strip() else None
    outer: Lookup | None = None
    if document is not None and document.kind == FileKind.SHELL and document.parsed is not None \
            and hasattr(document.parsed, "assignments"):
        outer = script_lookup(document.parsed)
    lookup = env_lookup(container, outer)
    if not argv:
        return []
    script = script_argument(argv)
    if script is None:
        return [Invocation(argv, [], cwd, "", lookup, (program_name(argv),))]
    index, holder = script
    lines = document.lines if document is not None else None
    parsed = parse_script(str(holder.value), holder, lines)
    if parsed is None:
        return [Invocation(argv, [], cwd, "", lookup, (program_name(argv),))]
    return script_invocations(parsed, cwd, script_lookup(parsed, lookup))


# --------------------------------------------------------------------------- the run as a whole


class PathUse(NamedTuple):
    """An output/checkpoint/log path a container writes, with what is needed to judge it."""

    setting: Setting
    container: Container
    text: str  # expanded (unknown parts UNRESOLVED)
    cwd: str | None
    sources: tuple[tuple[Located, str], ...]  # written texts it was built from
    report_at: Located  # where a finding about it points (the value, or the --config reference)
    config_ref: Located | None = None  # the --config word when the path comes from a referenced config
    write: Write | None = None  # set for redirect/tee targets
    invocation: Invocation | None = None


@dataclass
class RunView:
    """Everything the workload rules need to know about one workload, computed once."""

    uses: list[PathUse] = field(default_factory=list)
    settings: list[Setting] = field(default_factory=list)
    missing_configs: list[Located] = field(default_factory=list)  # referenced configs not in the scanned tree
    opaque: list[Located] = field(default_factory=list)  # scripts it runs that are not in the scanned tree
    configs: list[tuple[Located, str]] = field(default_factory=list)  # (reference, config path) found
    facts: RunFacts | None = None
    nnodes: int = 1


VIEW_KEY = "spikelint.facts.paths.view"


def run_view(workload: Workload, document: Document | None, project: Project | None) -> RunView:
    """The :class:`RunView` of a workload (cached on the workload: several checks ask)."""
    cached = workload.extra.get(VIEW_KEY)
    if isinstance(cached, RunView):
        return cached
    view = RunView()
    for container in workload.main_containers():
        _add_container(view, container, workload, document, project)
    view.facts = summarise(view.settings)
    if view.facts.disabled:
        view.uses = [use for use in view.uses if not is_moot(use.setting, view.facts.disabled)]
    workload.extra[VIEW_KEY] = view
    return view


def _add_container(view: RunView, container: Container, workload: Workload, document: Document | None,
                   project: Project | None) -> None:
    env_values = {str(env.name.value): str(env.value.value) for env in container.env if env.value is not None}
    for env in container.env:
        setting = env_setting(env.name, env.value)
        if setting is not None:
            _add_setting(view, setting, container, container_cwd(container), env_lookup(container), None, None)
    context = _Context(view, container, document, project, env_values)
    for invocation in container_invocations(container, document):
        _add_invocation(context, invocation, None, None)
        script = script_file(invocation.words)
        if script is not None:
            _add_script_file(context, invocation, script)


class _Context(NamedTuple):
    view: RunView
    container: Container
    document: Document | None
    project: Project | None
    env: dict[str, str]


def _add_invocation(context: _Context, invocation: Invocation, via: Located | None, via_path: str | None) -> None:
    """Settings, config references and log writes of one command."""
    view, container = context.view, context.container
    view.nnodes = max(view.nnodes, launcher_nodes(invocation.words, invocation.lookup))
    lookup = invocation.lookup or env_lookup(container)
    for setting in [*flag_settings(invocation.words), *_short_output_flags(invocation)]:
        if via_path is not None:
            setting = setting._replace(config=via_path)
        if CONFIG_REF in setting.roles and via is None and not _launcher_flag(setting, invocation):
            _add_config(context, setting.where, str(setting.value), setting.key, invocation)
        _add_setting(view, setting, container, invocation.cwd, lookup, via, invocation)
    if via is None:
        for word in positional_configs(invocation.words):
            _add_config(context, word, str(word.value), ("config",), invocation)
    for write in invocation.writes:
        if is_log_write(write, invocation):
            setting = Setting(("redirect",), write.target.value, write.target, frozenset((OUTPUT, LOG)),
                              write.target.value, f"redirect {write.operator}", config=via_path)
            _add_setting(view, setting, container, invocation.cwd, lookup, via, invocation, write)


def is_trainer(program: str) -> bool:
    return program in TRAINERS or bool(_PYTHON.fullmatch(program))


def _launcher_flag(setting: Setting, invocation: Invocation) -> bool:
    """A ``--config_file`` of ``accelerate launch``/``deepspeed`` itself, written before the training script."""
    if program_name(invocation.words) not in ("accelerate", "deepspeed", "torchrun", "composer"):
        return False
    script = next((word for word in invocation.words if str(word.value).endswith(".py")), None)
    return script is not None and (setting.where.line, setting.where.column) < (script.line, script.column)


def _short_output_flags(invocation: Invocation) -> list[Setting]:
    """``-o DIR`` of a training program (``python train.py -o /ckpt/run``), not of curl or tar."""
    if not is_trainer(program_name(invocation.words)):
        return []
    found = []
    for index, word in enumerate(invocation.words[:-1]):
        following = invocation.words[index + 1]
        if word.value == "-o" and "/" in str(following.value) and not str(following.value).startswith("-"):
            found.append(Setting(("o",), str(following.value), following, frozenset((OUTPUT,)),
                                 str(following.value), "-o"))
    return found


def script_file(words: Sequence[Located]) -> Located | None:
    """The script file a command runs: ``bash run.sh``, ``sh -e ./train.sh``, ``/workspace/launch.sh``."""
    program = program_name(words)
    if program.endswith((".sh", ".bash")):
        return next(word for word in words if posixpath.basename(str(word.value)) == program)
    if program not in SHELLS:
        return None
    started = False
    for word in words:
        text = str(word.value)
        if not started:
            started = posixpath.basename(text) == program
            continue
        if text.startswith("-"):
            if "c" in text[1:] and not text.startswith("--"):
                return None  # sh -c 'script' is read as a script string
            continue
        return word if text.endswith((".sh", ".bash")) or "/" in text else None
    return None


def _add_script_file(context: _Context, invocation: Invocation, word: Located) -> None:
    """Read a script the container runs when it is in the scanned tree (its settings count for the workload)."""
    found = None
    text = str(word.value)
    if context.project is not None and "$" not in text:
        found = context.project.find_config(text, near=context.document)
    script = getattr(found, "parsed", None) if found is not None else None
    if found is None or script is None or not hasattr(script, "pipelines"):
        context.view.opaque.append(word)
        return
    context.view.configs.append((word, found.path))
    lookup = script_lookup(script, env_lookup(context.container))
    for inner in script_invocations(script, invocation.cwd, lookup):
        _add_invocation(context, inner, word, found.path)


def container_cwd(container: Container) -> str | None:
    if container.working_dir is None:
        return None
    text = str(container.working_dir.value).strip()
    return text or None


def is_log_write(write: Write, invocation: Invocation) -> bool:
    """A redirect/tee of the run's output, not a setup step writing a config or a credential file."""
    target = str(write.target.value)
    if not target or target.startswith(DEVICES) or target.startswith("&") or PRIVATE_TARGETS.search(target):
        return False
    programs = [name for name in invocation.programs if name and name != "tee"]
    return bool(programs) and not all(name in UTILITY_COMMANDS for name in programs)


def _add_setting(view: RunView, setting: Setting, container: Container, cwd: str | None, lookup: Lookup,
                 config_ref: Located | None, invocation: Invocation | None, write: Write | None = None) -> None:
    if isinstance(setting.value, str) and ("$" in setting.value or "`" in setting.value):
        expanded = expand(setting.value, setting.where, lookup)
        setting = setting._replace(value=expanded.text, sources=expanded.sources)
    elif not setting.sources and setting.value is not None:
        setting = setting._replace(sources=((setting.where, str(setting.raw if setting.raw is not None
                                                                   else setting.value)),))
    view.settings.append(setting)
    if OUTPUT not in setting.roles or not isinstance(setting.value, str):
        return
    text = setting.value.strip()
    if not text or is_remote(text):
        return
    report_at = config_ref if config_ref is not None else setting.where
    view.uses.append(PathUse(setting, container, text, cwd, setting.sources, report_at, config_ref, write,
                             invocation))


def _add_config(context: _Context, where: Located, reference: str, key: tuple[str, ...],
                invocation: Invocation) -> None:
    """Read a run config the command passes (``--config``, Hydra ``--config-name``, a positional YAML)."""
    if key in (("config_path",), ("cp",)):
        return  # a Hydra config folder: the --config-name word names the file
    candidates = _config_candidates(reference, key, invocation)
    if context.project is None or not candidates:
        return
    found = None
    for candidate in candidates:
        found = context.project.find_config(candidate, near=context.document)
        if found is not None:
            break
    view = context.view
    if found is None:
        view.missing_configs.append(where)
        return
    view.configs.append((where, found.path))
    lookup = invocation.lookup or env_lookup(context.container)
    for tree in found.trees[:1]:
        for setting in config_settings(tree, found.path, context.env):
            _add_setting(view, setting, context.container, invocation.cwd, lookup, where, invocation)


def _config_candidates(reference: str, key: tuple[str, ...], invocation: Invocation) -> list[str]:
    text = reference.strip().strip("'\"")
    if not text or "$" in text or "{" in text:
        return []
    if key in (("config_name",), ("cn",)):
        folder = next((str(s.value) for s in flag_settings(invocation.words) if s.key in (("config_path",), ("cp",))),
                      "")
        name = text if text.endswith((".yaml", ".yml")) else text + ".yaml"
        return [posixpath.join(folder, name) if folder else name]
    if not text.endswith((".yaml", ".yml", ".json", ".toml")):
        return []
    return [text]


_NNODES = lazy_regex(r"^(\d+)(?::(\d+))?$")
# launchers that run once on every node, and the flag that says how many nodes; ``deepspeed --hostfile``,
# ``mpirun`` and ``srun`` start the other nodes themselves, so their output leaves from one place
NODE_FLAGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "torchrun": (("nnodes",),),
    "torch.distributed.run": (("nnodes",),),
    "torch.distributed.launch": (("nnodes",),),
    "accelerate": (("num_machines",),),
}


def launcher_nodes(words: Sequence[Located], lookup: Lookup | None = None) -> int:
    """``torchrun --nnodes 4``, ``--nnodes=2:4``, ``accelerate launch --num_machines 2`` -> the most nodes
    that run this same command (1 when not said)."""
    flags = next((NODE_FLAGS[name] for name in (posixpath.basename(str(word.value)) for word in words)
                  if name in NODE_FLAGS), None)
    if flags is None:
        return 1
    for setting in flag_settings(words):
        if setting.key in flags and isinstance(setting.value, str):
            text = setting.value.strip()
            if lookup is not None and "$" in text:
                text = expand(text, setting.where, lookup).text
            match = _NNODES.match(text)
            if match:
                return int(match.group(2) or match.group(1))
    return 1


def describe(setting: Setting) -> str:
    """How a message names where a value came from."""
    if setting.config:
        return f"{setting.origin} in {setting.config}:{setting.where.line}"
    return setting.origin


def shown(text: str) -> str:
    """A value for a message, unknown parts shown as ``…``."""
    return text.replace(UNRESOLVED, "…")


# --------------------------------------------------------------------------- launch time and run identity

TIMESTAMP = lazy_regex(
    r"\$\{now:|\$\(\s*date\b|`\s*date\b|"
    r"\{(?:timestamp|time_?stamp|datetime|date|time|now|start_time|launch_time)(?::[^{}]*)?\}|"
    r"%[Yy][^/%]{0,3}%[mdbBj]|%[mdHMS][-_:.]?%[dHMSM]|%Y|"
    r"datetime\.now\(|time\.strftime\(|strftime\(")
RUN_IDENTITY = lazy_regex(
    r"\$\{?\(?[A-Z0-9_]*(?:JOB|RUN|EXPERIMENT|EXP|TRIAL|WORKLOAD|TASK)_?(?:NAME|ID|UUID)\b|"
    r"\$\{(?:oc\.env:|env:)?[^}]*(?:job|run|experiment|exp|trial)[._]?(?:name|id|uuid)[^}]*\}|"
    r"(?:^|[/_.-])(?:r|run|rev|trial|attempt|exp|job)[-_]?\d+(?=$|[/_.-])",
    re.IGNORECASE)


def timestamp_sources(sources: Iterable[tuple[Located, str]]) -> list[tuple[Located, str]]:
    """The written texts among ``sources`` that build a value from the launch time."""
    return [(where, text) for where, text in sources if isinstance(text, str) and TIMESTAMP.search(text)]


def names_run(text: str, names: Iterable[str] = ()) -> bool:
    """A path that names one run: a run/job id variable, a ``-r5``/``run-3`` suffix, or the run's name."""
    if RUN_IDENTITY.search(text):
        return True
    parts = {part for part in re.split(r"[/]", text) if part}
    return any(name and name in parts for name in names)
