"""One team rule set (examples/team-rules/acme.yaml) on the same workload written in every form the model
covers: each rule fires on each form, at the line of the value it read, and stays quiet on the near-miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from spikelint.engine import lint_snippet

ROOT = Path(__file__).resolve().parents[2]
RULES = str(ROOT / "examples" / "team-rules")


def findings(filename: str, text: str, *select: str) -> list[tuple[str, int]]:
    config = {"rules_dir": RULES, "select": list(select or ("ACME", "SPK004"))}
    return [(finding.rule, finding.line) for finding in lint_snippet(filename, text, config)]


# The same training run: 32 GPUs from docker.io, no owner, no deadline, CUDA_LAUNCH_BLOCKING=1.
# Each form is followed by the line of each value the rules read (image, GPU request, debug variable).
KUBERNETES = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sft
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: docker.io/pytorch/pytorch:2.3.0
          command: [torchrun, --nproc_per_node, "8", train.py]
          env:
            - name: CUDA_LAUNCH_BLOCKING
              value: "1"
          resources:
            limits:
              nvidia.com/gpu: 32
"""
PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: sft
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: docker.io/pytorch/pytorch:2.3.0
              command: [torchrun, train.py]
              env: [{name: CUDA_LAUNCH_BLOCKING, value: "1"}]
              resources: {limits: {nvidia.com/gpu: 8}}
    Worker:
      replicas: 3
      template:
        spec:
          containers:
            - name: pytorch
              image: docker.io/pytorch/pytorch:2.3.0
              command: [torchrun, train.py]
              resources: {limits: {nvidia.com/gpu: 8}}
"""
JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: sft
spec:
  replicatedJobs:
    - name: workers
      replicas: 4
      template:
        spec:
          template:
            spec:
              containers:
                - name: trainer
                  image: docker.io/pytorch/pytorch:2.3.0
                  command: [torchrun, train.py]
                  env: [{name: CUDA_LAUNCH_BLOCKING, value: "1"}]
                  resources: {limits: {nvidia.com/gpu: 8}}
"""
RUNAI_CRD = """\
apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata:
  name: sft
spec:
  image: {value: "docker.io/pytorch/pytorch:2.3.0"}
  command: {value: torchrun}
  arguments: {value: "train.py"}
  gpu: {value: "32"}
  environment:
    items:
      CUDA_LAUNCH_BLOCKING: {value: "1"}
"""
RUNAI_REST = """\
{
  "name": "sft",
  "projectId": "1042",
  "spec": {
    "image": "docker.io/pytorch/pytorch:2.3.0",
    "command": "torchrun",
    "args": "train.py",
    "environmentVariables": [{"name": "CUDA_LAUNCH_BLOCKING", "value": "1"}],
    "compute": {"gpuDevicesRequest": 32}
  }
}
"""
RUNAI_CLI = """\
#!/bin/bash
runai training submit sft \\
  -i docker.io/pytorch/pytorch:2.3.0 \\
  -g 32 \\
  -e CUDA_LAUNCH_BLOCKING=1 \\
  -- torchrun train.py
"""
SLURM = """\
#!/bin/bash
#SBATCH --job-name=sft
#SBATCH --partition=debug
#SBATCH --nodes=4
#SBATCH --gres=gpu:8
#SBATCH --container-image=docker.io/pytorch/pytorch:2.3.0
export CUDA_LAUNCH_BLOCKING=1
srun torchrun train.py
"""

FORMS = {
    # form: (file name, text, {rule: line of the value it read, or the lines of each element it ran on})
    "kubernetes": ("job.yaml", KUBERNETES, {"ACME001": 10, "ACME002": 2, "ACME003": 17, "ACME004": 2, "ACME005": 14,
                                            "ACME006": 2}),
    "kubeflow": ("pytorchjob.yaml", PYTORCHJOB, {"ACME001": [13, 23], "ACME002": 2, "ACME003": 16, "ACME004": 2,
                                                 "ACME005": 15, "ACME006": 2}),
    "jobset": ("jobset.yaml", JOBSET, {"ACME001": 15, "ACME002": 2, "ACME003": 18, "ACME004": 2, "ACME005": 17,
                                       "ACME006": 2}),
    "runai-crd": ("workload.yaml", RUNAI_CRD, {"ACME001": 6, "ACME002": 2, "ACME003": 9, "ACME004": 2, "ACME005": 12,
                                               "ACME006": 2}),
    "runai-rest": ("workload.json", RUNAI_REST, {"ACME001": 5, "ACME002": 2, "ACME003": 9, "ACME004": 2,
                                                 "ACME005": 8, "ACME006": 2}),
    "runai-cli": ("submit.sh", RUNAI_CLI, {"ACME001": 3, "ACME002": 2, "ACME003": 4, "ACME004": 2, "ACME005": 5,
                                           "ACME006": 2}),
    "slurm": ("train.sbatch", SLURM, {"ACME001": 6, "ACME002": 2, "ACME003": 5, "ACME006": 2, "ACME008": 3}),
}


@pytest.mark.parametrize("form", FORMS)
def test_each_rule_fires_once_at_the_value_it_read(form: str) -> None:
    filename, text, lines = FORMS[form]
    expected = sorted((rule, line) for rule, where in lines.items() for line in (where if isinstance(where, list)
                                                                                   else [where]))
    assert sorted(findings(filename, text)) == expected


NEAR_MISSES = {
    # what a team's compliant workload looks like in each form: nothing fires
    "kubernetes": ("job.yaml", """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sft
  labels: {acme.io/owner: nlp, acme.io/env: prod}
spec:
  activeDeadlineSeconds: 86400
  template:
    spec:
      containers:
        - name: trainer
          image: harbor.acme.io/llm/train:1.2.0
          command: [torchrun, train.py]
          env: [{name: CUDA_LAUNCH_BLOCKING, value: "0"}]
          resources: {limits: {nvidia.com/gpu: 8}}
          volumeMounts: [{name: ckpt, mountPath: /ckpt}]
      volumes:
        - {name: ckpt, persistentVolumeClaim: {claimName: acme-checkpoints}}
"""),
    "exception": ("job.yaml", """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sft
  labels: {acme.io/owner: nlp}
  annotations: {acme.io/gpu-exception: approved}
spec:
  activeDeadlineSeconds: 86400
  template:
    spec:
      containers:
        - name: trainer
          image: harbor.acme.io/llm/train:1.2.0
          command: [torchrun, train.py]
          resources: {limits: {nvidia.com/gpu: 64}}
          volumeMounts: [{name: ckpt, mountPath: /ckpt}]
      volumes:
        - {name: ckpt, persistentVolumeClaim: {claimName: acme-checkpoints}}
"""),
    "slurm": ("train.sbatch", """\
#!/bin/bash
#SBATCH --account=nlp
#SBATCH --partition=gpu
#SBATCH --gres=gpu:8
#SBATCH --time=1-00:00:00
#SBATCH --container-image=harbor.acme.io/llm/train:1.2.0
srun torchrun train.py
"""),
    "not-training": ("serve.yaml", """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: server
          image: harbor.acme.io/llm/vllm:0.6.0
          command: [python, -m, vllm.entrypoints.openai.api_server]
          resources: {limits: {nvidia.com/gpu: 1}}
"""),
    "template-image": ("job.yaml", """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sft
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: "{{ .Values.image }}"
          command: [python, prepare_data.py]
"""),
}


@pytest.mark.parametrize("case", NEAR_MISSES)
def test_a_compliant_workload_gets_no_team_finding(case: str) -> None:
    filename, text = NEAR_MISSES[case]
    assert findings(filename, text) == []
