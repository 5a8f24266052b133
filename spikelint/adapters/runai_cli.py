"""``runai … submit`` commands in launch scripts -> workloads.

Covers the v1 CLI (``runai submit``, ``runai submit-dist pytorch``), the v2 CLI (``runai
training submit``, ``runai workspace submit``, ``runai distributed submit``, ``runai training
pytorch submit``) and v2.2x (``runai training standard submit`` / ``… distributed submit``).
Variables assigned earlier in the script are expanded where the whole value is known; a
word that is exactly one variable points at the assignment, where the value is written.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass
from dataclasses import field
from typing import Callable

from spikelint.adapters.common import as_int
from spikelint.adapters.common import disable_suppressions
from spikelint.adapters.common import parse_duration
from spikelint.adapters.common import preemptible_priority
from spikelint.adapters.common import to_number
from spikelint.config import Config
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Volume
from spikelint.model import Workload

# noun words before ``submit`` -> workload class (the last noun that names one wins)
NOUN_CLASSES = {
    "training": "training", "train": "training", "standard": "training",
    "workspace": "workspace", "interactive": "workspace",
    "distributed": "distributed", "pytorch": "distributed", "tensorflow": "distributed", "tf": "distributed",
    "mpi": "distributed", "xgboost": "distributed", "jax": "distributed",
    "inference": "inference",
}
# workload class -> (training, preemptible by default, default retries)
CLASSES: dict[str, tuple[bool, bool, int]] = {
    "training": (True, True, 6),
    "distributed": (True, True, 6),
    "workspace": (False, False, 0),
    "inference": (False, False, 0),
}
WRAPPERS = frozenset(("exec", "time", "nohup", "command", "sudo", "env", "eval"))
VARIABLE = lazy_regex(r"\$(?:\{(\w+)(?:(:?[-=+?])([^}]*))?\}|(\w+))")
ARITHMETIC = lazy_regex(r"\$\(\((.*)\)\)", re.DOTALL)
NAME_IN_EXPRESSION = lazy_regex(r"\$?\{?([A-Za-z_]\w*)\}?")
ARITHMETIC_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.floordiv,
                        "%": operator.mod}
SECRET_PREFIX = "SECRET:"
ENV_NAME = lazy_regex(r"^[A-Za-z_][A-Za-z0-9_.-]*$")

# flags that take no value; every other flag takes one (``--flag value`` or ``--flag=value``)
BOOLEAN_FLAGS = frozenset((
    "--interactive", "--jupyter", "--preemptible", "--non-preemptible", "--large-shm", "--no-master",
    "--attach", "-t", "--tty", "--stdin", "--allow-privilege-escalation", "--host-ipc", "--host-network",
    "--run-as-user", "--run-as-non-root", "--privileged", "--create-home-dir", "--always-pull-image",
    "--local-image", "--dry-run", "--prevent-privilege-escalation", "--elastic", "--ttl", "--completions-auto",
    "--master-no-pvcs", "--no-pvcs", "--x11", "--service-type-nodeport", "--use-default-gpu-sharing",
    "--disable-sigterm", "--master-large-shm",
))


@dataclass(frozen=True)
class Value:
    """A flag's value after variable expansion, and where it is written."""

    text: str
    where: Located
    offset_known: bool = True  # False when expansion changed the text, so sub-offsets are estimates

    def part(self, start: int, end: int) -> Located:
        """Where ``text[start:end]`` is written (estimated after an expansion)."""
        piece = self.text[start:end]
        if not self.offset_known or self.where.line != self.where.end_line:
            return Located(piece, self.where.line, self.where.column, self.where.end_line, self.where.end_column)
        return Located(piece, self.where.line, self.where.column + start, self.where.line,
                       self.where.column + end)


