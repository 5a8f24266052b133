"""Run:ai workload CRDs (``run.ai/v1alpha1``, ``run.ai/v2alpha1``) -> workloads.

Every scalar of these CRDs is wrapped as ``field: {value: …}`` and every map-like field as
``field: {items: {<key>: {value: …}}}``; we unwrap while keeping the inner value's position.
``command`` and ``arguments`` are single strings, split into words here.
"""

from __future__ import annotations

from spikelint.adapters.platforms import runai_crd_platform
from spikelint.adapters.common import SourceLines
from spikelint.adapters.common import StorageField
from spikelint.adapters.common import as_map
from spikelint.adapters.common import child
from spikelint.adapters.common import disable_suppressions
from spikelint.adapters.common import document_range
from spikelint.adapters.common import key_positions
from spikelint.adapters.common import located_duration
from spikelint.adapters.common import located_number
from spikelint.adapters.common import located_text
from spikelint.adapters.common import map_entries
from spikelint.adapters.common import merge_missing
from spikelint.adapters.common import preemptible_priority
from spikelint.adapters.common import scalar_text
from spikelint.adapters.common import string_map
from spikelint.adapters.common import truthy
from spikelint.adapters.common import words_of
from spikelint.config import Config
from spikelint.model import Container
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Node
from spikelint.model import Volume
from spikelint.model import Workload

# kind -> (workload class, training, preemptible by default, default retries)
CRD_KINDS: dict[str, tuple[str, bool, bool, int]] = {
    "TrainingWorkload": ("training", True, True, 6),
    "DistributedWorkload": ("distributed", True, True, 6),
    "InteractiveWorkload": ("interactive", False, False, 0),
    "InferenceWorkload": ("inference", False, False, 0),
}
SECRET_PREFIX = "SECRET:"

STORAGE_FIELDS: dict[str, StorageField] = {
    "pvcs": StorageField("pvc", True, ("path", "mountPath"), ("claimName",)),
    "volumes": StorageField("hostPath", False, ("target", "mountPath", "containerPath", "mount"), ("source",)),
    "hostPath": StorageField("hostPath", False, ("mountPath", "target", "mount"), ("path",)),
    "nfs": StorageField("nfs", True, ("mountPath", "mountpath", "target"), ("server",)),
    "s3": StorageField("s3", True, ("mountPath", "path"), ("bucket",)),
    "gitSync": StorageField("git", False, ("path", "mountPath"), ("repository",)),
    "git": StorageField("git", False, ("path", "mountPath"), ("repository",)),
    "dataSources": StorageField("datasource", True, ("path", "mountPath"), ("name",)),
    "emptyDirVolumes": StorageField("emptyDir", False, ("path", "mountPath"), ("name",)),
    "configMapVolumes": StorageField("configMap", False, ("mountPath", "path"), ("name",)),
    "configMaps": StorageField("configMap", False, ("mountPath", "path"), ("name",)),
    "secretVolumes": StorageField("secret", False, ("mountPath", "path"), ("name",)),
}


def is_runai_crd(api_version: str, kind: str) -> bool:
    return api_version.startswith("run.ai/") and kind in CRD_KINDS


def unwrap(node: Node | None) -> Node | None:
    """``{value: x}`` -> ``x``; anything else as it is (hand-written CRDs forget the wrapper)."""
    holder = as_map(node)
    if holder is not None and "value" in holder.value:
        return holder.value["value"]
    return node


def wrapped(spec: Node | None, *names: str) -> Node | None:
    """The first of ``names`` present in ``spec``, unwrapped."""
    for name in names:
        node = unwrap(child(spec, name))
        if node is not None and not (node.kind == "scalar" and node.value is None):
            return node
    return None


def items(spec: Node | None, name: str) -> list[tuple[Located, Node]]:
    """``name: {items: {key: {value: v}}}`` -> ``[(key, v)]`` (also ``name: {value: v}`` for one item)."""
    holder = as_map(child(spec, name))
    if holder is None:
        return []
    if "items" in holder.value:
        return [(key, inner) for key, value in map_entries(holder.value["items"])
                if (inner := unwrap(value)) is not None]
    if "value" in holder.value:
        inner = unwrap(holder)
        key = holder.key_at("value") or Located(name, holder.line, holder.column)
        return [(key, inner)] if inner is not None else []
    return [(key, inner) for key, value in map_entries(holder) if (inner := unwrap(value)) is not None]


def read_env(spec: Node | None) -> list[EnvVar]:
    variables = []
    for key, value in items(spec, "environment"):
        where = located_text(value)
        if where is not None and where.value.startswith(SECRET_PREFIX):
            variables.append(EnvVar(key, None, "runai-secret"))
        elif value.kind == "map":
            variables.append(EnvVar(key, None, "valueFrom"))
        else:
            variables.append(EnvVar(key, where if where is not None and where.value != "" else None))
    return variables


