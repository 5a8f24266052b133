"""SPK501/SPK502's reading of one simple command: the program it runs, its Python mode, where stdout goes.

Wrappers (``env``, ``nohup``, ``timeout``…), runners (``uv run``, ``conda run``) and launchers
(``srun``, ``mpirun``) are seen through to the program; whether a failure of that program
matters and whether its output is captured are answered here, for the pipeline analysis.
"""

from __future__ import annotations

from spikelint.documents.shell import SimpleCommand
from spikelint.documents.shell import Word
from spikelint.documents.shell import fill_in_blanks
from spikelint.util.lazyre import lazy_regex

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


# --------------------------------------------------------------------------- programs


def base_name(word: str) -> str:
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
        name = base_name(words[index].text)
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
        if PYTHON.fullmatch(base_name(words[index].text)):
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


def split_fd(operator: str) -> tuple[str, str]:
    digits = operator[: len(operator) - len(operator.lstrip("0123456789"))]
    return digits, operator[len(digits):]


def stdout_state(command: SimpleCommand, piped: bool) -> str | None:
    """Where the command's stdout goes: ``pipe``, ``file``, ``null``, ``terminal`` or None (inherited)."""
    state: str | None = "pipe" if piped else None
    blanks = fill_in_blanks(command) if len(command.redirects) > 1 else frozenset()
    for position, redirect in enumerate(command.redirects):
        if position in blanks:
            continue  # ``--model <model name>``: a fill-in blank, not a redirect
        fd, operator = split_fd(redirect.operator)
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
    name = base_name(words[0])
    if name in REPORTERS and len(words) > 1 and words[1] in REPORTERS[name]:
        return False  # `pip freeze | tee requirements.txt`: a listing, not a run
    return name not in TRIVIAL_PRODUCERS


