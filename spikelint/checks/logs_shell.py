"""SPK501 and SPK502: shell pipelines that hide a failure or a Python log.

SPK501 (pipe-without-pipefail) fires where a lost failure matters: a program piped into a log
sink (``tee``, ``logger``, ``ts``, ``cat >> f``, ``sed … > f``) or a download piped into a
shell (``curl … | bash``), while ``pipefail`` is off, and the pipeline's status is what the
script ends with or acts on (``set -e``, a following ``&&`` or ``$?`` test, the last command).
Pipelines in ``$(…)``, in ``if``/``while`` conditions, rescued by ``||``, run in the background
or checked through ``PIPESTATUS`` are left alone, and so are filters whose output nothing acts
on (``| grep -q``, ``| head``).  One finding per script or command string, at the first such
pipeline, naming how many more there are.  Trivial producers on the left (``echo``, ``cat``,
``grep``…) do not count: their failure does not hide a failed run.  Templates (Jinja,
``%(name)s``) are not shell and get neither rule.

SPK502 (buffered-python-log) fires once per ``python``/``python3``/``python3.x`` command
whose stdout goes to a pipe or a file (``| tee``, ``> f``, ``>> f``, ``&> f``, a redirected
or piped ``{ …; }``/``( … )``/loop around it, or an earlier ``exec > f``) without ``-u`` and
without ``PYTHONUNBUFFERED``.  ``torchrun``, ``deepspeed`` and ``python -m
torch.distributed.run`` are not reported: they start their workers with ``python -u``.
``python -c`` one-liners, ``python -m pip``/``venv`` and ``--version`` print no run log.

Both look at launch scripts (and the job scripts their here-documents write), Dockerfile
``RUN``/``CMD``/``ENTRYPOINT`` (shell form, or exec form through ``sh -c``), workload
command/args run through ``sh -c``/``bash -c`` and CI ``run:``/``script:`` steps
(:mod:`spikelint.checks.logs_ci`).
"""

from __future__ import annotations

from typing import Callable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.documents.dockerfile import Dockerfile
from spikelint.documents.dockerfile import Instruction
from spikelint.documents.shell import Pipeline
from spikelint.documents.shell import Script
from spikelint.documents.shell import SimpleCommand
from spikelint.documents.shell import Word
from spikelint.documents.shell import SHELLS
from spikelint.documents.shell import expand
from spikelint.documents.shell import find_shell_call
from spikelint.documents.shell import is_template
from spikelint.documents.shell import parse_shell
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Problem
from spikelint.model import Workload

UNBUFFERED = "PYTHONUNBUFFERED"
PYTHON = lazy_regex(r"python(?:\d+(?:\.\d+)?)?")
# Programs whose failure on the left of a pipe hides nothing worth a finding: they print
# something already known, or filter text.
TRIVIAL_PRODUCERS = frozenset({
    "echo", "printf", "cat", "tac", "true", "false", ":", "yes", "seq", "ls", "date", "pwd", "hostname",
    "whoami", "uname", "id", "env", "printenv", "head", "tail", "grep", "egrep", "fgrep", "sed", "awk",
    "gawk", "mawk", "cut", "sort", "uniq", "tr", "wc", "jq", "yq", "column", "basename", "dirname", "ps",
    "df", "du", "free", "nproc", "which", "type", "command", "rev", "base64", "xxd", "od", "md5sum",
    "sha1sum", "sha256sum", "sha512sum", "shuf", "paste", "fold", "fmt", "nl", "tee", "set", "declare",
    "compgen", "history", "read", "test", "[", "[[", "expr", "getent", "readlink", "realpath", "stat",
    "find", "xargs", "sleep", "nvidia-smi",
})
# programs whose listing subcommands only report what is installed
REPORTERS = {name: frozenset({"freeze", "list", "show", "info", "--version", "-V"})
             for name in ("pip", "pip3", "conda", "mamba", "micromamba")}
