"""Where each Kubernetes kind keeps its pod templates and how it writes retries, deadline and clean-up.

One handler per kind (Pod, Job, CronJob, controllers, Kubeflow jobs, JobSet, Volcano, Argo
workflows, TrainJob) plus a generic one for any other kind that holds a pod template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from spikelint.adapters.common import RESTARTING_POLICIES
from spikelint.adapters.common import UNBOUNDED_RETRIES
from spikelint.adapters.common import as_map
from spikelint.adapters.common import as_seq
from spikelint.adapters.common import child
from spikelint.adapters.common import located_number
from spikelint.adapters.common import located_text
from spikelint.adapters.common import map_entries
from spikelint.adapters.common import scalar_text
from spikelint.adapters.common import to_number
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import walk


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
    storage_from: str = ""  # what else attaches volumes to its pods (a TrainJob's runtime): storage is not all here


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
    """The runtime a TrainJob names brings the pods' volumes and mounts (and ``podTemplateOverrides`` more):
    what the TrainJob alone shows of its storage is not all of it."""
    runtime = scalar_text(child(root, "spec", "runtimeRef", "name"))
    return Lifecycle(storage_from=f"runtime {runtime!r}" if runtime else "")


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


