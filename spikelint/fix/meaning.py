"""What a file *means* before and after a fix: its workloads as the adapters normalise them,
without positions, with the property each fix sets erased on both sides.

A fix may keep every other line byte for byte and still change what the file does: a line
inserted above ``#SBATCH`` directives turns them into comments sbatch never reads, and the job
runs with no GPU, time limit or log path.  The text proof (edits, parse, findings) cannot see
that; comparing the workloads can.
"""

from __future__ import annotations

import posixpath
from typing import Any
from typing import Callable
from typing import Iterable

from spikelint.config import Config
from spikelint.model import Located
from spikelint.model import SlurmJob
from spikelint.model import Workload
from spikelint.util.lazyre import lazy_regex

Form = dict[str, Any]  # one workload, position-free

# the statement the SPK501 fixes add: its own line (a script, a block scalar) or `set -o pipefail; ` in front
PIPEFAIL_LINE = lazy_regex(r"(?m)^[ \t]*set -o pipefail;?[ \t]*\r?\n")
PIPEFAIL_PREFIX = lazy_regex(r"set -o pipefail;[ \t]*")
# SPK502: ` -u` after the interpreter's word inside a script string (something must follow: a word that
# is only `python -u` is an exec-form word the fix would have broken, and must not compare equal)
UNBUFFERED_IN_TEXT = lazy_regex(r"((?:^|[\s;&|(])\S*python[\w.]*) -u(?=[ \t]+\S)")
PYTHON_WORD = lazy_regex(r"python[\w.]*$")
# SPK101/SPK102: `@sha256:…` appended to a reference
DIGEST = lazy_regex(r"@[a-z0-9]+:[0-9a-fA-F]{32,}")

LABELS = {"gpus_total": "GPUs", "gpus": "GPUs per pod", "pods": "pods", "retries": "retries",
          "default_retries": "default retries", "grace_period": "grace period", "ttl": "TTL", "deadline": "time limit",
          "slurm_logs": "log paths", "slurm_ignored_directives": "directives sbatch ignores",
          "slurm_time_written": "time limit written", "slurm_directives": "directives sbatch reads", "priority_class": "priority", "working_dir": "working folder"}


