"""Kubernetes objects -> workloads: Pods, Jobs, CronJobs, controllers, Kubeflow jobs, JobSets,
Volcano jobs, Argo workflows, and any other kind that holds a pod template.

Each kind says where its pod templates sit and where its lifecycle fields (retries,
deadline, clean-up) live; the pod specs themselves are read once, by :func:`read_pod`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Callable

from spikelint.adapters.common import RESTARTING_POLICIES
from spikelint.adapters.common import UNBOUNDED_RETRIES
from spikelint.adapters.common import SourceLines
from spikelint.adapters.common import as_map
from spikelint.adapters.common import as_seq
from spikelint.adapters.common import child
from spikelint.adapters.common import disable_suppressions
from spikelint.adapters.common import document_range
from spikelint.adapters.common import key_positions
from spikelint.adapters.common import located_number
from spikelint.adapters.common import located_text
from spikelint.adapters.common import map_entries
from spikelint.adapters.common import merge_missing
from spikelint.adapters.common import preemptible_priority
from spikelint.adapters.common import scalar_text
from spikelint.adapters.common import string_map
from spikelint.adapters.common import to_number
from spikelint.adapters.common import truthy
from spikelint.adapters.common import words_of
from spikelint.config import Config
from spikelint.model import Container
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import Node
from spikelint.model import walk
from spikelint.model import Volume
from spikelint.model import Workload

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
GPU_RESOURCE_NAMES = ("nvidia.com/gpu", "amd.com/gpu")
GPU_RESOURCE_PREFIXES = ("gpu.intel.com/",)
ENV_REFERENCES = ("secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef")
CONTAINER_ROLES = (("initContainers", "init"), ("containers", "main"), ("ephemeralContainers", "ephemeral"))
KUBEFLOW_KINDS = frozenset(("PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"))
CONTROLLER_KINDS = frozenset(("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ReplicationController"))
WORKFLOW_KINDS = frozenset(("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"))


@dataclass
class Template:
    """One pod template of a workload and how many pods run it."""

    spec: Node
    metadata: Node | None
    replicas: int = 1
    group: str = ""
    restart_policy: Node | None = None  # Kubeflow's per-replica restartPolicy


@dataclass
class Lifecycle:
    """Retries, deadline and clean-up as one kind writes them."""

    retries: Located | None = None
    default_retries: int = 0
    ttl: Located | None = None
    deadline: Located | None = None
    supports_ttl: bool = False
    supports_deadline: bool = False


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


# --------------------------------------------------------------------------- where each kind keeps its pods


def template_of(holder: Node | None, replicas: int = 1, group: str = "", restart: Node | None = None) -> list[Template]:
    """``holder.template`` as a pod template (``template.spec`` holds the PodSpec)."""
    spec = as_map(child(holder, "template", "spec"))
    if spec is None:
        return []
    return [Template(spec, as_map(child(holder, "template", "metadata")), replicas, group, restart)]


def count(node: Node | None, default: int = 1) -> int:
    number = to_number(node.value) if node is not None and node.kind == "scalar" else None
    if number is None or number < 0:
        return default
    return int(number)


def job_pods(job_spec: Node | None) -> int:
    """Pods a Job runs at once: ``parallelism`` (default 1), at most ``completions``."""
    parallelism = count(child(job_spec, "parallelism"), 1)
    completions = child(job_spec, "completions")
    if completions is not None:
        parallelism = min(parallelism, count(completions, parallelism))
    return parallelism


def pod_templates(root: Node) -> list[Template]:
    spec = as_map(root.get("spec"))
    return [Template(spec, as_map(root.get("metadata")))] if spec is not None else []


def job_templates(root: Node) -> list[Template]:
    spec = child(root, "spec")
    return template_of(spec, job_pods(spec))


def cronjob_templates(root: Node) -> list[Template]:
    spec = child(root, "spec", "jobTemplate", "spec")
    return template_of(spec, job_pods(spec))


def controller_templates(root: Node) -> list[Template]:
    spec = child(root, "spec")
    return template_of(spec, count(child(spec, "replicas"), 1))


def replica_specs(root: Node) -> list[tuple[str, Node]]:
    """Kubeflow ``*ReplicaSpecs``: (role, replica spec) pairs."""
    found: list[tuple[str, Node]] = []
    for key, value in map_entries(child(root, "spec")):
        if str(key.value).endswith("ReplicaSpecs"):
            found.extend((str(role.value), spec) for role, spec in map_entries(value))
    return found


def kubeflow_templates(root: Node) -> list[Template]:
    templates = []
    for role, spec in replica_specs(root):
        templates.extend(template_of(spec, count(child(spec, "replicas"), 1), role, child(spec, "restartPolicy")))
    return templates


def jobset_templates(root: Node) -> list[Template]:
    templates = []
    for job in as_seq(child(root, "spec", "replicatedJobs")):
        job_spec = child(job, "template", "spec")
        replicas = count(child(job, "replicas"), 1) * job_pods(job_spec)
        templates.extend(template_of(job_spec, replicas, scalar_text(child(job, "name")) or ""))
    return templates


def volcano_templates(root: Node) -> list[Template]:
    templates = []
    for task in as_seq(child(root, "spec", "tasks")):
        templates.extend(template_of(task, count(child(task, "replicas"), 1), scalar_text(child(task, "name")) or ""))
    return templates


def generic_templates(root: Node) -> list[Template]:
    """Any map holding a ``containers`` list of maps with an ``image`` is a pod spec."""
    templates = []
    for path, node in walk(root):  # the tree's shared walk; parents are looked up for candidates only
        if node.kind != "map" or not path or "containers" not in node.value:
            continue
        containers = as_seq(node.value["containers"])
        if not any(as_map(item) is not None and item.get("image") is not None for item in containers):
            continue
        holder = root.get(*path[:-1])
        metadata = as_map(holder.get("metadata")) if holder is not None and holder.get("spec") is node else None
        grand = root.get(*path[:-2]) if holder is not None and len(path) >= 2 else None
        replicas = count(child(grand, "replicas"), 1) if grand is not None and grand.get("template") is holder else 1
        templates.append(Template(node, metadata, replicas))
    return templates


# --------------------------------------------------------------------------- lifecycle per kind


def job_lifecycle(job_spec: Node | None) -> Lifecycle:
    return Lifecycle(retries=located_number(child(job_spec, "backoffLimit")), default_retries=6,
                     ttl=located_number(child(job_spec, "ttlSecondsAfterFinished")),
                     deadline=located_number(child(job_spec, "activeDeadlineSeconds")))


def kubeflow_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    spec = child(root, "spec")
    policy = child(spec, "runPolicy")

    def either(key: str) -> Located | None:
        return located_number(child(policy, key)) or located_number(child(spec, key))

    retries = either("backoffLimit")
    if retries is None:
        retries = restart_retries([template.restart_policy for template in templates])
    return Lifecycle(retries=retries, ttl=either("ttlSecondsAfterFinished"),
                     deadline=either("activeDeadlineSeconds"), supports_ttl=True, supports_deadline=True)


def restart_retries(policies: list[Node | None]) -> Located | None:
    """A restart policy that restarts failed containers, as an unbounded retry count."""
    for node in policies:
        where = located_text(node)
        if where is not None and where.value.lower() in RESTARTING_POLICIES:
            return where._replace(value=UNBOUNDED_RETRIES)
    return None


def jobset_lifecycle(root: Node) -> Lifecycle:
    spec = child(root, "spec")
    max_restarts = located_number(child(spec, "failurePolicy", "maxRestarts"))
    jobs = [child(job, "template", "spec") for job in as_seq(child(spec, "replicatedJobs"))]
    limits = [located_number(child(job, "backoffLimit")) for job in jobs]
    lifecycle = Lifecycle(ttl=located_number(child(spec, "ttlSecondsAfterFinished")), supports_ttl=True,
                          supports_deadline=True)
    written = [limit for limit in limits if limit is not None]
    if max_restarts is not None and max_restarts.value > 0:
        lifecycle.retries = max_restarts
    elif any(limit.value > 0 for limit in written):
        lifecycle.retries = next(limit for limit in written if limit.value > 0)
    elif jobs and len(written) == len(jobs):
        lifecycle.retries = max_restarts or written[0]
    else:
        lifecycle.default_retries = 6
        lifecycle.retries = None
    deadlines = [located_number(child(job, "activeDeadlineSeconds")) for job in jobs]
    own = located_number(child(spec, "activeDeadlineSeconds"))
    if own is not None:
        lifecycle.deadline = own
    elif jobs and all(deadline is not None for deadline in deadlines):
        lifecycle.deadline = deadlines[0]
    return lifecycle


def volcano_lifecycle(root: Node) -> Lifecycle:
    spec = child(root, "spec")
    return Lifecycle(retries=located_number(child(spec, "maxRetry")), default_retries=3,
                     ttl=located_number(child(spec, "ttlSecondsAfterFinished")), supports_ttl=True)


def is_volcano(root: Node) -> bool:
    return (scalar_text(root.get("apiVersion")) or "").startswith("batch.volcano.sh/")


@dataclass(frozen=True)
class KindHandler:
    templates: Callable[[Node], list[Template]]
    lifecycle: Callable[[Node, list[Template]], Lifecycle]


def _job_handler_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    if is_volcano(root):
        return volcano_lifecycle(root)
    lifecycle = job_lifecycle(child(root, "spec"))
    lifecycle.supports_ttl = lifecycle.supports_deadline = True
    return lifecycle


def _job_handler_templates(root: Node) -> list[Template]:
    return volcano_templates(root) if is_volcano(root) else job_templates(root)


def _cronjob_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    lifecycle = job_lifecycle(child(root, "spec", "jobTemplate", "spec"))
    lifecycle.supports_deadline = True
    return lifecycle


def pod_restarts(templates: list[Template]) -> Located | None:
    return restart_retries([child(template.spec, "restartPolicy") for template in templates])


def _pod_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    return Lifecycle(retries=pod_restarts(templates))


def _controller_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    return Lifecycle(retries=pod_restarts(templates))


# how other operators write their retry count (SageMaker HyperPod ``runPolicy.jobMaxRetryCount``, Volcano-like
# ``maxRetry``, Ray ``backoffLimit``, LeaderWorkerSet ``restartPolicy``…), read outside the pod templates
RETRY_KEYS = frozenset(("backoffLimit", "maxRetry", "maxRetries", "jobMaxRetryCount", "numRestartOnFailure",
                        "maxRestarts", "restartLimit", "retryLimit"))


def _generic_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    """An unknown kind with pod templates: retries from a retry-count key of its spec, else the pods' policy."""
    counts: list[Located] = []
    for path, node in walk(root):
        if path and path[0] == "spec" and isinstance(path[-1], str) and path[-1] in RETRY_KEYS \
                and "template" not in path:
            where = located_number(node)
            if where is not None:
                counts.append(where)
    retries = next((where for where in counts if where.value > 0), counts[0] if counts else None)
    return Lifecycle(retries=retries or pod_restarts(templates))


