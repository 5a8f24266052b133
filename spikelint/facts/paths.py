"""Path semantics: which paths a workload writes, gathered once per workload as its :class:`RunView`.

A container's command line is read as written (Kubernetes lists, Run:ai single strings
already split by the adapters, ``sh -c``/``bash -c`` scripts, ``runai … -- cmd``:
:mod:`spikelint.facts.invocations`).  From it, its environment and the run configs it
references come :class:`~spikelint.facts.runconfig.Setting` values; output/checkpoint/log
paths among them are expanded (:mod:`spikelint.facts.expansion`: shell variables assigned
earlier, env vars, Kubernetes ``$(VAR)``); checks then resolve them against the working
directory and look them up in the container's mounts (:mod:`spikelint.facts.placement`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import NamedTuple
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import Located
from spikelint.model import Workload
from spikelint.facts.runconfig import CONFIG_REF
from spikelint.facts.runconfig import LOG
from spikelint.facts.runconfig import OUTPUT
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.runconfig import RunFacts
from spikelint.facts.runconfig import Setting
from spikelint.facts.runconfig import env_setting
from spikelint.facts.runconfig import is_moot
from spikelint.facts.runconfig import is_remote
from spikelint.facts.runconfig import summarise
from spikelint.facts.flags import flag_settings
from spikelint.facts.flags import positional_configs
from spikelint.facts.launchers import launched_index
from spikelint.facts.config_tree import config_settings
from spikelint.facts.expansion import Lookup
from spikelint.facts.expansion import env_lookup
from spikelint.facts.expansion import expand
from spikelint.facts.expansion import script_lookup
from spikelint.facts.invocations import SHELLS
from spikelint.facts.invocations import Invocation
from spikelint.facts.invocations import Write
from spikelint.facts.invocations import container_invocations
from spikelint.facts.invocations import program_name
from spikelint.facts.invocations import script_invocations
from spikelint.facts.entry_script import code_resumes

if TYPE_CHECKING:
    from spikelint.discovery.project import Project

DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/proc/")
TRAINERS = frozenset(("python", "python3", "torchrun", "accelerate", "deepspeed", "composer", "horovodrun",
                      "mpirun", "srun", "lightning"))
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
_PYTHON = lazy_regex(r"python[\d.]*")
BARE_VARIABLE = lazy_regex(r"\$\{?\w+\}?")


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


def run_view(workload: Workload, document: Document | None, project: Project | None) -> RunView:
    """The :class:`RunView` of a workload (cached on the workload: several checks ask)."""
    cached = workload.paths_cache
    if isinstance(cached, RunView):
        return cached
    view = RunView()
    for container in workload.main_containers():
        _add_container(view, container, workload, document, project)
    view.facts = summarise(view.settings)
    if view.facts.disabled:
        view.uses = [use for use in view.uses if not is_moot(use.setting, view.facts.disabled)]
    workload.paths_cache = view
    return view


def _add_container(view: RunView, container: Container, workload: Workload, document: Document | None,
                   project: Project | None) -> None:
    env_values = {str(env.name.value): str(env.value.value) for env in container.env if env.value is not None}
    for env in container.env:
        setting = env_setting(env.name, env.value)
        if setting is not None:
            _add_setting(view, setting, container, container_cwd(container), env_lookup(container), None, None)
    context = _Context(view, container, document, project, env_values)
    view = context.view
    for invocation in container_invocations(container, document):
        _add_invocation(context, invocation, None, None)
        script = script_file(invocation.words)
        if script is not None:
            _add_script_file(context, invocation, script)
        elif context.project is not None:
            view.settings.extend(code_resumes(invocation.words, context.project, context.document))


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
    flags = flag_settings(invocation.words)
    overridden = frozenset(setting.key for setting in flags)  # ``output_dir=$OUT`` wins over a config's value
    for setting in [*flags, *_short_output_flags(invocation)]:
        if via_path is not None:
            setting = setting._replace(config=via_path)
        if CONFIG_REF in setting.roles and via is None and not _launcher_flag(setting, invocation):
            _add_config(context, setting.where, str(setting.value), setting.key, invocation, overridden)
        _add_setting(view, setting, container, invocation.cwd, lookup, via, invocation)
    if via is None:
        for word in positional_configs(invocation.words):
            _add_config(context, word, str(word.value), ("config",), invocation, overridden)
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
    """The script file a command runs: ``bash run.sh``, ``sh -e ./train.sh``, ``/workspace/launch.sh``, also
    started by a launcher (``srun --mpi=pmix bash run.sh``, ``srun ${EXTRA_ARGS} ./train.sh``)."""
    start = launched_index([str(word.value) for word in words])
    if start is not None:
        inner = list(words[start:])
        while len(inner) > 1 and BARE_VARIABLE.fullmatch(str(inner[0].value)):
            inner = inner[1:]  # a variable of launcher options (``${AUTO_RESUME}``) before the program
        return script_file(inner)
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
                invocation: Invocation, overridden: frozenset[tuple[str, ...]]) -> None:
    """Read a run config the command passes (``--config``, Hydra ``--config-name``, a positional YAML); the keys
    the command line sets itself (``overridden``) are not taken from it."""
    if key in (("config_path",), ("cp",)):
        return  # a Hydra config folder: the --config-name word names the file
    candidates = _config_candidates(reference, key, invocation)
    if not candidates and _runs_tune(invocation.words):
        # ``tune run … --config dev/3B_full``: torchtune's own named config; its checkpointer reads the model from
        # ``checkpoint_dir`` and writes to ``output_dir``, which this reading does not tell apart, so it stays
        # unread, and the rules about settings it may hold say nothing
        context.view.missing_configs.append(where)
        return
    if not candidates and ("$" in reference or "{" in reference):
        context.view.missing_configs.append(where)  # ``--config $1``: settings in a file this reading cannot name
        return
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
            if setting.key not in overridden:
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


def _runs_tune(words: Sequence[Located]) -> bool:
    argv = [str(word.value) for word in words]
    start = launched_index(argv) or 0
    return start < len(argv) and posixpath.basename(argv[start]) == "tune"


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
