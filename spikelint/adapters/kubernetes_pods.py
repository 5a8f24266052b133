"""Kubernetes pod specs -> containers, volumes, mounts and GPUs: what every kind's pod template holds.

Pods, Jobs, Kubeflow replicas, JobSets and Argo templates all embed the same pod spec; it is
read once, by :func:`read_pod`, whatever kind holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from spikelint.adapters.common import SourceLines
from spikelint.adapters.common import as_map
from spikelint.adapters.common import as_seq
from spikelint.adapters.common import child
from spikelint.adapters.common import key_positions
from spikelint.adapters.common import located_number
from spikelint.adapters.common import located_text
from spikelint.adapters.common import map_entries
from spikelint.adapters.common import scalar_text
from spikelint.adapters.common import to_number
from spikelint.adapters.common import truthy
from spikelint.adapters.common import words_of
from spikelint.model import Container
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Node
from spikelint.model import Volume


# volume source key -> (Volume.source, persistent)
VOLUME_SOURCES: dict[str, tuple[str, bool]] = {
    "persistentVolumeClaim": ("pvc", True),
    "ephemeral": ("ephemeral-pvc", False),
    "emptyDir": ("emptyDir", False),
    "hostPath": ("hostPath", False),
    "nfs": ("nfs", True),
    "csi": ("csi", True),
    "configMap": ("configMap", False),
    "secret": ("secret", False),
    "downwardAPI": ("other", False),
    "projected": ("other", False),
    "gitRepo": ("git", False),
    "image": ("other", False),
    **{name: ("other", True) for name in (
        "cephfs", "glusterfs", "iscsi", "rbd", "azureFile", "azureDisk", "gcePersistentDisk",
        "awsElasticBlockStore", "fc", "cinder", "portworxVolume", "quobyte", "storageos", "vsphereVolume",
        "flocker", "photonPersistentDisk", "scaleIO", "flexVolume")},
}
READ_ONLY_KEYS = frozenset(("configMap", "secret", "downwardAPI", "projected"))
# accelerators a training run pays for: GPUs of every vendor, MIG slices, TPUs, Trainium/Inferentia, Gaudi
GPU_RESOURCE_NAMES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu")
GPU_RESOURCE_PREFIXES = ("nvidia.com/mig-", "nvidia.com/gpu", "gpu.intel.com/", "aws.amazon.com/neuron", "habana.ai/")
ENV_REFERENCES = ("secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef")
CONTAINER_ROLES = (("initContainers", "init"), ("containers", "main"), ("ephemeralContainers", "ephemeral"))


# --------------------------------------------------------------------------- pod specs


@dataclass
class Pod:
    """What one pod spec contributes to the workload."""

    containers: list[Container]
    volumes: list[Volume]
    gpus: float
    gpu_at: Located | None
    grace: Located | None
    deadline: Located | None
    restart_policy: Located | None
    priority_class: Located | None


def read_volume(node: Node) -> Volume | None:
    entry = as_map(node)
    if entry is None:
        return None
    name = scalar_text(entry.get("name")) or ""
    keys = key_positions(entry)
    for key, (source, persistent) in VOLUME_SOURCES.items():
        holder = entry.get(key)
        if holder is None:
            continue
        claim = scalar_text(child(holder, "claimName"))
        if key == "csi" and "secrets-store" in (scalar_text(child(holder, "driver")) or ""):
            source, persistent = "secret", False
        return Volume(name, source, persistent, keys.get(key), claim)
    return Volume(name, "emptyDir", False, keys.get("name"))  # a volume with no source is an emptyDir


def read_env(container: Node) -> tuple[list[EnvVar], bool]:
    variables: list[EnvVar] = []
    for item in as_seq(container.get("env")):
        name = located_text(child(item, "name"))
        if name is None:
            continue
        value_from = as_map(child(item, "valueFrom"))
        reference = next((key for key in ENV_REFERENCES if value_from is not None and key in value_from.value), None)
        if value_from is not None and reference is None:
            reference = "valueFrom"
        value = None if reference else located_text(child(item, "value"))
        if value is not None and value.value == "":
            value = None
        variables.append(EnvVar(name, value, reference))
    from_secret = any(child(item, "secretRef") is not None for item in as_seq(container.get("envFrom")))
    return variables, from_secret


def read_mounts(container: Node, volumes: dict[str, Volume]) -> list[Mount]:
    mounts = []
    for item in as_seq(container.get("volumeMounts")):
        path = located_text(child(item, "mountPath"))
        if path is None:
            continue
        volume = volumes.get(scalar_text(child(item, "name")) or "")
        read_only = bool(truthy(child(item, "readOnly")))
        if volume is not None and volume.location is not None and volume.location.value in READ_ONLY_KEYS:
            read_only = True
        mounts.append(Mount(path, volume, read_only))
    return mounts


# what a device resource counts, for messages (every other GPU_RESOURCE_* name counts GPUs)
ACCELERATOR_WORDS = (("google.com/tpu", "TPU chip"), ("aws.amazon.com/neuroncore", "NeuronCore"),
                     ("aws.amazon.com/neuron", "Neuron device"), ("habana.ai/", "Gaudi accelerator"))


def read_accelerator(container: Node) -> str:
    """What the container's device request counts: ``TPU chip`` for ``google.com/tpu``, else ``GPU``."""
    resources = child(container, "resources") or child(container, "resourcesPerNode")
    for section in ("limits", "requests"):
        for key, _ in map_entries(child(resources, section)):
            name = str(key.value)
            word = next((word for prefix, word in ACCELERATOR_WORDS if name.startswith(prefix)), None)
            if word is not None:
                return word
    return "GPU"