def read_storage(spec: Node | None) -> list[Mount]:
    mounts = []
    for name, kind in STORAGE_FIELDS.items():
        for key, value in items(spec, name):
            entry = as_map(value)
            if entry is None:
                continue
            path = next((where for where in (located_text(unwrap(entry.get(k))) for k in kind.path_keys)
                         if where is not None), None)
            claim = next((text for text in (scalar_text(unwrap(entry.get(k))) for k in kind.claim_keys) if text),
                         None)
            source, persistent = kind.source, kind.persistent
            if name == "pvcs" and truthy(unwrap(entry.get("ephemeral"))):
                source, persistent = "ephemeral-pvc", False
            volume = Volume(str(key.value), source, persistent, key, claim)
            if path is None:
                continue
            read_only = bool(truthy(unwrap(entry.get("readOnly")))) or source in ("configMap", "secret")
            mounts.append(Mount(path, volume, read_only))
    return mounts


def pods_of(spec: Node | None, workload_class: str) -> int:
    """Pods that run: distributed = workers + master (unless ``noMaster``); training = parallelism."""
    def number(*names: str) -> int | None:
        where = located_number(wrapped(spec, *names))
        return int(where.value) if where is not None and where.value >= 0 else None

    if workload_class == "distributed":
        workers = number("workers", "numWorkers", "minReplicas") or 0
        master = 0 if truthy(wrapped(spec, "noMaster")) else 1
        return max(workers + master, 1)
    if workload_class == "training":
        return max(number("parallelism") or 1, 1)
    if workload_class == "inference":
        return max(number("minScale", "minReplicas") or 1, 1)
    return 1


def is_preemptible(spec: Node | None, default: bool, config: Config) -> bool:
    explicit = truthy(wrapped(spec, "preemptible"))
    if explicit is not None:
        return explicit
    if truthy(wrapped(spec, "nonPreemptible")):
        return False
    priority = scalar_text(wrapped(spec, "priorityClassName", "priorityClass"))
    return default or preemptible_priority(priority, config.preemptible_priority_classes)


def crd_workloads(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    if root.kind != "map":
        return []
    kind = scalar_text(root.get("kind")) or ""
    workload_class, _, preemptible_default, default_retries = CRD_KINDS.get(kind, ("training", True, True, 6))
    spec = as_map(root.get("spec"))
    metadata = as_map(root.get("metadata"))
    name = located_text(wrapped(spec, "name", "namePrefix")) or located_text(child(metadata, "name"))
    workload = Workload(path=path, source="runai-crd", kind=kind,
                        anchor=root.key_at("kind") or Located(kind, root.line, root.column), name=name)
    workload.labels = string_map(child(metadata, "labels"))
    workload.annotations = string_map(child(metadata, "annotations"))
    merge_missing(workload.labels, {str(key.value): located_text(value) or key for key, value in items(spec, "labels")})
    merge_missing(workload.annotations,
                  {str(key.value): located_text(value) or key for key, value in items(spec, "annotations")})
    workload.disabled_rules = disable_suppressions(workload.annotations, key_positions(child(metadata, "annotations")))
    mounts = read_storage(spec)
    pods = pods_of(spec, workload_class)
    gpus = located_number(wrapped(spec, "gpu", "gpuDevicesRequest", "gpuLimit"))
    container = Container(
        name=str(name.value) if name else "", role="main", image=located_text(wrapped(spec, "image")),
        command=words_of(wrapped(spec, "command"), lines), args=words_of(wrapped(spec, "arguments", "args"), lines),
        env=read_env(spec), mounts=mounts, working_dir=located_text(wrapped(spec, "workingDir")), gpus=gpus,
        replica_group=workload_class, replicas=pods)
    workload.containers = [container]
    workload.volumes = [mount.volume for mount in mounts if mount.volume is not None]
    workload.persistent_mount_paths = [mount.path for mount in mounts if mount.volume and mount.volume.persistent]
    workload.pods = pods
    if gpus is not None and gpus.value > 0:
        total = gpus.value * pods
        workload.gpus_total = gpus._replace(value=int(total) if float(total).is_integer() else total)
    workload.preemptible = is_preemptible(spec, preemptible_default, config)
    workload.retries = located_number(wrapped(spec, "backoffLimit"))
    workload.default_retries = default_retries
    workload.grace_period = located_duration(located_text(wrapped(spec, "terminationGracePeriodSeconds")))
    workload.ttl = located_duration(located_text(wrapped(spec, "ttlAfterFinish", "ttlSecondsAfterFinished")))
    workload.priority_class = located_text(wrapped(spec, "priorityClassName", "priorityClass"))
    workload.platform = runai_crd_platform(workload.kind, scalar_text(root.get("apiVersion")) or "", workload_class,
                                           document_range(root))
    return [workload]