def workflow_templates(root: Node) -> list[Template]:
    """Argo: every template's ``container``/``script``/``containerSet`` becomes one pod."""
    spec = child(root, "spec")
    if child(spec, "workflowSpec") is not None:
        spec = child(spec, "workflowSpec")
    templates = []
    for item in as_seq(child(spec, "templates")):
        entry = as_map(item)
        if entry is None:
            continue
        containers = [node for node in (entry.get("container"), entry.get("script")) if as_map(node) is not None]
        containers.extend(as_seq(child(entry, "containerSet", "containers")))
        if not containers:
            continue
        pod = Node("map", {"containers": Node("seq", containers, entry.line, entry.column, entry.end_line,
                                                 entry.end_column),
                           "volumes": child(spec, "volumes") or Node("seq", [], 1, 1, 1, 1)},
                   entry.line, entry.column, entry.end_line, entry.end_column, keys={})
        templates.append(Template(pod, as_map(entry.get("metadata")), 1, scalar_text(entry.get("name")) or ""))
    return templates


def trainjob_templates(root: Node) -> list[Template]:
    """Kubeflow Trainer v2 ``TrainJob``: ``spec.trainer`` overrides the runtime's trainer container
    (image, command, args, env, ``resourcesPerNode``) on ``numNodes`` pods."""
    trainer = as_map(child(root, "spec", "trainer"))
    if trainer is None:
        return []
    pod = Node("map", {"containers": Node("seq", [trainer], trainer.line, trainer.column, trainer.end_line,
                                          trainer.end_column)},
               trainer.line, trainer.column, trainer.end_line, trainer.end_column, keys={})
    return [Template(pod, None, count(trainer.get("numNodes"), 1), "trainer")]


