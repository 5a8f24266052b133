"""Kubernetes objects -> workloads: where every kind keeps its pods and lifecycle fields."""

from __future__ import annotations

from adapter_support import column_of
from adapter_support import line_of
from adapter_support import load
from adapter_support import one

from spikelint.adapters import UNBOUNDED_RETRIES
from spikelint.config import Config

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: carol-train
  annotations:
    spikelint.io/disable: "SPK101, SPK702"
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 0
  priorityClassName: spot-low
  initContainers:
    - name: fetch
      image: alpine/git:2.45.2
      volumeMounts: [{name: src, mountPath: /src}]
    - name: proxy
      image: envoyproxy/envoy:v1.31.0
      restartPolicy: Always
  containers:
    - name: main
      image: harbor.example.org/nlp/bert-ft
      command: ["bash", "-c"]
      args:
        - |
          python /src/train.py --output_dir /scratch/out
      env:
        - {name: WANDB_API_KEY, value: "0123456789abcdef0123456789abcdef01234567"}
        - {name: EMPTY, value: ""}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: TOKEN
          valueFrom: {secretKeyRef: {name: s, key: k}}
        - name: NUMBER
          value: 8
      envFrom:
        - secretRef: {name: all-secrets}
      resources:
        limits: {nvidia.com/gpu: 2}
      volumeMounts:
        - {name: scratch, mountPath: /scratch}
        - {name: src, mountPath: /src}
        - {name: host-raid, mountPath: /raid}
        - {name: cfg, mountPath: /etc/cfg}
        - {name: shared, mountPath: /shared}
        - {name: scratch-claim, mountPath: /fast}
        - {name: undeclared, mountPath: /nowhere}
        - {name: info, mountPath: /etc/podinfo}
  volumes:
    - {name: scratch, emptyDir: {}}
    - {name: src, emptyDir: {}}
    - {name: host-raid, hostPath: {path: /raid, type: Directory}}
    - {name: cfg, configMap: {name: cfg}}
    - {name: shared, nfs: {server: nfs.example.org, path: /export}}
    - name: scratch-claim
      ephemeral:
        volumeClaimTemplate:
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Ti}}}
    - {name: info, downwardAPI: {items: []}}
