"""Run:ai REST workload bodies (``POST /api/v1/workloads/{trainings,workspaces,distributed,inferences}``)
-> workloads.

A body does not say which endpoint it is for, so the workload class is read from the
distributed/inference fields, then the endpoint or class named in ``_comment``/``description``,
then the file name, and last from the command (a training script -> training, anything
else -> workspace).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from spikelint.adapters.platforms import runai_rest_platform
from spikelint.adapters.common import SourceLines
from spikelint.adapters.common import StorageField
from spikelint.adapters.common import as_map
from spikelint.adapters.common import as_seq
from spikelint.adapters.common import child
from spikelint.adapters.common import disable_suppressions
from spikelint.adapters.common import document_range
from spikelint.adapters.common import located_duration
from spikelint.adapters.common import located_number
from spikelint.adapters.common import located_text
from spikelint.adapters.common import map_entries
from spikelint.adapters.common import preemptible_priority
from spikelint.adapters.common import scalar_text
from spikelint.adapters.common import truthy
from spikelint.adapters.common import words_of
from spikelint.config import Config
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Node
from spikelint.model import Volume
from spikelint.model import Workload

# workload class -> (training, preemptible by default, default retries)
CLASSES: dict[str, tuple[bool, bool, int]] = {
    "training": (True, True, 6),
    "distributed": (True, True, 6),
    "workspace": (False, False, 0),
    "inference": (False, False, 0),
}
SPEC_KEYS = ("image", "command", "args", "compute", "storage", "environmentVariables", "workingDir")
REST_ONLY_KEYS = ("compute", "storage", "environmentVariables", "preemptibility")  # no other format has these
ENDPOINT = lazy_regex(r"workloads/(workspaces|trainings|distributed|inferences)", re.IGNORECASE)
CLASS_WORD = lazy_regex(r"\b(workspace|interactive|inference|training|distributed)s?\b", re.IGNORECASE)
PATH_WORD = lazy_regex(r"(workspace|interactive|inference|serving|distributed|train)", re.IGNORECASE)
WORD_CLASSES = {"workspaces": "workspace", "workspace": "workspace", "interactive": "workspace",
                "trainings": "training", "training": "training", "train": "training",
                "distributed": "distributed", "inferences": "inference", "inference": "inference",
                "serving": "inference"}
DISTRIBUTED_KEYS = ("distributedFramework", "numWorkers", "masterSpec", "masterSpecSameAsWorker")
INFERENCE_KEYS = ("servingPort", "autoscaling")
ENV_REFERENCES = (("secret", "rest-secret"), ("userCredential", "userCredential"), ("configMap", "configMapKeyRef"),
                  ("podFieldRef", "fieldRef"))

STORAGE: dict[str, StorageField] = {
    "pvc": StorageField("pvc", True, ("path", "mountPath"), ("claimName", "name")),
    "hostPath": StorageField("hostPath", False, ("mountPath",), ("path",)),
    "nfs": StorageField("nfs", True, ("mountPath",), ("server",)),
    "s3": StorageField("s3", True, ("path", "mountPath"), ("bucket",)),
    "git": StorageField("git", False, ("path", "mountPath"), ("repository",)),
    "dataVolume": StorageField("datasource", True, ("path", "mountPath"), ("dataVolumeId", "name")),
    "emptyDirVolume": StorageField("emptyDir", False, ("path", "mountPath"), ("name",)),
    "configMapVolume": StorageField("configMap", False, ("mountPath", "path"), ("configMap", "name")),
    "secretVolume": StorageField("secret", False, ("mountPath", "path"), ("secret", "name")),
}


def spec_of(root: Node) -> Node | None:
    return as_map(root.get("spec")) or as_map(root.get("specificEnv"))


def is_rest_body(root: Node) -> bool:
    """``{name, projectId/clusterId, spec: {image/command/compute/…}}`` or the asset-based variant."""
    if root.kind != "map":
        return False
    spec = spec_of(root)
    project = any(key in root.value for key in ("projectId", "clusterId", "useGivenNameAsPrefix"))
    if spec is None:
        return project and as_map(root.get("assets")) is not None
    if project:
        return any(key in spec.value for key in SPEC_KEYS)
    return "name" in root.value and "image" in spec.value and any(key in spec.value for key in REST_ONLY_KEYS)


def workload_class(root: Node, spec: Node | None, path: str) -> str:
    if any(key in (spec.value if spec else {}) or key in root.value for key in DISTRIBUTED_KEYS):
        return "distributed"
    if any(key in (spec.value if spec else {}) for key in INFERENCE_KEYS):
        return "inference"
    notes = " ".join(text for text in (scalar_text(root.get(key)) for key in ("_comment", "description", "comment"))
                     if text)
    for pattern in (ENDPOINT, CLASS_WORD):
        match = pattern.search(notes)
        if match:
            return WORD_CLASSES[match.group(1).lower()]
    match = PATH_WORD.search(PurePosixPath(path).name)
    if match:
        return WORD_CLASSES[match.group(1).lower()]
    words = [scalar_text(child(spec, "command")) or "", scalar_text(child(spec, "args")) or ""]
    from spikelint.adapters.purpose import text_purposes

    trains = any(purpose.training for purpose in text_purposes(" ".join(word for word in words if word)))
    return "training" if trains else "workspace"


def read_env(spec: Node | None) -> list[EnvVar]:
    variables = []
    for item in as_seq(child(spec, "environmentVariables")):
        name = located_text(child(item, "name"))
        if name is None or truthy(child(item, "exclude")):
            continue
        reference = next((label for key, label in ENV_REFERENCES if child(item, key) is not None), None)
        value = None if reference else located_text(child(item, "value"))
        variables.append(EnvVar(name, value if value is not None and value.value != "" else None, reference))
    return variables


def read_storage(spec: Node | None) -> list[Mount]:
    mounts = []
    for key, value in map_entries(child(spec, "storage")):
        kind = STORAGE.get(str(key.value))
        if kind is None:
            continue
        entries = as_seq(value) or ([value] if as_map(value) is not None else [])
        for entry in entries:
            if as_map(entry) is None or truthy(entry.get("exclude")):
                continue
            path = next((where for where in (located_text(entry.get(k)) for k in kind.path_keys) if where), None)
            if path is None:
                continue
            claim = next((text for text in (scalar_text(entry.get(k)) for k in kind.claim_keys) if text), None)
            source, persistent = kind.source, kind.persistent
            if kind.source == "pvc" and truthy(entry.get("ephemeral")):
                source, persistent = "ephemeral-pvc", False
            name = scalar_text(entry.get("name")) or claim or str(path.value)
            read_only = bool(truthy(entry.get("readOnly"))) or source in ("configMap", "secret")
            mounts.append(Mount(path, Volume(name, source, persistent, key, claim), read_only))
    return mounts


def asset_volumes(root: Node) -> list[Volume]:
    """Asset-based bodies name data sources by id only: persistent, mount path unknown offline."""
    volumes = []
    for item in as_seq(child(root, "assets", "datasources")):
        ident = located_text(child(item, "id"))
        if ident is not None:
            kind = scalar_text(child(item, "kind")) or "datasource"
            volumes.append(Volume(str(ident.value), "datasource", kind != "emptyDir", ident, str(ident.value)))
    return volumes


def pod_gpus(spec: Node | None) -> Located | None:
    """GPUs per pod: ``compute.gpuDevicesRequest`` (× ``gpuPortionRequest`` for fractions)."""
    compute = child(spec, "compute")
    devices = located_number(child(compute, "gpuDevicesRequest"))
    portion = located_number(child(compute, "gpuPortionRequest"))
    if portion is not None:
        count = devices.value if devices is not None else 1
        return portion._replace(value=portion.value * count)
    return devices


def read_container(spec: Node | None, name: str, group: str, replicas: int, lines: SourceLines) -> Container:
    return Container(name=name, role="main", image=located_text(child(spec, "image")),
                     command=words_of(child(spec, "command"), lines), args=words_of(child(spec, "args"), lines),
                     env=read_env(spec), mounts=read_storage(spec), working_dir=located_text(child(spec, "workingDir")),
                     gpus=pod_gpus(spec), replica_group=group, replicas=replicas)


def pairs(spec: Node | None, key: str) -> dict[str, Located]:
    """REST ``labels``/``annotations``: ``[{name, value, exclude}]``."""
    found: dict[str, Located] = {}
    for item in as_seq(child(spec, key)):
        name = located_text(child(item, "name"))
        if name is None or truthy(child(item, "exclude")):
            continue
        found[str(name.value)] = located_text(child(item, "value")) or name._replace(value="")
    return found


def containers_of(root: Node, spec: Node | None, klass: str, name: str, lines: SourceLines) -> list[Container]:
    if klass != "distributed":
        return [read_container(spec, name, klass, 1, lines)]
    workers = located_number(child(spec, "numWorkers")) or located_number(root.get("numWorkers"))
    count = int(workers.value) if workers is not None and workers.value > 0 else 0
    same = truthy(root.get("masterSpecSameAsWorker"))
    master_spec = as_map(root.get("masterSpec")) or as_map(child(spec, "masterSpec"))
    worker = read_container(spec, name, "Worker", count, lines)
    if truthy(child(spec, "noMaster")):
        return [worker]
    if master_spec is not None and same is not True:
        return [read_container(master_spec, name, "Master", 1, lines), worker]
    worker.replicas = count + 1
    worker.replica_group = "Master+Worker"
    return [worker]


def rest_workloads(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    if root.kind != "map":
        return []
    spec = spec_of(root)
    klass = workload_class(root, spec, path)
    _, preemptible_default, default_retries = CLASSES[klass]
    name = located_text(root.get("name"))
    anchor = root.key_at("name") or Located("", root.line, root.column)
    workload = Workload(path=path, source="runai-rest", kind=klass, anchor=anchor, name=name)
    workload.containers = containers_of(root, spec, klass, str(name.value) if name else "", lines)
    workload.volumes = [mount.volume for container in workload.containers for mount in container.mounts
                        if mount.volume is not None] + asset_volumes(root)
    workload.persistent_mount_paths = [mount.path for container in workload.containers for mount in container.mounts
                                       if mount.volume is not None and mount.volume.persistent]
    workload.pods = sum(container.replicas for container in workload.containers) or 1
    total = sum(container.gpus.value * container.replicas for container in workload.containers if container.gpus)
    gpu_at = next((container.gpus for container in workload.containers
                   if container.gpus is not None and container.gpus.value > 0 and container.replicas > 0), None)
    if gpu_at is not None and total > 0:
        workload.gpus_total = gpu_at._replace(value=int(total) if float(total).is_integer() else total)
    workload.labels = pairs(spec, "labels")
    workload.annotations = pairs(spec, "annotations")
    workload.disabled_rules = disable_suppressions(workload.annotations, {})
    workload.priority_class = located_text(child(spec, "priorityClass"))
    preemptibility = (scalar_text(child(spec, "preemptibility")) or "").lower()
    if preemptibility in ("preemptible", "non-preemptible"):
        workload.preemptible = preemptibility == "preemptible"
    else:
        priority = str(workload.priority_class.value) if workload.priority_class else None
        workload.preemptible = preemptible_default or preemptible_priority(priority, config.preemptible_priority_classes)
    workload.retries = located_number(child(spec, "backoffLimit"))
    workload.default_retries = default_retries
    workload.grace_period = located_duration(located_text(child(spec, "terminationGracePeriodSeconds")))
    workload.ttl = located_duration(located_text(child(spec, "autoDeletionTimeAfterCompletionSeconds")))
    workload.restart_policy = located_text(child(spec, "restartPolicy"))
    workload.platform = runai_rest_platform(workload.kind, klass, document_range(root),
                                            storage_unknown=as_map(root.get("assets")) is not None)
    return [workload]
