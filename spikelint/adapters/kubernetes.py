"""Kubernetes objects -> workloads: Pods, Jobs, CronJobs, controllers, Kubeflow jobs, JobSets,
Volcano jobs, Argo workflows, and any other kind that holds a pod template.

Each kind says where its pod templates sit and where its lifecycle fields (retries,
deadline, clean-up) live; the pod specs themselves are read once, by :func:`read_pod`.
Those two are :mod:`spikelint.adapters.kubernetes_kinds` and
:mod:`spikelint.adapters.kubernetes_pods`; this module assembles the workload from them.
"""

from __future__ import annotations

import posixpath

from spikelint.adapters.common import SourceLines
from spikelint.adapters.common import as_map
from spikelint.adapters.common import as_seq
from spikelint.adapters.common import child
from spikelint.adapters.common import disable_suppressions
from spikelint.adapters.common import document_range
from spikelint.adapters.common import key_positions
from spikelint.adapters.common import located_text
from spikelint.adapters.common import merge_missing
from spikelint.adapters.common import preemptible_priority
from spikelint.adapters.common import scalar_text
from spikelint.adapters.common import string_map
from spikelint.config import Config
from spikelint.model import Container
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Node
from spikelint.model import Volume
from spikelint.model import Workload
from spikelint.adapters.kubernetes_kinds import GENERIC
from spikelint.adapters.kubernetes_kinds import HANDLERS
from spikelint.adapters.kubernetes_kinds import Lifecycle
from spikelint.adapters.kubernetes_kinds import Template
from spikelint.adapters.kubernetes_kinds import is_volcano
from spikelint.adapters.kubernetes_pods import CONTAINER_ROLES
from spikelint.adapters.kubernetes_pods import Pod
from spikelint.adapters.kubernetes_pods import read_pod
from spikelint.adapters.platforms import kubernetes_platform


# --------------------------------------------------------------------------- assembling the workload


def volume_claim_templates(root: Node) -> list[Volume]:
    """StatefulSet ``volumeClaimTemplates`` and Argo's: persistent claims named by their metadata."""
    volumes = []
    for item in as_seq(child(root, "spec", "volumeClaimTemplates")):
        name = scalar_text(child(item, "metadata", "name"))
        if name:
            where = located_text(child(item, "metadata", "name"))
            volumes.append(Volume(name, "pvc", True, where, name))
    return volumes


def volcano_volumes(root: Node) -> list[Mount]:
    """Volcano job-level ``spec.volumes[{mountPath, volumeClaimName | volumeClaim}]``, mounted everywhere."""
    if not is_volcano(root):
        return []
    mounts = []
    for item in as_seq(child(root, "spec", "volumes")):
        path = located_text(child(item, "mountPath"))
        if path is None:
            continue
        claim = scalar_text(child(item, "volumeClaimName"))
        location = located_text(child(item, "volumeClaimName")) or path
        mounts.append(Mount(path, Volume(claim or f"volcano-{path.value}", "pvc", True, location, claim)))
    return mounts


def kubernetes_workload(root: Node, path: str, config: Config, lines: SourceLines) -> Workload | None:
    kind = scalar_text(root.get("kind")) or ""
    handler = HANDLERS.get(kind, GENERIC)
    templates = handler.templates(root)
    if not any(as_seq(child(template.spec, key)) for template in templates for key, _ in CONTAINER_ROLES):
        return None  # no pod template with containers: nothing runs, so nothing to check
    lifecycle = handler.lifecycle(root, templates)
    shared_mounts = volcano_volumes(root)
    shared_volumes = volume_claim_templates(root) + [m.volume for m in shared_mounts if m.volume is not None]
    anchor = root.key_at("kind") or Located(kind, root.line, root.column)
    metadata = as_map(root.get("metadata"))
    api_version = scalar_text(root.get("apiVersion")) or ""
    workload = Workload(path=path, source="kubernetes", kind=kind, anchor=anchor,
                        name=located_text(child(metadata, "name")) or located_text(child(metadata, "generateName")),
                        namespace=located_text(child(metadata, "namespace")))
    workload.labels = string_map(child(metadata, "labels"))
    workload.annotations = string_map(child(metadata, "annotations"))
    workload.disabled_rules = disable_suppressions(workload.annotations, key_positions(child(metadata, "annotations")))
    pods = [(template, read_pod(template.spec, template.metadata, lines, shared_volumes, shared_mounts))
            for template in templates]
    add_pods(workload, pods, metadata)
    finish_lifecycle(workload, lifecycle, pods, config)
    entrypoint = (scalar_text(child(root, "spec", "entrypoint")) or "") if api_version.startswith("ray.io/") else ""
    workload.platform = kubernetes_platform(kind, api_version, document_range(root),
                                            storage_unknown=bool(lifecycle.storage_from),
                                            platform_paths=tuple(katib_metrics_folders(root)), entrypoint=entrypoint)
    return workload