def read_gpus(container: Node) -> Located | None:
    """GPUs a container asks for: ``limits`` first, ``requests`` when no limit is written."""
    resources = child(container, "resources") or child(container, "resourcesPerNode")
    for section in ("limits", "requests"):
        for key, value in map_entries(child(resources, section)):
            name = str(key.value)
            if name in GPU_RESOURCE_NAMES or name.startswith(GPU_RESOURCE_PREFIXES):
                where = located_number(value)
                if where is not None:
                    return where
    return None


def read_container(node: Node, role: str, volumes: dict[str, Volume], lines: SourceLines) -> Container | None:
    entry = as_map(node)
    if entry is None:
        return None
    env, from_secret = read_env(entry)
    if role == "init" and (scalar_text(entry.get("restartPolicy")) or "").lower() == "always":
        role = "sidecar"
    return Container(
        name=scalar_text(entry.get("name")) or "",
        role=role,
        image=located_text(entry.get("image")),
        command=words_of(entry.get("command"), lines),
        args=words_of(entry.get("args"), lines),
        env=env,
        env_from_secret=from_secret,
        mounts=read_mounts(entry, volumes),
        working_dir=located_text(entry.get("workingDir")),
        gpus=read_gpus(entry),
        accelerator=read_accelerator(entry),
    )


def fraction_gpus(metadata: Node | None) -> Located | None:
    """Run:ai/KAI GPU fractions: pod annotation ``gpu-fraction`` (× ``gpu-fraction-num-devices``)."""
    annotations = child(metadata, "annotations")
    where = located_number(child(annotations, "gpu-fraction"))
    if where is None:
        return None
    devices = to_number(scalar_text(child(annotations, "gpu-fraction-num-devices"))) or 1
    return where._replace(value=where.value * devices)


def read_pod(spec: Node, metadata: Node | None, lines: SourceLines, shared: list[Volume] | None = None,
             shared_mounts: list[Mount] | None = None) -> Pod:
    volumes: dict[str, Volume] = {}
    for item in as_seq(spec.get("volumes")):
        volume = read_volume(item)
        if volume is not None:
            volumes.setdefault(volume.name, volume)
    for volume in shared or []:
        volumes.setdefault(volume.name, volume)
    containers: list[Container] = []
    for key, role in CONTAINER_ROLES:
        for item in as_seq(spec.get(key)):
            container = read_container(item, role, volumes, lines)
            if container is not None:
                container.mounts.extend(shared_mounts or [])
                containers.append(container)
    main = [c for c in containers if c.role in ("main", "sidecar") and c.gpus is not None]
    init = [c for c in containers if c.role == "init" and c.gpus is not None]
    gpus = max(sum(c.gpus.value for c in main if c.gpus), max((c.gpus.value for c in init if c.gpus), default=0))
    gpu_at = next((c.gpus for c in main + init if c.gpus and c.gpus.value > 0), None)
    fraction = fraction_gpus(metadata)
    if fraction is not None and not gpus:
        gpus, gpu_at = fraction.value, fraction
    return Pod(containers, list(volumes.values()), gpus, gpu_at,
               located_number(spec.get("terminationGracePeriodSeconds")),
               located_number(spec.get("activeDeadlineSeconds")),
               located_text(spec.get("restartPolicy")),
               located_text(spec.get("priorityClassName")))