"""


def test_pod_containers_roles_and_env() -> None:
    workload = one("pod.yaml", POD)
    assert workload.kind == "Pod" and workload.source == "kubernetes"
    assert [(c.name, c.role) for c in workload.containers] == [("fetch", "init"), ("proxy", "sidecar"),
                                                                 ("main", "main")]
    main = workload.containers[2]
    env = {str(v.name.value): (v.value.value if v.value else None, v.reference) for v in main.env}
    assert env == {"WANDB_API_KEY": ("0123456789abcdef0123456789abcdef01234567", None), "EMPTY": (None, None),
                   "POD_NAME": (None, "fieldRef"), "TOKEN": (None, "secretKeyRef"), "NUMBER": ("8", None)}
    key = main.env[0].value
    assert (key.line, key.column) == (line_of(POD, "WANDB_API_KEY"), column_of(POD, '"0123'))
    assert main.env_from_secret
    assert [str(w.value) for w in main.command] == ["bash", "-c"]
    assert main.args[0].value.startswith("python /src/train.py")
    # a block scalar is located where its text starts, so embedded scripts keep exact positions
    assert (main.args[0].line, main.args[0].column) == (line_of(POD, "python /src"), column_of(POD, "python /src"))


def test_pod_volumes_and_mounts() -> None:
    workload = one("pod.yaml", POD)
    main = workload.containers[2]
    mounts = {str(m.path.value): (m.volume.source if m.volume else None, m.volume.persistent if m.volume else None,
                                  m.read_only) for m in main.mounts}
    assert mounts == {
        "/scratch": ("emptyDir", False, False), "/src": ("emptyDir", False, False),
        "/raid": ("hostPath", False, False), "/etc/cfg": ("configMap", False, True),
        "/shared": ("nfs", True, False), "/fast": ("ephemeral-pvc", False, False),
        "/nowhere": (None, None, False), "/etc/podinfo": ("other", False, True),
    }
    assert [str(p.value) for p in workload.persistent_mount_paths] == ["/shared"]
    scratch = main.mounts[0].path
    assert (scratch.line, scratch.column) == (line_of(POD, "{name: scratch, mountPath"), column_of(POD, "/scratch}"))


def test_pod_lifecycle_gpus_and_suppression() -> None:
    workload = one("pod.yaml", POD)
    assert workload.is_training  # python runs a training script inside bash -c
    assert workload.preemptible  # priority class 'spot-low'
    assert workload.retries is not None and workload.retries.value == UNBOUNDED_RETRIES
    assert workload.retries.line == line_of(POD, "restartPolicy: OnFailure")
    assert workload.grace_period is not None and workload.grace_period.value == 0
    assert workload.gpus_total is not None and workload.gpus_total.value == 2
    assert workload.gpus_total.line == line_of(POD, "nvidia.com/gpu")
    assert not workload.supports_ttl and not workload.supports_deadline
    [suppression] = workload.disabled_rules
    assert suppression.rules == ("SPK101", "SPK702") and suppression.applies_to == ()
    assert (suppression.line, suppression.column) == (6, 5)
    assert workload.platform.line_range == (1, len(POD.splitlines()))


JOB_DEFAULTS = """\
# leading comment
apiVersion: batch/v1
kind: Job
metadata: {name: eval}
spec:
  parallelism: 4
  completions: 2
  template:
    metadata:
      labels: {runai/queue: team, app: eval}
      annotations: {spikelint.io/baseline: eval-1gpu-r1}
    spec:
      restartPolicy: Never
      activeDeadlineSeconds: 3600
      containers:
        - name: eval
          image: busybox:1.36.1
          command: ["sh", "-c", "echo hi"]
          resources:
            requests: {amd.com/gpu: "1"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      ttlSecondsAfterFinished: 60
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - {name: eval, image: "busybox:1.36.1", resources: {limits: {gpu.intel.com/i915: 1}}}
"""


def test_job_defaults_and_cronjob() -> None:
    job, cron = load("jobs.yaml", JOB_DEFAULTS)
    assert job.kind == "Job" and job.supports_ttl and job.supports_deadline
    assert not job.is_training and job.purpose == "utility"  # `sh -c "echo hi"` trains nothing
    assert job.retries is None and job.default_retries == 6
    assert job.pods == 2 and job.gpus_total is not None and job.gpus_total.value == 2
    assert job.deadline is not None and job.deadline.value == 3600  # pod-level deadline bounds the pods
    assert job.labels["runai/queue"].value == "team" and "spikelint.io/baseline" in job.annotations
    assert job.anchor.line == 3 and job.platform.line_range == (2, 20)
    assert cron.kind == "CronJob" and cron.supports_deadline and not cron.supports_ttl
    assert not cron.is_training  # a busybox image's entrypoint, even on a GPU
    assert cron.ttl is not None and cron.ttl.value == 60
    assert cron.deadline is None and cron.default_retries == 6
    assert cron.gpus_total is not None and cron.gpus_total.value == 1


CONTROLLERS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm-server}
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.6.3
          command: ["python", "-m", "vllm.entrypoints.openai.api_server"]
          resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer}
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: trainer:1.0.0
          command: ["torchrun", "--nproc_per_node", "2", "pretrain.py"]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: worker}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: worker
          image: trainer:1.0.0
          volumeMounts: [{name: state, mountPath: /state}]
  volumeClaimTemplates:
    - metadata: {name: state}
      spec: {accessModes: [ReadWriteOnce]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: exporter}
spec:
  template:
    spec:
      containers: [{name: dcgm, image: "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04"}]
"""


def test_controllers() -> None:
    server, trainer, stateful, daemon = load("controllers.yaml", CONTROLLERS)
    assert not server.is_training and server.pods == 3 and server.gpus_total.value == 3
    assert trainer.is_training
    assert not stateful.is_training and stateful.pods == 2
    mount = stateful.containers[0].mounts[0]
    assert mount.volume is not None and mount.volume.source == "pvc" and mount.volume.persistent
    assert not daemon.is_training and daemon.gpus_total is None
    assert not any(w.supports_ttl or w.supports_deadline for w in (server, trainer, stateful, daemon))


PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata: {annotations: {spikelint.io/baseline: ddp-1gpu}}
        spec:
          containers:
            - {name: pytorch, image: "t:1.0.0", resources: {limits: {nvidia.com/gpu: 8}}}
    Worker:
      replicas: 3
      restartPolicy: OnFailure
      template:
        spec:
          terminationGracePeriodSeconds: 20
          containers:
            - {name: pytorch, image: "t:1.0.0", resources: {limits: {nvidia.com/gpu: "8"}}}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi}