# ``NAME [options] program …``: option words of each wrapper that take a value, and how many
# positional words it takes before the program.
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "nohup": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "-t", "--class", "--classdata"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "sudo": (frozenset({"-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "--user", "--group"}), 0),
    "setsid": (frozenset(), 0),
    "taskset": (frozenset(), 1),
    "chrt": (frozenset(), 1),
    "numactl": (frozenset({"-N", "-m", "-C", "-p", "-i", "-P"}), 0),
    "catchsegv": (frozenset(), 0),
    "dumb-init": (frozenset(), 0),
    "tini": (frozenset({"-s", "-p", "-e"}), 0),
    "gosu": (frozenset(), 1),
    "su-exec": (frozenset(), 1),
    "xvfb-run": (frozenset({"-n", "-s", "-f", "-e", "-p", "--server-num", "--server-args"}), 0),
}
RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "conda", "mamba", "micromamba"})
LAUNCHERS = frozenset({"srun", "mpirun", "mpiexec", "horovodrun", "prun", "aprun", "jsrun", "flux"})
QUIET_MODULES = frozenset({"pip", "venv", "ensurepip", "virtualenv", "torch.distributed.run",
                           "torch.distributed.launch", "deepspeed.launcher.runner", "deepspeed.launcher.launch"})
CAPTURED = ("file", "pipe")
DOWNLOADERS = frozenset({"curl", "wget", "aria2c", "fetch"})
LOG_SINKS = frozenset({"tee", "logger", "ts"})
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".md", ".yaml", ".yml", ".toml", ".py", ".sh", ".html", ".xml",
                 ".parquet", ".npy", ".bin", ".pt", ".whl", ".tar", ".gz", ".zip", ".env", ".ini", ".cfg")
CI_FILES = lazy_regex(r"\$\{?GITHUB_(?:STEP_SUMMARY|OUTPUT|ENV|PATH|STATE)\b")  # ``cat`` and ``sed`` count when their stdout goes to a file


class Env(NamedTuple):
    """Where ``PYTHONUNBUFFERED`` comes from outside the script being checked."""

    unbuffered: bool = False


class Context(NamedTuple):
    """How to word and place findings for one kind of input."""

    fix_pipefail: str
    place: Callable[[int, int], tuple[int, int]] = lambda line, column: (line, column)


SCRIPT_CONTEXT = Context("add `set -o pipefail` (bash; `set -euo pipefail` at the top of the script) before it")
DOCKERFILE_CONTEXT = Context('add `SHELL ["/bin/bash", "-o", "pipefail", "-c"]` before this instruction '
                             "(or start the command with `set -o pipefail &&` under bash)")
WORKLOAD_CONTEXT = Context("start the command string with `set -o pipefail;` and run it with bash "
                           '(`command: ["bash", "-c"]`)')


# --------------------------------------------------------------------------- programs


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _skip_options(words: list[Word], start: int, with_value: frozenset[str]) -> int:
    index = start
    while index < len(words):
        text = words[index].text
        if text == "--":
            return index + 1
        if not text.startswith("-") or text == "-":
            return index
        index += 2 if text in with_value else 1
    return index


def program(command: SimpleCommand) -> tuple[int, list[str]] | None:
    """Index of the word that names the program wrappers run (``env X=1 nohup python …``), and the
    ``NAME=value`` words given to ``env`` on the way; None when there is no program word."""
    words = command.words
    index = 0
    env: list[str] = []
    for _ in range(8):
        if index >= len(words):
            return None
        name = _basename(words[index].text)
        if name in WRAPPERS:
            options, positional = WRAPPERS[name]
            index = _skip_options(words, index + 1, options)
            if name == "env":
                while index < len(words) and "=" in words[index].text and not words[index].text.startswith("-"):
                    env.append(words[index].text)
                    index += 1
            index += positional
            continue
        if name in RUNNERS and index + 1 < len(words) and words[index + 1].text == "run":
            found = _first_python(words, index + 2)
            return (found, env) if found is not None else (index, env)
        if name in LAUNCHERS:
            found = _first_python(words, index + 1)
            return (found, env) if found is not None else (index, env)
        return index, env
    return (index, env) if index < len(words) else None


def _first_python(words: list[Word], start: int) -> int | None:
    for index in range(start, len(words)):
        if PYTHON.fullmatch(_basename(words[index].text)):
            return index
    return None