def _trainjob_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    return Lifecycle()


def _workflow_lifecycle(root: Node, templates: list[Template]) -> Lifecycle:
    return Lifecycle(retries=pod_restarts(templates))


HANDLERS: dict[str, KindHandler] = {
    "Pod": KindHandler(pod_templates, _pod_lifecycle),
    "Job": KindHandler(_job_handler_templates, _job_handler_lifecycle),
    "CronJob": KindHandler(cronjob_templates, _cronjob_lifecycle),
    "JobSet": KindHandler(jobset_templates, lambda root, templates: jobset_lifecycle(root)),
    **{kind: KindHandler(controller_templates, _controller_lifecycle) for kind in CONTROLLER_KINDS},
    **{kind: KindHandler(kubeflow_templates, kubeflow_lifecycle) for kind in KUBEFLOW_KINDS},
    **{kind: KindHandler(workflow_templates, _workflow_lifecycle) for kind in WORKFLOW_KINDS},
    "TrainJob": KindHandler(trainjob_templates, _trainjob_lifecycle),
    "RunaiJob": KindHandler(job_templates, _job_handler_lifecycle),  # Run:ai's own Job kind (run.ai/v1)
}
GENERIC = KindHandler(generic_templates, _generic_lifecycle)


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
    workload = Workload(path=path, source="kubernetes", kind=kind, anchor=anchor,
                        name=located_text(child(metadata, "name")) or located_text(child(metadata, "generateName")))
    workload.labels = string_map(child(metadata, "labels"))
    workload.annotations = string_map(child(metadata, "annotations"))
    workload.disabled_rules = disable_suppressions(workload.annotations, key_positions(child(metadata, "annotations")))
    pods = [(template, read_pod(template.spec, template.metadata, lines, shared_volumes, shared_mounts))
            for template in templates]
    add_pods(workload, pods, metadata)
    finish_lifecycle(workload, lifecycle, pods, config)
    workload.extra["line_range"] = document_range(root)
    workload.extra["api_version"] = scalar_text(root.get("apiVersion")) or ""
    if workload.extra["api_version"].startswith("ray.io/"):
        workload.extra["entrypoint"] = scalar_text(child(root, "spec", "entrypoint")) or ""
    managed = katib_metrics_folders(root)
    if managed:
        workload.extra["platform_paths"] = managed
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
    workload.extra["restart_policy"] = policies[0] if policies else None
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
