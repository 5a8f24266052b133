"""The model as team rules see it: plain data (the variables of a CEL expression) and where each value was written.

The same fields for every form (docs/model.md is the contract): a rule written once against them holds for a
Kubernetes Job, a JobSet, a Run:ai CRD, REST body or ``runai`` command and a Slurm batch script. A value the
file does not set is ``None`` (CEL ``null``); GPU counts are doubles, seconds, counts and retries ints.
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

from spikelint.adapters.entry_points import TRAINING
from spikelint.adapters.entry_points import command_purpose
from spikelint.facts.images import ImageSyntaxError
from spikelint.facts.images import is_unresolved
from spikelint.facts.images import parse_image
from spikelint.model import Container
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Volume
from spikelint.model import Workload

MODEL_VERSION = 1
ELEMENTS = {"container": "containers", "mount": "mounts", "volume": "volumes", "env": "env"}


class Element(NamedTuple):
    """One value a rule binds (the workload, or one container, mount, volume or env var of it)."""

    data: dict[str, Any]
    positions: dict[str, Located]  # field path inside the element -> where it was written
    at: Located  # where a finding about the element itself points


class WorkloadView(NamedTuple):
    workload: Element
    elements: dict[str, list[Element]]  # "container" -> one per container, "mount", "volume", "env"


def _value(where: Located | None) -> Any:
    return None if where is None else where.value


def _number(where: Located | None, kind: type) -> Any:
    value = _value(where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            try:
                return kind(float(value))
            except ValueError:
                return None
        return None
    return kind(value)


def _strings(mapping: dict[str, Located]) -> dict[str, str]:
    return {key: "" if where.value is None else str(where.value) for key, where in mapping.items()}


def image_record(where: Located | None) -> dict[str, Any] | None:
    """``reference`` as written, its parts, and ``resolved`` = False for a template or variable."""
    if where is None or where.value is None:
        return None
    text = str(where.value)
    record: dict[str, Any] = {"reference": text, "registry": None, "repository": None, "tag": None, "digest": None,
                              "resolved": not is_unresolved(text)}
    try:
        parsed = parse_image(text)
    except ImageSyntaxError:
        return record
    record.update(registry=parsed.registry, repository=parsed.repository, tag=parsed.tag, digest=parsed.digest)
    return record


def volume_record(volume: Volume | None) -> dict[str, Any] | None:
    if volume is None:
        return None
    return {"name": volume.name, "source": volume.source, "persistent": volume.persistent, "claim": volume.claim}


def _volume(volume: Volume, anchor: Located) -> Element:
    positions = {"name": volume.location} if volume.location is not None else {}
    return Element(volume_record(volume) or {}, positions, volume.location or anchor)


def _mount(mount: Mount) -> Element:
    data = {"path": str(mount.path.value), "persistent": bool(mount.volume and mount.volume.persistent),
            "read_only": mount.read_only, "volume": volume_record(mount.volume)}
    return Element(data, {"path": mount.path}, mount.path)


def _env(variable: EnvVar) -> Element:
    value = None if variable.value is None else str(variable.value.value)
    data = {"name": str(variable.name.value), "value": value, "from_secret": variable.reference is not None
            and "secret" in variable.reference.lower()}
    positions = {"name": variable.name, **({"value": variable.value} if variable.value is not None else {})}
    return Element(data, positions, variable.value or variable.name)


def written_env(container: Container) -> list[EnvVar]:
    return [variable for variable in container.env if not variable.implied]


def _container(container: Container, anchor: Located, workload_entry: str | None) -> Element:
    argv = [str(word.value) for word in (*container.command, *container.args)]
    purpose = command_purpose(argv) if argv else None
    entry = purpose.reason if purpose is not None and purpose.what == TRAINING else workload_entry
    data = {
        "name": container.name,
        "role": container.role,
        "image": image_record(container.image),
        "argv": argv,
        "entry_point": entry,
        "env": {str(variable.name.value): None if variable.value is None else str(variable.value.value)
                for variable in written_env(container)},
        "mounts": [_mount(mount).data for mount in container.mounts],
        "gpus": _number(container.gpus, float),
    }
    positions: dict[str, Located] = {}
    if container.image is not None:
        positions["image"] = container.image
    if container.gpus is not None:
        positions["gpus"] = container.gpus
    if container.command or container.args:
        positions["argv"] = (container.command or container.args)[0]
    for variable in written_env(container):
        positions[f"env.{variable.name.value}"] = variable.value or variable.name
        positions.setdefault("env", variable.name)
    where = container.image or next(iter(container.command or container.args), None) or anchor
    return Element(data, positions, where)


def workload_view(workload: Workload) -> WorkloadView:
    """The workload and its elements as rules read them, with positions."""
    anchor = workload.anchor
    platform = workload.platform
    # a batch script's entry point is in its body: the workload's own reading of it
    said = workload.purpose_reason[len("runs "):] if workload.is_training and \
        workload.purpose_reason.startswith("runs ") else None
    mains = [container for container in workload.containers if container.role == "main"]
    containers = [_container(container, anchor, said if container is mains[0] else None)
                  for container in workload.containers]
    mounts = [_mount(mount) for container in workload.containers for mount in container.mounts]
    env = [_env(variable) for container in workload.containers for variable in written_env(container)]
    volumes = [_volume(volume, anchor) for volume in workload.volumes]
    slurm = workload.slurm.directives if workload.slurm is not None else {}
    data = {
        "form": platform.form,
        "kind": workload.kind,
        "name": None if workload.name is None else str(workload.name.value),
        "namespace": None if workload.namespace is None else str(workload.namespace.value),
        "labels": _strings(workload.labels),
        "annotations": _strings(workload.annotations),
        "training": workload.is_training,
        "purpose": workload.purpose,
        "gpus": _number(workload.gpus_total, float) or 0.0,
        "pods": workload.pods,
        "preemptible": workload.preemptible,
        "retries": _number(workload.retries, int) if workload.retries is not None else workload.default_retries,
        "deadline_seconds": _number(workload.deadline, int),
        "grace_period_seconds": _number(workload.grace_period, int),
        "ttl_seconds": _number(workload.ttl, int),
        "priority_class": None if workload.priority_class is None else str(workload.priority_class.value),
        "containers": [element.data for element in containers],
        "volumes": [element.data for element in volumes],
        "slurm": _strings(slurm),
    }
    positions: dict[str, Located] = {}
    for name, where in (("name", workload.name), ("namespace", workload.namespace), ("gpus", workload.gpus_total),
                        ("retries", workload.retries), ("deadline", workload.deadline),
                        ("deadline_seconds", workload.deadline), ("grace_period_seconds", workload.grace_period),
                        ("ttl_seconds", workload.ttl), ("priority_class", workload.priority_class)):
        if where is not None:
            positions[name] = where
    for prefix, mapping in (("labels", workload.labels), ("annotations", workload.annotations), ("slurm", slurm)):
        for key, where in mapping.items():
            positions[f"{prefix}.{key}"] = where
        # ``at: labels`` (the whole map) points at the anchor, as a key that is missing does: the first label's
        # value would name a label the rule is not about
    return WorkloadView(Element(data, positions, anchor),
                        {"container": containers, "mount": mounts, "volume": volumes, "env": env})


def position_of(element: Element, field: str | None) -> Located:
    """Where a finding about ``field`` of the element points: the value as written, else the element."""
    if field:
        where = element.positions.get(field)
        if where is not None:
            return where
    return element.at


def located_json(view: WorkloadView, path: str) -> dict[str, Any]:
    """The workload as ``spikelint model`` prints it: the variables, and the position of each field written."""
    def spots(positions: dict[str, Located]) -> dict[str, list[int]]:
        return {name: [where.line, where.column] for name, where in sorted(positions.items())}

    return {
        "path": path,
        "model": MODEL_VERSION,
        "workload": view.workload.data,
        "positions": {
            "workload": {"anchor": [view.workload.at.line, view.workload.at.column], **spots(view.workload.positions)},
            **{f"{ELEMENTS[name]}[{index}]": {"at": [element.at.line, element.at.column], **spots(element.positions)}
               for name, elements in view.elements.items() for index, element in enumerate(elements)},
        },
    }


# --------------------------------------------------------------------------- the fields, for checking a rule when it loads

MAP = "map"  # a map field: any key may follow (labels.owner, slurm.partition)
IMAGE = {"reference": "", "registry": "", "repository": "", "tag": "", "digest": "", "resolved": True}
VOLUME = {"name": "v", "source": "pvc", "persistent": True, "claim": "c"}
MOUNT = {"path": "/p", "persistent": True, "read_only": False, "volume": VOLUME}
CONTAINER = {"name": "c", "role": "main", "image": IMAGE, "argv": ["python"], "entry_point": "python train.py",
             "env": MAP, "mounts": [MOUNT], "gpus": 1.0}
WORKLOAD = {"form": "kubernetes", "kind": "Job", "name": "n", "namespace": "ns", "labels": MAP, "annotations": MAP,
            "training": True, "purpose": "training", "gpus": 1.0, "pods": 1, "preemptible": False, "retries": 0,
            "deadline_seconds": 3600, "grace_period_seconds": 30, "ttl_seconds": 60, "priority_class": "p",
            "containers": [CONTAINER], "volumes": [VOLUME], "slurm": MAP}
ENV = {"name": "N", "value": "v", "from_secret": False}
SHAPES = {"workload": WORKLOAD, "container": CONTAINER, "mount": MOUNT, "volume": VOLUME, "env": ENV}


def probe(shape: Any) -> Any:
    """A value of every documented field, none null, maps empty: what a rule is tried on when it loads."""
    if shape == MAP:
        return {}
    if isinstance(shape, dict):
        return {key: probe(value) for key, value in shape.items()}
    if isinstance(shape, list):
        return [probe(item) for item in shape]
    return shape


def unknown_field(root: str, path: list[str]) -> str | None:
    """The first step of ``root.a.b`` that the model does not have (``None`` when it has them all)."""
    shape: Any = SHAPES[root]
    for depth, step in enumerate(path):
        if shape == MAP:
            return None  # a key of a map: any
        if isinstance(shape, list):
            return None  # a list's methods and macros (size(), all(), exists())
        if not isinstance(shape, dict):
            return None  # a method of a scalar (startsWith(), size())
        if step not in shape:
            return ".".join([root, *path[:depth + 1]])
        shape = shape[step]
    return None