spec:
  runPolicy: {backoffLimit: 0, activeDeadlineSeconds: 100}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{name: launcher, image: "m:1.0.0"}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: worker, image: "m:1.0.0", resources: {limits: {nvidia.com/gpu: 4}}}]
"""


def test_kubeflow_jobs() -> None:
    ddp, mpi = load("kubeflow.yaml", PYTORCHJOB)
    assert ddp.pods == 4 and ddp.gpus_total.value == 32
    assert ddp.gpus_total.line == line_of(PYTORCHJOB, "gpu: 8")
    assert [(c.replica_group, c.replicas) for c in ddp.containers] == [("Master", 1), ("Worker", 3)]
    assert ddp.retries is not None and ddp.retries.value == UNBOUNDED_RETRIES
    assert ddp.grace_period.value == 20 and ddp.ttl is None and ddp.deadline is None
    assert ddp.supports_ttl and ddp.supports_deadline and ddp.is_training
    assert "spikelint.io/baseline" in ddp.annotations
    assert mpi.retries.value == 0 and mpi.deadline.value == 100
    assert mpi.pods == 3 and mpi.gpus_total.value == 8
    assert mpi.gpus_total.line == line_of(PYTORCHJOB, "nvidia.com/gpu: 4")


JOBSET_VOLCANO = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: jax}
spec:
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 4
          completions: 4
          activeDeadlineSeconds: 7200
          template:
            spec:
              containers: [{name: jax, image: "j:1.0.0", resources: {limits: {nvidia.com/gpu: 4}}}]
    - name: driver
      template:
        spec:
          backoffLimit: 0
          template:
            spec:
              containers: [{name: driver, image: "j:1.0.0"}]
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bench}
spec:
  maxRetry: 2
  volumes:
    - {mountPath: /ckpt, volumeClaimName: bench-results}
  tasks:
    - name: master
      replicas: 1
      template:
        spec:
          containers: [{name: master, image: "v:0.0.3"}]
    - name: worker
      replicas: 2
      template:
        spec:
          containers: [{name: worker, image: "v:0.0.3", resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def test_jobset_and_volcano() -> None:
    jobset, volcano = load("batch.yaml", JOBSET_VOLCANO)
    assert jobset.pods == 9 and jobset.gpus_total.value == 32
    assert jobset.retries is None and jobset.default_retries == 6  # the first child Job keeps its default 6
    assert jobset.deadline is None  # the driver child job has none
    assert jobset.supports_deadline and jobset.supports_ttl
    assert volcano.kind == "Job" and volcano.platform.api_version.startswith("batch.volcano.sh")
    assert volcano.retries.value == 2 and volcano.default_retries == 3
    assert volcano.pods == 3 and volcano.gpus_total.value == 2
    assert not volcano.supports_deadline
    assert all(str(m.path.value) == "/ckpt" and m.volume.persistent for c in volcano.containers for m in c.mounts)


def test_jobset_restarts_win_over_child_defaults() -> None:
    text = JOBSET_VOLCANO.split("---")[0].replace("spec:\n  replicatedJobs:",
                                                   "spec:\n  failurePolicy: {maxRestarts: 4}\n  replicatedJobs:")
    workload = one("jobset.yaml", text)
    assert workload.retries.value == 4 and workload.retries.line == 5


OTHERS = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: train-}
spec:
  volumeClaimTemplates:
    - metadata: {name: work}
  templates:
    - name: train
      container:
        image: trainer:1.0.0
        command: [python, train.py]
        volumeMounts: [{name: work, mountPath: /work}]
    - name: steps
      steps: [[{name: t, template: train}]]
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: ray-train}
spec:
  entrypoint: python finetune.py --epochs 3
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: "rayproject/ray:2.9.0"}]
    workerGroupSpecs:
      - replicas: 2
        template:
          spec:
            containers: [{name: w, image: "rayproject/ray:2.9.0", resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm}
spec:
  predictor:
    containers:
      - {name: kserve-container, image: "s:1.0.0", command: [python, train_server.py]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: b}
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata: {name: listed}
    spec:
      containers: [{name: c, image: "c:1.0.0"}]
"""