def python_mode(arguments: list[str]) -> tuple[bool, str]:
    """``(unbuffered, what)`` for a python command's arguments: what it runs — ``script``,
    ``module:NAME``, ``command`` (``-c``), ``stdin`` or ``info`` (``--version``/``-h``)."""
    unbuffered = False
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument == "-":
            return unbuffered, "stdin"
        if argument == "--" or not argument.startswith("-"):
            return unbuffered, "script"
        if argument.startswith("--"):
            if argument in ("--version", "--help"):
                return unbuffered, "info"
            index += 2 if argument == "--check-hash-based-pycs" else 1
            continue
        for position, letter in enumerate(argument[1:], start=2):
            if letter == "u":
                unbuffered = True
            elif letter == "m":
                module = argument[position:] or (arguments[index + 1] if index + 1 < len(arguments) else "")
                return unbuffered, f"module:{module}"
            elif letter == "c":
                return unbuffered, "command"
            elif letter in "VhH?":
                return unbuffered, "info"
            elif letter in "WXQ":
                if position >= len(argument):
                    index += 1  # the value is the next word
                break
        index += 1
    return unbuffered, "stdin"


def _fd(operator: str) -> tuple[str, str]:
    digits = operator[: len(operator) - len(operator.lstrip("0123456789"))]
    return digits, operator[len(digits):]


def stdout_state(command: SimpleCommand, piped: bool) -> str | None:
    """Where the command's stdout goes: ``pipe``, ``file``, ``null``, ``terminal`` or None (inherited)."""
    state: str | None = "pipe" if piped else None
    for redirect in command.redirects:
        fd, operator = _fd(redirect.operator)
        if operator.startswith("<"):
            continue
        if redirect.target is None:  # N>&M duplications: only 1>&2 (or >&2) moves stdout
            if fd in ("", "1") and operator.startswith(">&"):
                state = "terminal" if operator[2:] == "2" else state
            continue
        both = operator.startswith("&") or operator == ">&"
        if fd not in ("", "1") and not both:
            continue
        target = redirect.target.text
        if target == "/dev/null":
            state = "null"
        elif target in ("/dev/stderr", "/dev/tty", "/dev/stdout", "/proc/self/fd/2", "/proc/1/fd/1", "/proc/1/fd/2"):
            state = "terminal"
        elif redirect.target.raw.startswith(">("):
            state = "pipe"
        else:
            state = "file"
    return state


def failure_matters(command: SimpleCommand) -> bool:
    """Whether this command failing on the left of a pipe is a failure someone needs to see."""
    if command.compound:
        return any(failure_matters(inner) for pipeline in command.body if not pipeline.nested
                   for inner in pipeline.commands if not inner.compound)
    found = program(command)
    if found is None:
        return False
    words = [word.text for word in command.words[found[0]:]]
    name = _basename(words[0])
    if name in REPORTERS and len(words) > 1 and words[1] in REPORTERS[name]:
        return False  # `pip freeze | tee requirements.txt`: a listing, not a run
    return name not in TRIVIAL_PRODUCERS


# --------------------------------------------------------------------------- analysis


def _before(word: Word, command: SimpleCommand) -> bool:
    return (word.line, word.column) < (command.line, command.column)


def _sets_unbuffered(assignment: str) -> bool:
    name, _, value = assignment.partition("=")
    return name == UNBUFFERED and value != ""


def _script_unbuffered(script: Script, command: SimpleCommand) -> bool:
    return any(word.text != "" and _before(word, command) for word in script.assignments.get(UNBUFFERED, []))


def _command_unbuffered(command: SimpleCommand, env: list[str]) -> bool:
    words = [word.text for word in command.assignments] + env
    return any(_sets_unbuffered(text) for text in words)


def _passes_unbuffered(command: SimpleCommand) -> bool:
    """``runai … -e PYTHONUNBUFFERED=1 -- bash -c '…'``, ``docker run -e …``: set for the inner script."""
    return any(_sets_unbuffered(word.text) for word in command.words) or _command_unbuffered(command, [])


def _pipeline_text(pipeline: Pipeline) -> str:
    return " | ".join(" ".join(command.argv()) for command in pipeline.commands)