@dataclass
class Submit:
    """What the flags of one ``runai … submit`` said."""

    klass: str
    anchor: Located
    name: Located | None = None
    image: Located | None = None
    gpus: Located | None = None
    portion: Located | None = None
    master_gpus: Located | None = None
    env: list[EnvVar] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)
    working_dir: Located | None = None
    preemptible: bool | None = None
    priority: Located | None = None
    retries: Located | None = None
    grace: Located | None = None
    ttl: Located | None = None
    workers: Located | None = None
    parallelism: Located | None = None
    no_master: bool = False
    labels: dict[str, Located] = field(default_factory=dict)
    annotations: dict[str, Located] = field(default_factory=dict)
    annotation_keys: dict[str, Located] = field(default_factory=dict)
    replace_command: bool = False
    words: list[Located] = field(default_factory=list)  # after ``--``
    legacy_command: list[Located] = field(default_factory=list)
    legacy_args: list[Located] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- words and variables


def word_located(word: object) -> Located:
    return Located(getattr(word, "text", ""), getattr(word, "line", 1), getattr(word, "column", 1),
                   getattr(word, "end_line", None), getattr(word, "end_column", None))


def word_end_line(word: object, default: int) -> int:
    """The line a word ends on (its start line when the end is unknown)."""
    end = getattr(word, "end_line", None) or getattr(word, "line", default)
    return end if isinstance(end, int) else default


def raw_offset(word: object) -> int:
    """1 when the word's text starts after an opening quote in the source."""
    raw = str(getattr(word, "raw", ""))
    text = str(getattr(word, "text", ""))
    if raw == text or not raw:
        return 0
    return 1 if raw[:1] in "'\"" and raw[1:1 + len(text)] == text else 0


class Expander:
    """Expands ``$NAME``/``${NAME}`` from the script's earlier assignments."""

    def __init__(self, assignments: dict[str, list[object]], before: tuple[int, int]) -> None:
        self.assignments = assignments
        self.before = before  # only assignments written before this (line, column) apply

    def assignment(self, name: str) -> tuple[str, Located] | None:
        words = [word for word in self.assignments.get(name, [])
                 if (getattr(word, "line", 0), getattr(word, "column", 0)) < self.before]
        if not words:
            return None
        word = words[-1]
        text = str(getattr(word, "text", ""))
        where = word_located(word)
        prefix = f"{name}="
        if text.startswith(prefix):
            text = text[len(prefix):]
            where = where._replace(column=where.column + len(prefix))
        where = where._replace(value=text, column=where.column + raw_offset(word))
        return text, where

    def value(self, word: object) -> Value:
        text = str(getattr(word, "text", ""))
        where = word_located(word)
        shifted = where._replace(column=where.column + raw_offset(word))
        if "$" not in text:
            return Value(text, shifted)
        whole = VARIABLE.fullmatch(text)
        if whole is not None:
            found = self.assignment(whole.group(1) or whole.group(4))
            if found is not None and "$" not in found[0]:
                return Value(found[0], found[1])
            return Value(text, shifted)
        if text.startswith("$((") and text.endswith("))"):
            computed = self.arithmetic(text)
            return Value(computed, shifted._replace(value=computed), offset_known=computed == text)
        expanded = VARIABLE.sub(self._substitute, text)
        return Value(expanded, shifted._replace(value=expanded), offset_known=expanded == text)

    def arithmetic(self, text: str) -> str:
        """``$((NODES - 1))`` with known integer variables -> ``3``; anything else unchanged."""
        match = ARITHMETIC.fullmatch(text.strip())
        if match is None:
            return text
        expression = NAME_IN_EXPRESSION.sub(lambda name: self._integer(name.group(1)), match.group(1))
        value = evaluate(expression)
        return str(value) if value is not None else text

    def _integer(self, name: str) -> str:
        found = self.assignment(name)
        if found is None:
            return name
        inner = self.arithmetic(found[0]) if "$((" in found[0] else found[0]
        return inner if inner.strip().lstrip("-").isdigit() else name

    def _substitute(self, match: re.Match[str]) -> str:
        found = self.assignment(match.group(1) or match.group(4))
        if found is None or "$" in found[0]:
            return match.group(0)
        return found[0]