def test_argo_generic_kinds_and_lists() -> None:
    argo, ray, inference, listed = load("others.yaml", OTHERS)
    assert argo.kind == "Workflow" and argo.is_training
    assert [str(w.value) for w in argo.containers[0].command] == ["python", "train.py"]
    assert argo.containers[0].mounts[0].volume.persistent
    assert ray.kind == "RayJob" and ray.is_training and ray.pods == 3 and ray.gpus_total.value == 2
    assert inference.kind == "InferenceService" and not inference.is_training
    assert listed.kind == "Pod" and listed.name.value == "listed" and listed.anchor.line == line_of(OTHERS, "kind: Pod")


def test_runai_fraction_annotation_and_priority_words() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: frac
  annotations: {gpu-fraction: "0.5"}
spec:
  priorityClassName: high-priority
  containers: [{name: c, image: "c:1.0.0"}]
"""
    workload = one("frac.yaml", text)
    assert workload.gpus_total.value == 0.5 and workload.gpus_total.line == 5
    assert not workload.preemptible
    custom = one("frac.yaml", text, Config(preemptible_priority_classes=("high",)))
    assert custom.preemptible


def test_manifest_wrapper_and_json_objects() -> None:
    text = ('{"metadata": {"name": "w", "projectId": "1"},\n "manifest": {"apiVersion": "batch/v1", "kind": "Job",\n'
            ' "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "c:1.0.0"}]}}}}}\n')
    workload = one("submit.json", text)
    assert workload.kind == "Job" and workload.anchor.line == 2
    assert load("job.json", '{"apiVersion": "batch/v1", "kind": "Job", "spec": {}}') == []


def test_documents_without_workloads() -> None:
    assert load("values.yaml", "image: {repository: x, tag: latest}\n") == []
    assert load("kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n") == []
    assert load("config.json", '{"lr": 0.1, "spec": {"x": 1}}') == []


def test_trainjob_and_runaijob() -> None:
    text = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: trainer:1.0.0
    command: [torchrun, train.py]
    numNodes: 2
    resourcesPerNode:
      limits: {nvidia.com/gpu: 4}
---
apiVersion: run.ai/v1
kind: RunaiJob
metadata: {name: old}
spec:
  template:
    spec:
      containers: [{name: c, image: "c:1.0.0"}]
"""
    trainjob, runaijob = load("trainjob.yaml", text)
    assert trainjob.is_training and trainjob.pods == 2 and trainjob.gpus_total.value == 8
    assert trainjob.gpus_total.line == 11 and not trainjob.supports_ttl
    assert runaijob.kind == "RunaiJob" and runaijob.is_training and runaijob.default_retries == 6