def _pipefail_problem(pipeline: Pipeline, context: Context, others: Sequence[Pipeline] = ()) -> Problem:
    first = pipeline.commands[0]
    found = program(first) if not first.compound else None
    word = first.words[found[0]] if found is not None else (first.words[0] if first.words else None)
    line, column = (word.line, word.column) if word is not None else (pipeline.line, pipeline.column)
    line, column = context.place(line, column)
    end_line, end_column = context.place(pipeline.end_line, pipeline.end_column) if pipeline.end_line else (None, None)
    left = ", ".join(dict.fromkeys(_display_name(command) for command in pipeline.commands[:-1]))
    right = _display_name(pipeline.commands[-1])
    more = ""
    if others:
        lines = sorted({context.place(other.line, other.column)[0] for other in others})
        shown = ", ".join(str(number) for number in lines[:5]) + (", …" if len(lines) > 5 else "")
        more = (f" ({len(others)} more pipeline{'s' if len(others) > 1 else ''} like it in this script, "
                f"line{'s' if len(lines) > 1 else ''} {shown})")
    return Problem("SPK501", line, column,
                   f"`{left} | {right}` without pipefail: the pipeline's exit status is {right}'s, so when {left} "
                   f"fails (a crashed or killed run, a failed download) the failure is reported as success{more} — "
                   f"{context.fix_pipefail}",
                   end_line=end_line, end_column=end_column, key=f"pipefail:{_pipeline_text(pipeline)}")


def _display_name(command: SimpleCommand) -> str:
    if command.compound:
        return {"(": "( … )", "{": "{ …; }"}.get(command.compound, f"{command.compound} … ")
    found = program(command)
    if found is None:
        return command.name or "…"
    return _basename(command.words[found[0]].text)


def _buffered_problem(command: SimpleCommand, index: int, state: str, context: Context) -> Problem:
    word = command.words[index]
    line, column = context.place(word.line, word.column)
    end_line, end_column = context.place(word.end_line, word.end_column)
    where = "into a pipe" if state == "pipe" else "into a file"
    return Problem("SPK502", line, column,
                   f"`{word.text}` writes its output {where} block-buffered: the log lags behind the run and its last "
                   f"lines are lost when the pod is killed or preempted — run `{word.text} -u …` or set "
                   f"PYTHONUNBUFFERED=1",
                   end_line=end_line, end_column=end_column,
                   key=f"buffered:{' '.join(command.argv())}")


def _writes_data(command: SimpleCommand, script: Script) -> bool:
    """Stdout goes to a data or report file (by its name), which is read when the program is done."""
    targets = [redirect.target for redirect in command.redirects if redirect.target is not None
               and _fd(redirect.operator)[0] in ("", "1") and _fd(redirect.operator)[1] in (">", ">>", ">|")]
    if not targets:
        return False
    text = targets[-1].text
    expanded = expand(text, script.variables()) or text
    name = _basename(expanded).lower()
    return name.endswith(DATA_SUFFIXES) or bool(CI_FILES.search(text))


def _inherited_states(script: Script) -> dict[int, str]:
    """Pipelines inside a redirected or piped compound command, or in a function whose call is
    redirected or piped (``main "$@" 2>&1 | tee log``): the stdout they inherit."""
    inherited: dict[int, str] = {}
    for pipeline in script.pipelines:
        last = len(pipeline.commands) - 1
        for position, command in enumerate(pipeline.commands):
            if command.compound:
                body = command.body
            elif command.name in script.functions:
                body = script.functions[command.name]
            else:
                continue
            state = stdout_state(command, position < last) or inherited.get(id(pipeline))
            if state is None:
                continue
            for inner in body:
                if inner.nested:
                    continue
                if command.compound:
                    inherited[id(inner)] = state  # compounds come outermost first: the innermost wins
                else:
                    inherited.setdefault(id(inner), state)  # a redirect inside the function wins over the call's
    return inherited


