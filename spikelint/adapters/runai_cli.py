"""``runai … submit`` commands in launch scripts -> workloads.

Covers the v1 CLI (``runai submit``, ``runai submit-dist pytorch``), the v2 CLI (``runai
training submit``, ``runai workspace submit``, ``runai distributed submit``, ``runai training
pytorch submit``) and v2.2x (``runai training standard submit`` / ``… distributed submit``).
Variables assigned earlier in the script are expanded where the whole value is known; a
word that is exactly one variable points at the assignment, where the value is written.

This module finds the submits and builds their workloads; the words and their expansion are
:mod:`spikelint.adapters.runai_cli_words`, what each flag sets :mod:`spikelint.adapters.runai_cli_flags`.
"""

from __future__ import annotations

import re

from spikelint.adapters.platforms import runai_cli_platform
from spikelint.adapters.common import as_int
from spikelint.adapters.common import disable_suppressions
from spikelint.adapters.common import preemptible_priority
from spikelint.config import Config
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import Located
from spikelint.model import Workload
from spikelint.adapters.runai_cli_words import VARIABLE
from spikelint.adapters.runai_cli_words import Expander
from spikelint.adapters.runai_cli_words import Value
from spikelint.adapters.runai_cli_words import raw_offset
from spikelint.adapters.runai_cli_words import word_end_line
from spikelint.adapters.runai_cli_words import word_located
from spikelint.adapters.runai_cli_flags import COMMAND_FLAGS
from spikelint.adapters.runai_cli_flags import FLAG_HANDLERS
from spikelint.adapters.runai_cli_flags import SWITCHES
from spikelint.adapters.runai_cli_flags import VALUE_IGNORED
from spikelint.adapters.runai_cli_flags import Submit
from spikelint.adapters.runai_cli_flags import ignore_flag

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

# flags that take no value; every other flag takes one (``--flag value`` or ``--flag=value``)
BOOLEAN_FLAGS = frozenset((
    "--interactive", "--jupyter", "--preemptible", "--non-preemptible", "--large-shm", "--no-master",
    "--attach", "-t", "--tty", "--stdin", "--allow-privilege-escalation", "--host-ipc", "--host-network",
    "--run-as-user", "--run-as-non-root", "--privileged", "--create-home-dir", "--always-pull-image",
    "--local-image", "--dry-run", "--prevent-privilege-escalation", "--elastic", "--ttl", "--completions-auto",
    "--master-no-pvcs", "--no-pvcs", "--x11", "--service-type-nodeport", "--use-default-gpu-sharing",
    "--disable-sigterm", "--master-large-shm",
))


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
        FLAG_HANDLERS.get(flag, ignore_flag)(submit, value)
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
    templated = any(str(item).startswith("template") for item in submit.unresolved or ())
    workload.platform = runai_cli_platform(workload.kind, submit.klass, line_range, storage_unknown=templated)
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