def evaluate(expression: str) -> int | None:
    """Integer shell arithmetic of literals with ``+ - * / %`` and parentheses; ``None`` otherwise."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    symbols = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/", ast.Mod: "%"}

    def value(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return -inner if inner is not None else None
        if isinstance(node, ast.BinOp) and type(node.op) in symbols:
            left, right = value(node.left), value(node.right)
            if left is None or right is None or (symbols[type(node.op)] in "/%" and right == 0):
                return None
            if abs(left) > 10**9 or abs(right) > 10**9:
                return None
            return int(ARITHMETIC_OPERATORS[symbols[type(node.op)]](left, right))
        return None

    return value(tree.body)


# --------------------------------------------------------------------------- key=value lists


def key_values(value: Value) -> dict[str, Located]:
    """``claimname=c,path=/ckpt,ro`` -> ``{claimname: …, path: …, ro: …}`` (keys lowercased)."""
    parts: dict[str, Located] = {}
    position = 0
    for piece in value.text.split(","):
        start = position
        position += len(piece) + 1
        if "=" in piece:
            key, _, _ = piece.partition("=")
            begin = start + len(key) + 1
            parts[key.strip().lower()] = value.part(begin, start + len(piece))
        elif piece.strip():
            parts[piece.strip().lower()] = value.part(start, start + len(piece))
    return parts


def env_pair(value: Value) -> tuple[Located, Located] | None:
    """``NAME=value`` -> (name, value) located; ``None`` when there is no ``=``."""
    name, equals, rest = value.text.partition("=")
    if not equals or not ENV_NAME.match(name):
        return None
    return value.part(0, len(name)), value.part(len(name) + 1, len(value.text))


# --------------------------------------------------------------------------- flag handlers


def _image(submit: Submit, value: Value) -> None:
    submit.image = value.where._replace(value=value.text)


def _gpus(submit: Submit, value: Value) -> None:
    number = to_number(value.text)
    if number is not None:
        submit.gpus = value.where._replace(value=as_int(number))


def _portion(submit: Submit, value: Value) -> None:
    number = to_number(value.text)
    if number is not None:
        submit.portion = value.where._replace(value=as_int(number))


def _master_gpus(submit: Submit, value: Value) -> None:
    number = to_number(value.text)
    if number is not None:
        submit.master_gpus = value.where._replace(value=as_int(number))


def _env(submit: Submit, value: Value) -> None:
    pair = env_pair(value)
    if pair is None:
        submit.unresolved.append(f"environment asset {value.text!r}")
        return
    name, literal = pair
    if str(literal.value).startswith(SECRET_PREFIX):
        submit.env.append(EnvVar(name, None, "runai-secret"))
    else:
        submit.env.append(EnvVar(name, literal if literal.value != "" else None))


def _env_reference(reference: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        pair = env_pair(value)
        if pair is not None:
            submit.env.append(EnvVar(pair[0], None, reference))
            return
        parts = key_values(value)
        if "name" in parts:
            submit.env.append(EnvVar(parts["name"], None, reference))
    return handle


def _mount(submit: Submit, path: Located | None, source: str, persistent: bool, location: Located,
           claim: str | None = None, read_only: bool = False) -> None:
    if path is None or not str(path.value):
        return
    submit.mounts.append(Mount(path, Volume(claim or str(path.value), source, persistent, location, claim), read_only))


def _legacy_pvc(submit: Submit, value: Value) -> None:
    """v1 ``--pvc NAME:/mnt[:ro]`` / ``[SC]:SIZE:/mnt[:ro]``, or the key=value form."""
    if "=" in value.text:
        _existing_pvc(submit, value)
        return
    pieces = value.text.split(":")
    offset = 0
    path = None
    for piece in pieces:
        if piece.startswith("/") and path is None:
            path = value.part(offset, offset + len(piece))
        offset += len(piece) + 1
    read_only = pieces[-1].lower() == "ro"
    claim = pieces[0] if len(pieces) == 2 or (len(pieces) == 3 and read_only) else None
    _mount(submit, path, "pvc", True, value.where, claim or None, read_only)


def _existing_pvc(submit: Submit, value: Value) -> None:
    parts = key_values(value)
    path = parts.get("path") or parts.get("mount") or parts.get("mountpath")
    ephemeral = "ephemeral" in parts
    claim = parts.get("claimname") or parts.get("name")
    _mount(submit, path, "ephemeral-pvc" if ephemeral else "pvc", not ephemeral, value.where,
           str(claim.value) if claim else None, "ro" in parts or "readonly" in parts)


def _volume(submit: Submit, value: Value) -> None:
    """v1 ``-v SRC:DST[:ro][:nfs-host]``: a host (or NFS) directory."""
    pieces = value.text.split(":")
    if len(pieces) < 2:
        return
    start = len(pieces[0]) + 1
    path = value.part(start, start + len(pieces[1]))
    nfs = len(pieces) >= 4 or (len(pieces) == 3 and pieces[2].lower() not in ("ro", "rw"))
    _mount(submit, path, "nfs" if nfs else "hostPath", nfs, value.where, pieces[0],
           len(pieces) > 2 and pieces[2].lower() == "ro")


def _keyed(source: str, persistent: bool, path_keys: tuple[str, ...], claim_keys: tuple[str, ...] = ()
           ) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        parts = key_values(value)
        path = next((parts[key] for key in path_keys if key in parts), None)
        claim = next((str(parts[key].value) for key in claim_keys if key in parts), None)
        read_only = source in ("configMap", "secret") or "ro" in parts or "readonly" in parts
        _mount(submit, path, source, persistent, value.where, claim, read_only)
    return handle


def _working_dir(submit: Submit, value: Value) -> None:
    submit.working_dir = value.where._replace(value=value.text)


def _preemptibility(submit: Submit, value: Value) -> None:
    lowered = value.text.strip().lower()
    if lowered in ("preemptible", "non-preemptible"):
        submit.preemptible = lowered == "preemptible"


def _priority(submit: Submit, value: Value) -> None:
    submit.priority = value.where._replace(value=value.text)


def _converted(attribute: str, convert: Callable[[str], float | None]) -> Callable[[Submit, Value], None]:
    """Sets ``attribute`` to the converted value of the flag; a value that does not convert is ignored."""
    def handle(submit: Submit, value: Value) -> None:
        number = convert(value.text)
        if number is not None:
            setattr(submit, attribute, value.where._replace(value=as_int(number)))
    return handle


def _number(attribute: str) -> Callable[[Submit, Value], None]:
    return _converted(attribute, to_number)


def _workers(submit: Submit, value: Value) -> None:
    """``--workers N``; a count that cannot be resolved still means at least one worker."""
    number = to_number(value.text)
    submit.workers = value.where._replace(value=as_int(number) if number is not None else 1)


def _duration(attribute: str) -> Callable[[Submit, Value], None]:
    return _converted(attribute, parse_duration)


def _grace(submit: Submit, value: Value) -> None:
    """``--termination-grace-period``: a duration; 0 means the Kubernetes default (30s)."""
    seconds = parse_duration(value.text)
    if seconds:
        submit.grace = value.where._replace(value=as_int(seconds))


def _pairs(attribute: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        target: dict[str, Located] = getattr(submit, attribute)
        position = 0
        for piece in value.text.split(","):
            start = position
            position += len(piece) + 1
            key, equals, _ = piece.partition("=")
            if not key.strip():
                continue
            target[key.strip()] = (value.part(start + len(key) + 1, start + len(piece)) if equals
                                   else value.part(start, start + len(piece))._replace(value=""))
            if attribute == "annotations":
                submit.annotation_keys[key.strip()] = value.part(start, start + len(key))
    return handle


def _name(submit: Submit, value: Value) -> None:
    submit.name = value.where._replace(value=value.text)


def _legacy_words(attribute: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        getattr(submit, attribute).append(value.where._replace(value=value.text))
    return handle


def _unresolved(kind: str) -> Callable[[Submit, Value], None]:
    def handle(submit: Submit, value: Value) -> None:
        submit.unresolved.append(f"{kind} {value.text!r}")
    return handle


def _ignore(submit: Submit, value: Value) -> None:
    return None


def _set(attribute: str, value: object) -> Callable[[Submit], None]:
    def handle(submit: Submit) -> None:
        setattr(submit, attribute, value)
    return handle


# flags without a value that say something about the workload
SWITCHES: dict[str, Callable[[Submit], None]] = {
    "--preemptible": _set("preemptible", True),
    "--non-preemptible": _set("preemptible", False),
    "--no-master": _set("no_master", True),
    "--interactive": lambda submit: None,
    "--jupyter": lambda submit: None,
}
COMMAND_FLAGS = ("--command", "-c")

FLAG_HANDLERS: dict[str, Callable[[Submit, Value], None]] = {
    "-i": _image, "--image": _image,
    "-g": _gpus, "--gpu": _gpus, "--gpus": _gpus, "--gpu-devices-request": _gpus,
    "--gpu-portion-request": _portion,
    "--master-gpu-devices-request": _master_gpus, "--master-gpu": _master_gpus,
    "-e": _env, "--environment": _env, "--environment-variable": _env, "--env": _env,
    "--worker-environment": _env, "--master-environment": _env,
    "--env-secret": _env_reference("runai-secret"),
    "--env-my-credentials": _env_reference("userCredential"),
    "--env-pod-field-ref": _env_reference("fieldRef"),
    "--pvc": _legacy_pvc,
    "--pvc-exists": _existing_pvc, "--existing-pvc": _existing_pvc,
    "--pvc-new": _existing_pvc, "--new-pvc": _existing_pvc,
    "-v": _volume, "--volume": _volume,
    "--host-path": _keyed("hostPath", False, ("mount", "mountpath", "mount-path"), ("path",)),
    "--nfs": _keyed("nfs", True, ("mountpath", "mount", "mount-path"), ("server",)),
    "--s3": _keyed("s3", True, ("path", "mount", "mountpath"), ("bucket", "name")),
    "--git-sync": _keyed("git", False, ("path", "target", "mount"), ("repository", "source", "name")),
    "--datasource": _keyed("datasource", True, ("path", "mount", "mountpath"), ("name",)),
    "--empty-dir-volume": _keyed("emptyDir", False, ("path", "mount", "mountpath"), ("name",)),
    "--secret-volume": _keyed("secret", False, ("path", "mount", "mountpath"), ("name",)),
    "--configmap-map-volume": _keyed("configMap", False, ("path", "mount", "mountpath"), ("name",)),
    "--configmap-volume": _keyed("configMap", False, ("path", "mount", "mountpath"), ("name",)),
    "--working-dir": _working_dir,
    "--preemptibility": _preemptibility,
    "--priority": _priority, "--priority-class": _priority, "--priority-class-name": _priority,
    "--backoff-limit": _number("retries"), "--backoffLimit": _number("retries"), "--backofflimit": _number("retries"),
    "--termination-grace-period": _grace,
    "--ttl-after-finish": _duration("ttl"), "--auto-deletion-time-after-completion": _duration("ttl"),
    "--workers": _workers, "--num-workers": _workers,
    "--parallelism": _number("parallelism"),
    "--label": _pairs("labels"), "--labels": _pairs("labels"),
    "--annotation": _pairs("annotations"), "--annotations": _pairs("annotations"),
    "--name": _name, "--job-name-prefix": _name, "--name-prefix": _name,
    "--args": _legacy_words("legacy_args"),
    "--template": _unresolved("template"), "--compute": _unresolved("compute asset"),
}
VALUE_IGNORED = ("-p", "--project", "-f", "--framework")


# --------------------------------------------------------------------------- finding submits


def submit_class(words: list[object]) -> tuple[str, int] | None:
    """``runai [nouns…] submit`` -> (workload class, index of the first word after it)."""
    nouns: list[str] = []
    for index, word in enumerate(words[1:6], start=1):
        text = word_text(word)
        if text.startswith("-"):
            return None
        if text == "submit-mpi":
            return "distributed", index + 1
        if text == "submit-dist":  # v1: `runai submit-dist pytorch …`
            framework = word_text(words[index + 1]) if index + 1 < len(words) else "-"
            return "distributed", index + (1 if framework.startswith("-") else 2)
        if text == "submit":
            if nouns and nouns[0] == "workload":
                return None  # `runai workload submit --file m.yaml`: the manifest is linted itself
            classes = [NOUN_CLASSES[noun] for noun in nouns if noun in NOUN_CLASSES]
            if "distributed" in classes:
                return "distributed", index + 1
            return (classes[0] if classes else "training"), index + 1
        nouns.append(text.lower())
    return None


def runai_start(words: list[object]) -> int | None:
    """Index of the ``runai`` word, past wrappers such as ``exec`` or ``time``."""
    for index, word in enumerate(words[:4]):
        text = str(getattr(word, "text", ""))
        if text.rsplit("/", 1)[-1] == "runai":
            return index
        if text not in WRAPPERS and not re.match(r"^\w+=", text):
            return None
    return None


def parse_submit(words: list[object], expander: Expander) -> Submit | None:
    start = runai_start(words)
    if start is None:
        return None
    words = words[start:]
    found = submit_class(words)
    if found is None:
        return None
    klass, index = found
    submit = Submit(klass, word_located(words[0])._replace(value="runai"))
    interactive = False
    while index < len(words):
        text = word_text(words[index])
        if text == "--":
            submit.words = [expander.value(word).where for word in words[index + 1:]]
            break
        if not text.startswith("-") or text == "-":
            if submit.name is None:
                submit.name = expander.value(words[index]).where
            index += 1
            continue
        flag, equals, _ = text.partition("=")
        following = word_text(words[index + 1]) if index + 1 < len(words) else None
        if flag in SWITCHES:
            SWITCHES[flag](submit)
            interactive = interactive or flag in ("--interactive", "--jupyter")
        if flag in COMMAND_FLAGS and not equals and (following is None or following.startswith("-")):
            submit.replace_command = True  # v2: the words after `--` replace the entrypoint
            index += 1
            continue
        if flag in BOOLEAN_FLAGS or flag in SWITCHES:
            index += 1
            continue
        known = flag in FLAG_HANDLERS or flag in VALUE_IGNORED or flag in COMMAND_FLAGS
        if equals:
            value = inline_value(words[index], flag, expander)
            index += 1
        elif following is not None and following != "--" and (known or not following.startswith("-")):
            value = expander.value(words[index + 1])
            index += 2
        else:
            index += 1  # an unknown switch
            continue
        if flag in COMMAND_FLAGS:
            submit.legacy_command.append(value.where)  # very old CLIs: --command CMD --args ARG
            continue
        FLAG_HANDLERS.get(flag, _ignore)(submit, value)
    if interactive and klass == "training":
        submit.klass = "workspace"
    return submit


def word_text(word: object) -> str:
    return str(getattr(word, "text", ""))


def inline_value(word: object, flag: str, expander: Expander) -> Value:
    """The value of ``--flag=value`` written in one word."""
    text = str(getattr(word, "text", ""))[len(flag) + 1:]
    where = word_located(word)
    offset = len(flag) + 1 + raw_offset(word)
    located = where._replace(value=text, column=where.column + offset)
    if "$" in text:
        whole = VARIABLE.fullmatch(text)
        if whole is not None:
            found = expander.assignment(whole.group(1) or whole.group(4))
            if found is not None and "$" not in found[0]:
                return Value(found[0], found[1])
        return Value(text, located, offset_known=True)
    return Value(text, located)


# --------------------------------------------------------------------------- the workload


def pods_of(submit: Submit) -> tuple[int, int]:
    """(worker pods, master pods)."""
    if submit.klass == "distributed":
        workers = int(submit.workers.value) if submit.workers is not None and submit.workers.value > 0 else 0
        return workers, 0 if submit.no_master else 1
    if submit.parallelism is not None and submit.parallelism.value > 1:
        return int(submit.parallelism.value), 0
    return 1, 0


def per_pod_gpus(submit: Submit) -> Located | None:
    if submit.portion is not None:
        devices = submit.gpus.value if submit.gpus is not None else 1
        return submit.portion._replace(value=as_int(submit.portion.value * devices))
    return submit.gpus


def build_workload(submit: Submit, path: str, config: Config, line_range: tuple[int, int]) -> Workload:
    _, preemptible_default, default_retries = CLASSES[submit.klass]
    workers, masters = pods_of(submit)
    gpus = per_pod_gpus(submit)
    command = submit.words if submit.replace_command else submit.legacy_command
    args = submit.legacy_args + ([] if submit.replace_command else submit.words)
    container = Container(name=str(submit.name.value) if submit.name else "", role="main", image=submit.image,
                          command=command, args=args, env=submit.env, mounts=submit.mounts,
                          working_dir=submit.working_dir, gpus=gpus, replica_group=submit.klass,
                          replicas=workers + masters)
    workload = Workload(path=path, source="runai-cli", kind=submit.klass, anchor=submit.anchor, name=submit.name,
                        containers=[container])
    workload.volumes = [mount.volume for mount in submit.mounts if mount.volume is not None]
    workload.persistent_mount_paths = [mount.path for mount in submit.mounts
                                       if mount.volume is not None and mount.volume.persistent]
    workload.pods = workers + masters
    master_gpus = submit.master_gpus.value if submit.master_gpus is not None else (gpus.value if gpus else 0)
    total = (gpus.value if gpus else 0) * workers + master_gpus * masters
    at = gpus if gpus is not None and gpus.value > 0 and workers > 0 else submit.master_gpus or gpus
    if at is not None and total > 0:
        workload.gpus_total = at._replace(value=as_int(total))
    workload.priority_class = submit.priority
    if submit.preemptible is not None:
        workload.preemptible = submit.preemptible
    else:
        priority = str(submit.priority.value) if submit.priority else None
        workload.preemptible = preemptible_default or preemptible_priority(priority,
                                                                           config.preemptible_priority_classes)
    workload.retries = submit.retries
    workload.default_retries = default_retries
    workload.grace_period = submit.grace
    workload.ttl = submit.ttl
    workload.labels = submit.labels
    workload.annotations = submit.annotations
    workload.disabled_rules = disable_suppressions(submit.annotations, submit.annotation_keys)
    workload.extra["line_range"] = line_range
    workload.extra["workload_class"] = submit.klass
    if submit.unresolved:
        workload.extra["unresolved"] = submit.unresolved
    return workload


def iter_commands(script: object) -> list[object]:
    """Simple commands of a script, with those of embedded ``bash -c`` scripts."""
    found: list[object] = []
    stack = [script]
    while stack:
        current = stack.pop()
        commands = getattr(current, "commands", None)
        if not callable(commands):
            continue
        for command in commands():
            found.append(command)
            inner = getattr(command, "inner", None)
            if inner is not None:
                stack.append(inner)
    return found


def cli_workloads(document: Document, config: Config) -> list[Workload]:
    script = document.parsed
    if script is None or not callable(getattr(script, "commands", None)):
        return []
    assignments = getattr(script, "assignments", None)
    if not isinstance(assignments, dict):
        assignments = {}
    workloads = []
    for command in iter_commands(script):
        words = list(getattr(command, "words", None) or [])
        if not words:
            continue
        line = getattr(words[0], "line", 1)
        submit = parse_submit(words, Expander(assignments, (line, getattr(words[0], "column", 1))))
        if submit is None:
            continue
        last = max(word_end_line(word, line) for word in words)
        workloads.append(build_workload(submit, document.path, config, (line, last)))
    return workloads