def _sink(command: SimpleCommand) -> str:
    """``log`` when the command writes what it reads to a log, ``shell`` when it runs it, else ``""``."""
    if command.compound:
        return ""
    found = program(command)
    if found is None:
        return ""
    index = found[0]
    name = _basename(command.words[index].text)
    arguments = [word.text for word in command.words[index + 1:]]
    if name in SHELLS:
        call = find_shell_call([name] + arguments)
        reads_file = call is not None and call.script_index is None and any(
            not argument.startswith(("-", "+")) for argument in arguments)
        return "" if call is None or call.script_index is not None or (reads_file and "-s" not in arguments) \
            else "shell"
    state = stdout_state(command, False)
    if name == "tee":
        files = [argument for argument in arguments if not argument.startswith("-")]
        if state == "null" or not files or all(path.startswith("/dev/") for path in files):
            return ""  # `… | sudo tee /etc/apt/keyrings/x.gpg > /dev/null` writes a file, not a log
        return "log"
    if name in LOG_SINKS:
        return "log"
    if name == "cat" and state == "file" and all(argument == "-" for argument in arguments):
        return "log"
    if name == "sed" and state == "file" and not any(argument.startswith(("-i", "--in-place")) for argument in arguments):
        return "log"
    return ""


def _is_download(command: SimpleCommand) -> bool:
    found = program(command) if not command.compound else None
    return found is not None and _basename(command.words[found[0]].text) in DOWNLOADERS


def loses_failure(pipeline: Pipeline) -> bool:
    """A program piped into a log sink, or a download piped into a shell, without pipefail."""
    commands = pipeline.commands
    if len(commands) < 2 or pipeline.pipefail:
        return False
    for position in range(1, len(commands)):
        kind = _sink(commands[position])
        if kind == "log" and any(failure_matters(command) for command in commands[:position]):
            return True
        if kind == "shell" and any(_is_download(command) for command in commands[:position]):
            return True
    return False


def _status_read(pipeline: Pipeline, following: Pipeline | None) -> str:
    """``PIPESTATUS`` or ``$?`` when the next command reads the pipeline's status, else ``""``."""
    if following is None:
        return ""
    raw = " ".join(word.raw for command in following.commands for word in command.assignments + command.words)
    if "PIPESTATUS" in raw:
        return "PIPESTATUS"
    return "$?" if "$?" in raw or "${?}" in raw else ""


def status_matters(pipeline: Pipeline, following: Pipeline | None, exits_with: bool) -> bool:
    """Whether the pipeline's status is acted on or is what the script ends with.

    ``exits_with`` tells whether the script's own exit status matters (it does for a launch
    script, a container command, a ``RUN`` or a CI step; for a ``bash -c`` inside a script
    only when that command's status matters in turn).
    """
    if pipeline.nested or pipeline.tested or pipeline.rescued or pipeline.background:
        return False
    read = _status_read(pipeline, following)
    if read == "PIPESTATUS":
        return False
    return pipeline.errexit or pipeline.next_op == "&&" or read == "$?" or (pipeline.last and exits_with)


def pipefail_findings(script: Script, exits_with: bool = True) -> list[Pipeline]:
    """The pipelines of a script (and of the ``bash -c`` scripts inside it) that lose a failure that matters."""
    found: list[Pipeline] = []
    pipelines = script.pipelines
    for index, pipeline in enumerate(pipelines):
        following = next((p for p in pipelines[index + 1:index + 8] if not p.nested), None)
        matters = status_matters(pipeline, following, exits_with)
        if matters and loses_failure(pipeline):
            found.append(pipeline)
        for command in pipeline.commands:
            if command.inner is not None and not command.compound:
                found.extend(pipefail_findings(command.inner, matters and len(pipeline.commands) == 1))
    return found


def check_script(script: Script, env: Env, context: Context, exits_with: bool = True) -> Iterator[Problem]:
    """SPK501 (once per script) and SPK502 for a script, its ``bash -c`` scripts and the job scripts it writes."""
    lost = pipefail_findings(script, exits_with)
    if lost:
        yield _pipefail_problem(lost[0], context, lost[1:])
    yield from buffered_logs(script, env, context)
    for command in script.commands():
        if command.written is not None:
            yield from check_script(command.written, Env(env.unbuffered or _script_unbuffered(script, command)),
                                    context)