def _plain(value: Any) -> Any:
    """``value`` without positions: a Located is its value; containers are walked."""
    if isinstance(value, Located):
        return _plain(value.value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _container(container: Any) -> Form:
    return {
        "name": container.name, "role": container.role, "image": _plain(container.image),
        "command": _plain(container.command), "args": _plain(container.args),
        "env": [[_plain(variable.name), _plain(variable.value), variable.reference] for variable in container.env],
        "env_from_secret": container.env_from_secret,
        "mounts": [[_plain(mount.path), mount.volume.name if mount.volume is not None else None, mount.read_only]
                   for mount in container.mounts],
        "working_dir": _plain(container.working_dir), "gpus": _plain(container.gpus),
        "replica_group": container.replica_group, "replicas": container.replicas,
    }


def form(workload: Workload) -> Form:
    """The workload without positions: what it runs, where, with what resources and limits."""
    return {
        "source": workload.source, "kind": workload.kind, "name": _plain(workload.name),
        "containers": [_container(container) for container in workload.containers],
        "volumes": [[volume.name, volume.source, volume.persistent, volume.claim] for volume in workload.volumes],
        "persistent_mount_paths": _plain(workload.persistent_mount_paths),
        "gpus_total": _plain(workload.gpus_total), "pods": workload.pods,
        "training": workload.is_training, "purpose": workload.purpose, "preemptible": workload.preemptible,
        "retries": _plain(workload.retries), "default_retries": workload.default_retries,
        "grace_period": _plain(workload.grace_period), "ttl": _plain(workload.ttl),
        "deadline": _plain(workload.deadline), "labels": _plain(workload.labels),
        "annotations": _plain(workload.annotations), "priority_class": _plain(workload.priority_class),
        "api_version": workload.platform.api_version, "restart_policy": _plain(workload.restart_policy),
        "workload_class": workload.platform.workload_class, "storage_unknown": workload.platform.storage_unknown,
        **(_slurm(workload.slurm) if workload.slurm is not None else {}),
    }


def _slurm(job: SlurmJob) -> Form:
    """What sbatch reads: every directive it honours, the ones it ignores, the log paths, the requeue."""
    directives = {name: value for name, value in job.directives.items() if name != "wrap"}  # the body: a command
    return {"slurm_directives": _plain(directives), "requeue_by": job.requeue_by, "slurm_logs": _plain(job.logs),
            "slurm_time_written": job.time_written, "slurm_ignored_directives": _plain(job.ignored)}


# --------------------------------------------------------------------------- what each fix may change


def _texts(form_: Form, change: Callable[[str], str]) -> None:
    """Apply ``change`` to every command and argument word of every container (a Slurm body too)."""
    for container in form_["containers"]:
        for key in ("command", "args"):
            container[key] = [change(word) if isinstance(word, str) else word for word in container[key]]


def _without_pipefail(form_: Form, secret_names: set[str]) -> None:
    _texts(form_, lambda text: PIPEFAIL_PREFIX.sub("", PIPEFAIL_LINE.sub("", text)))


def _without_unbuffered(form_: Form, secret_names: set[str]) -> None:
    for container in form_["containers"]:
        for key in ("command", "args"):
            words = container[key]
            container[key] = [word for index, word in enumerate(words)
                              if not (word == "-u" and index and isinstance(words[index - 1], str)
                                      and PYTHON_WORD.search(posixpath.basename(words[index - 1])))]
        container["env"] = [entry for entry in container["env"] if entry[0] != "PYTHONUNBUFFERED"]
    _texts(form_, lambda text: UNBUFFERED_IN_TEXT.sub(r"\1", text))


def _without_ttl(form_: Form, secret_names: set[str]) -> None:
    form_["ttl"] = None


def _without_secret_values(form_: Form, secret_names: set[str]) -> None:
    for container in form_["containers"]:
        container["env"] = [[entry[0], "<secret>", None] if entry[0] in secret_names
                            and (entry[1] is not None or entry[2] == "secretKeyRef") else entry
                            for entry in container["env"]]


def _without_digests(form_: Form, secret_names: set[str]) -> None:
    for container in form_["containers"]:
        if isinstance(container["image"], str):
            container["image"] = DIGEST.sub("", container["image"])
    _texts(form_, lambda text: DIGEST.sub("", text))


ERASERS: dict[str, Callable[[Form, set[str]], None]] = {  # the property each rule's fix sets
    "SPK501": _without_pipefail,
    "SPK502": _without_unbuffered,
    "SPK702": _without_ttl,
    "SPK202": _without_secret_values,
    "SPK101": _without_digests,
    "SPK102": _without_digests,
}


# --------------------------------------------------------------------------- the comparison


def workloads_of(path: str, kind: str, text: str, config: Config) -> list[Workload]:
    """The workloads the adapters read from ``text`` (none for kinds without an adapter)."""
    from spikelint.adapters import DOCUMENT_ADAPTERS
    from spikelint.adapters import workloads_in
    from spikelint.documents import parse_text
    from spikelint.model import SourceFile

    if kind not in DOCUMENT_ADAPTERS:
        return []
    return workloads_in(parse_text(SourceFile(path, path, kind), text), config)


def normalised(workloads: Iterable[Workload], rules: Iterable[str], secret_names: set[str]) -> list[Form]:
    forms = [form(workload) for workload in workloads]
    erasers = {ERASERS[rule] for rule in rules if rule in ERASERS}
    for item in forms:
        for erase in erasers:
            erase(item, secret_names)
    return forms


def meaning_change(before: list[Workload], after: list[Workload], rules: Iterable[str]) -> str:
    """``""`` when ``after`` means what ``before`` did apart from what the fixes of ``rules`` set;
    else what changed (values shown only where they are numbers or flags: env values and
    command lines may hold secrets)."""
    rules = set(rules)
    secret_names = {entry.name.value for workload in after for container in workload.containers
                    for entry in container.env if entry.reference == "secretKeyRef"} if "SPK202" in rules else set()
    old = normalised(before, rules, secret_names)
    new = normalised(after, rules, secret_names)
    if old == new:
        return ""
    if len(old) != len(new):
        return f"the edit would change the number of workloads the file defines ({len(old)} -> {len(new)})"
    changes: list[str] = []
    for first, second in zip(old, new):
        if first != second:
            what = f"{first['kind']} {first['name']!r}" if first["name"] else f"the {first['kind']} workload"
            changes.append(f"{what}: " + ", ".join(_differences(first, second)))
    return "the edit would change what the file means — " + "; ".join(changes)


def _differences(old: Form, new: Form, limit: int = 4) -> list[str]:
    found: list[str] = []
    keys = dict.fromkeys([*old, *new])
    for key in [*(key for key in keys if key != "containers"), *(key for key in keys if key == "containers")]:
        first, second = old.get(key), new.get(key)
        if first == second:
            continue
        if key == "containers" and isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
            for one, other in zip(first, second):
                found.extend(f"container {one['name']} {item}" for item in _differences(one, other, limit))
            continue
        label = LABELS.get(key, key.replace("_", " "))
        if all(value is None or isinstance(value, (int, float, bool)) for value in (first, second)):
            label += f" {_shown(first)} -> {_shown(second)}"
        found.append(label)
    return found[:limit]


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)