KATIB_DEFAULT_FILE = "/var/log/katib/metrics.log"


def katib_metrics_folders(root: Node) -> list[str]:
    """Folders Katib's controller mounts (a shared volume with its metrics-collector sidecar) for the
    trial to write metrics to: ``metricsCollectorSpec.source.fileSystemPath`` (a file's folder, or
    a directory), or the ``File`` collector's default ``/var/log/katib/metrics.log``."""
    if scalar_text(root.get("kind")) != "Experiment" or \
            not (scalar_text(root.get("apiVersion")) or "").startswith("kubeflow.org/"):
        return []
    spec = child(root, "spec", "metricsCollectorSpec")
    path = scalar_text(child(spec, "source", "fileSystemPath", "path"))
    kind = (scalar_text(child(spec, "source", "fileSystemPath", "kind")) or "").lower()
    collector = (scalar_text(child(spec, "collector", "kind")) or "").lower()
    if path is None and collector == "file":
        path = KATIB_DEFAULT_FILE
    if not path or not path.startswith("/"):
        return []
    folder = path.rstrip("/") if kind == "directory" or collector == "tensorflowevent" else posixpath.dirname(path)
    return [folder or "/"]


def add_pods(workload: Workload, pods: list[tuple[Template, Pod]], object_metadata: Node | None) -> None:
    """Containers, volumes, pod counts and GPUs of every pod template; template labels and
    annotations complete the object's own."""
    seen_volumes: set[int] = set()
    total = 0.0
    gpu_at: Located | None = None
    for template, pod in pods:
        if template.metadata is not None and template.metadata is not object_metadata:
            merge_missing(workload.labels, string_map(child(template.metadata, "labels")))
            notes = child(template.metadata, "annotations")
            merge_missing(workload.annotations, string_map(notes))
            workload.disabled_rules.extend(disable_suppressions(string_map(notes), key_positions(notes)))
        for container in pod.containers:
            container.replica_group = template.group
            container.replicas = template.replicas
            workload.containers.append(container)
        for volume in pod.volumes:
            if id(volume) not in seen_volumes:
                seen_volumes.add(id(volume))
                workload.volumes.append(volume)
        total += template.replicas * pod.gpus
        if gpu_at is None and pod.gpu_at is not None and template.replicas > 0:
            gpu_at = pod.gpu_at
    workload.pods = sum(template.replicas for template, _ in pods) if pods else 1
    if gpu_at is not None and total > 0:
        workload.gpus_total = gpu_at._replace(value=int(total) if float(total).is_integer() else total)
    workload.persistent_mount_paths = persistent_paths(workload.containers)


def persistent_paths(containers: list[Container]) -> list[Located]:
    found: list[Located] = []
    seen: set[tuple[str, int, int]] = set()
    for container in containers:
        for mount in container.mounts:
            if mount.volume is not None and mount.volume.persistent:
                key = (str(mount.path.value), mount.path.line, mount.path.column)
                if key not in seen:
                    seen.add(key)
                    found.append(mount.path)
    return found


def finish_lifecycle(workload: Workload, lifecycle: Lifecycle, pods: list[tuple[Template, Pod]],
                     config: Config) -> None:
    workload.ttl = lifecycle.ttl
    workload.supports_ttl = lifecycle.supports_ttl
    workload.supports_deadline = lifecycle.supports_deadline
    graces = [pod.grace for _, pod in pods if pod.grace is not None]
    workload.grace_period = min(graces, key=lambda where: where.value) if graces else None
    pod_deadlines = [pod.deadline for _, pod in pods if pod.deadline is not None]
    workload.deadline = lifecycle.deadline or (pod_deadlines[0] if pod_deadlines and len(pod_deadlines) == len(pods)
                                               else None)
    policies = [pod.restart_policy for _, pod in pods if pod.restart_policy is not None]
    workload.restart_policy = policies[0] if policies else None
    workload.retries = lifecycle.retries
    workload.default_retries = lifecycle.default_retries
    workload.priority_class = next((pod.priority_class for _, pod in pods if pod.priority_class is not None), None)
    workload.preemptible = preemptible_priority(
        str(workload.priority_class.value) if workload.priority_class else None, config.preemptible_priority_classes)


def kubernetes_workloads(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    """Workloads of one object; a ``List`` (``kind: List``/``*List``) yields its items'."""
    if root.kind != "map":
        return []
    kind = scalar_text(root.get("kind")) or ""
    if kind.endswith("List") and root.get("items") is not None:
        found = []
        for item in as_seq(root.get("items")):
            if as_map(item) is not None and scalar_text(item.get("kind")):
                found.extend(kubernetes_workloads(item, path, config, lines))
        return found
    workload = kubernetes_workload(root, path, config, lines)
    return [workload] if workload is not None else []