def buffered_logs(script: Script, env: Env, context: Context) -> Iterator[Problem]:
    """SPK502 for a script and the ``bash -c`` scripts inside it."""
    inherited = _inherited_states(script)
    exec_state: str | None = None
    for pipeline in script.pipelines:
        commands = pipeline.commands
        last = len(commands) - 1
        for position, command in enumerate(commands):
            if command.compound:
                continue
            if command.inner is not None:
                inner_env = Env(env.unbuffered or _script_unbuffered(script, command) or _passes_unbuffered(command))
                yield from buffered_logs(command.inner, inner_env, context)
            if command.name == "exec" and len(command.words) == 1:  # `exec > log 2>&1`: the rest of the script
                if not pipeline.nested:
                    exec_state = stdout_state(command, False) or exec_state
                continue
            found = program(command)
            if found is None:
                continue
            index, wrapper_env = found
            if not PYTHON.fullmatch(_basename(command.words[index].text)):
                continue
            if pipeline.nested in ("$(", "`") and stdout_state(command, False) != "file":
                continue  # output captured into a variable is not a log
            state = stdout_state(command, position < last) or inherited.get(id(pipeline))
            if state is None and not pipeline.nested:
                state = exec_state
            if state not in CAPTURED:
                continue
            if state == "pipe" and position < last and not any(_sink(c) == "log" for c in commands[position + 1:]):
                continue  # `python gen.py | sh`, `python list.py | jq …`: output read by a program, not a log
            if state == "file" and _writes_data(command, script):
                continue  # `python prepare.py > dataset.json`, `>> $GITHUB_STEP_SUMMARY`: a result, not a log
            unbuffered, what = python_mode([word.text for word in command.words[index + 1:]])
            if unbuffered or what in ("command", "info") or what.partition(":")[2] in QUIET_MODULES:
                continue
            if env.unbuffered or _command_unbuffered(command, wrapper_env) or _script_unbuffered(script, command):
                continue
            yield _buffered_problem(command, index, state, context)


# --------------------------------------------------------------------------- launch scripts


@check("SPK501", "SPK502", kinds=(FileKind.SHELL,))
def shell_script_logs(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Pipes without pipefail and buffered Python logs in a launch script."""
    script = document.parsed
    if not isinstance(script, Script) or is_template(document.text):
        return
    yield from check_script(script, Env(), SCRIPT_CONTEXT)


# --------------------------------------------------------------------------- Dockerfiles


def _stage_unbuffered(dockerfile: Dockerfile) -> tuple[dict[int, bool], dict[int, bool]]:
    """Per RUN: PYTHONUNBUFFERED set by an earlier ENV or ARG of its stage (or an ENV of the stage it
    builds on); per stage: set by an ENV anywhere in it (the image config CMD/ENTRYPOINT run with —
    an ARG is gone by then)."""
    before: dict[int, bool] = {}
    image: dict[int, bool] = {}  # ENV: kept in the image, inherited by stages built on it
    build: dict[int, bool] = {}  # ENV or ARG: what the next RUN sees
    for instruction in dockerfile.instructions:
        stage = instruction.stage
        if instruction.keyword == "FROM" and 0 <= stage < len(dockerfile.stages):
            parent = dockerfile.stage_named(dockerfile.stages[stage].base, before=stage)
            image[stage] = image.get(parent.index, False) if parent is not None else False
            build[stage] = image[stage]
        before[id(instruction)] = build.get(stage, False)
        if instruction.keyword in ("ENV", "ARG") and stage >= 0:
            for name, value in instruction.pairs:
                if name.value == UNBUFFERED:
                    is_set = value is not None and value.value != ""
                    if instruction.keyword == "ENV":
                        image[stage] = build[stage] = is_set
                    else:  # an ARG never overrides an ENV of the same name
                        build[stage] = build.get(stage, False) or image.get(stage, False) or is_set
    return before, image


@check("SPK501", "SPK502", kinds=(FileKind.DOCKERFILE,))
def dockerfile_logs(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Pipes without pipefail and buffered Python output in RUN/CMD/ENTRYPOINT commands."""
    dockerfile = document.parsed
    if not isinstance(dockerfile, Dockerfile):
        return
    before, stage_set = _stage_unbuffered(dockerfile)
    for instruction in dockerfile.instructions:
        if instruction.script is None or instruction.keyword not in ("RUN", "CMD", "ENTRYPOINT"):
            continue
        unbuffered = _instruction_unbuffered(instruction, before, stage_set)
        yield from check_script(instruction.script, Env(unbuffered), DOCKERFILE_CONTEXT)


def _instruction_unbuffered(instruction: Instruction, before: dict[int, bool], stage_set: dict[int, bool]) -> bool:
    if instruction.keyword == "RUN":
        return before.get(id(instruction), False)
    return stage_set.get(instruction.stage, False)  # the image's config, whatever the order


# --------------------------------------------------------------------------- workloads


def _container_unbuffered(container: Container) -> bool:
    for variable in container.env:
        if variable.name.value != UNBUFFERED:
            continue
        if variable.reference is not None or (variable.value is not None and str(variable.value.value) != ""):
            return True
    return False


def _source_char(document: Document, line: int, column: int) -> str:
    lines = document.lines
    if 0 < line <= len(lines) and 0 < column <= len(lines[line - 1]):
        return lines[line - 1][column - 1]
    return ""


def _parse_located(text: str, where: Located, document: Document, pipefail: bool, errexit: bool) -> tuple[Script, Context]:
    """Parse a ``-c`` string held in a YAML/JSON value, mapping positions into the document."""
    quoted = _source_char(document, where.line, where.column) in ("'", '"')
    if document.kind == FileKind.JSON or quoted:
        first_line = where.line
        last_line = where.end_line or where.line

        def place(line: int, column: int) -> tuple[int, int]:
            """Lines of an escaped multi-line string all sit on the string's own line(s)."""
            if line > last_line or line < first_line:
                return (last_line if line > last_line else first_line), where.column
            return line, column

        script = parse_shell(text, where.line, where.column + (1 if quoted else 0), pipefail=pipefail, errexit=errexit)
        return script, WORKLOAD_CONTEXT._replace(place=place)
    if "\n" in text:  # a block scalar: every line is indented like the first
        script = parse_shell(text, where.line, where.column, indent=where.column - 1, pipefail=pipefail,
                             errexit=errexit)
        return script, WORKLOAD_CONTEXT
    return parse_shell(text, where.line, where.column, pipefail=pipefail, errexit=errexit), WORKLOAD_CONTEXT


@check("SPK501", "SPK502", scope="workload")
def workload_command_logs(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Container command/args that run a ``sh -c``/``bash -c`` string with a pipe or a redirect."""
    if document.kind not in (FileKind.YAML, FileKind.JSON):
        return  # a runai command in a launch script is checked with the script itself
    seen: set[tuple[int, int]] = set()
    for container in workload.containers:
        argv = [where for where in container.command + container.args if isinstance(where.value, str)]
        call = find_shell_call([str(where.value) for where in argv])
        if call is None or call.script_index is None:
            continue
        where = argv[call.script_index]
        if (where.line, where.column) in seen:
            continue  # one pod template shared by several replica groups
        seen.add((where.line, where.column))
        script, context = _parse_located(str(where.value), where, document, call.pipefail, call.errexit)
        yield from check_script(script, Env(_container_unbuffered(container)), context)


# --------------------------------------------------------------------------- CI steps


GITHUB_CONTEXT = Context("set `shell: bash` on the step (GitHub then runs it with `bash -eo pipefail`) or start the "
                         "script with `set -o pipefail`")
GITLAB_CONTEXT = Context("start the script with `set -o pipefail` (the runner's shell lacks it)")


@check("SPK501", "SPK502", kinds=(FileKind.YAML,))
def ci_step_logs(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """GitHub Actions ``run:`` steps and GitLab CI ``script:`` lines, read with their runner's shell options."""
    from spikelint.documents.ci import ci_scripts

    for step in ci_scripts(document):
        context = GITHUB_CONTEXT if step.system == "github" else GITLAB_CONTEXT
        yield from check_script(step.script, Env(bool(step.env.get(UNBUFFERED))), context)
