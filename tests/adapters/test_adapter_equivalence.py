"""One training run written four ways normalises to the same workload facts."""

from __future__ import annotations

import pytest

from adapter_support import one
from adapter_support import summary

IMAGE = "harbor.example.org/nlp/bert-ft:1.4.2@sha256:" + "ab" * 32

KUBERNETES = f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: bert-ft-r12
spec:
  backoffLimit: 3
  template:
    metadata:
      labels:
        runai/queue: nlp-team
    spec:
      schedulerName: runai-scheduler
      priorityClassName: train-preemptible
      restartPolicy: Never
      terminationGracePeriodSeconds: 300
      containers:
        - name: trainer
          image: {IMAGE}
          workingDir: /workspace
          command: ["torchrun", "--nproc_per_node", "4", "train.py"]
          args: ["--output_dir", "/ckpt/bert-ft-r12", "--seed", "17"]
          env:
            - name: HF_HOME
              value: /data/hf-cache
            - name: WANDB_API_KEY
              valueFrom:
                secretKeyRef: {{name: wandb-credentials, key: api-key}}
          resources:
            limits:
              nvidia.com/gpu: 4
          volumeMounts:
            - {{name: ckpt, mountPath: /ckpt}}
            - {{name: data, mountPath: /data, readOnly: true}}
      volumes:
        - name: ckpt
          persistentVolumeClaim: {{claimName: nlp-checkpoints}}
        - name: data
          persistentVolumeClaim: {{claimName: nlp-datasets}}
"""

CRD = f"""\
apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata:
  name: bert-ft-r12
  namespace: runai-nlp-team
spec:
  name: {{value: bert-ft-r12}}
  image: {{value: "{IMAGE}"}}
  gpu: {{value: "4"}}
  workingDir: {{value: /workspace}}
  command: {{value: torchrun}}
  arguments: {{value: "--nproc_per_node 4 train.py --output_dir /ckpt/bert-ft-r12 --seed 17"}}
  backoffLimit: {{value: 3}}
  terminationGracePeriodSeconds: {{value: 300}}
  environment:
    items:
      HF_HOME: {{value: /data/hf-cache}}
      WANDB_API_KEY: {{value: "SECRET:wandb-credentials,api-key"}}
  pvcs:
    items:
      pvc--0: {{value: {{claimName: nlp-checkpoints, existingPvc: true, path: /ckpt}}}}
      pvc--1: {{value: {{claimName: nlp-datasets, existingPvc: true, path: /data, readOnly: true}}}}
"""

REST = f"""\
{{
  "name": "bert-ft-r12",
  "projectId": "1042",
  "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
  "spec": {{
    "image": "{IMAGE}",
    "command": "torchrun",
    "args": "--nproc_per_node 4 train.py --output_dir /ckpt/bert-ft-r12 --seed 17",
    "workingDir": "/workspace",
    "backoffLimit": 3,
    "terminationGracePeriodSeconds": 300,
    "compute": {{"gpuDevicesRequest": 4}},
    "environmentVariables": [
      {{"name": "HF_HOME", "value": "/data/hf-cache"}},
      {{"name": "WANDB_API_KEY", "secret": {{"name": "wandb-credentials", "key": "api-key"}}}}
    ],
    "storage": {{
      "pvc": [
        {{"claimName": "nlp-checkpoints", "existingPvc": true, "path": "/ckpt"}},
        {{"claimName": "nlp-datasets", "existingPvc": true, "path": "/data", "readOnly": true}}
      ]
    }}
  }}
}}
"""

SCRIPT = f"""\
#!/usr/bin/env bash
set -euo pipefail
IMAGE={IMAGE}

runai training submit bert-ft-r12 \\
  -p nlp-team \\
  -i "$IMAGE" \\
  -g 4 \\
  --working-dir /workspace \\
  --existing-pvc claimname=nlp-checkpoints,path=/ckpt \\
  --existing-pvc claimname=nlp-datasets,path=/data,ro \\
  -e HF_HOME=/data/hf-cache \\
  --env-secret WANDB_API_KEY=wandb-credentials,key=api-key \\
  --backoff-limit 3 \\
  --termination-grace-period 5m \\
  --command -- torchrun --nproc_per_node 4 train.py --output_dir /ckpt/bert-ft-r12 --seed 17
"""

FORMS = {
    "k8s/bert-ft.yaml": KUBERNETES,
    "runai/bert-ft.yaml": CRD,
    "rest/bert-ft.json": REST,
    "scripts/bert-ft.sh": SCRIPT,
}
EXPECTED = {
    "image": IMAGE,
    "gpus_total": 4,
    "pods": 1,
    "env": [("HF_HOME", "/data/hf-cache", False), ("WANDB_API_KEY", None, True)],
    "mounts": [("/ckpt", True, False), ("/data", True, True)],
    "retries": 3,
    "grace": 300,
    "working_dir": "/workspace",
    "words": ["torchrun", "--nproc_per_node", "4", "train.py", "--output_dir", "/ckpt/bert-ft-r12", "--seed", "17"],
    "is_training": True,
    "preemptible": True,
}


@pytest.mark.parametrize("filename", FORMS)
def test_four_forms_normalise_to_the_same_facts(filename: str) -> None:
    assert summary(one(filename, FORMS[filename])) == EXPECTED


@pytest.mark.parametrize("filename", FORMS)
def test_every_located_value_points_at_its_text(filename: str) -> None:
    """Positions are exact: the located text is what the file holds there (variables aside)."""
    text = FORMS[filename]
    lines = text.splitlines()
    workload = one(filename, text)
    main = workload.main_containers()[0]
    located = [main.image, workload.gpus_total, main.working_dir, workload.grace_period, workload.retries,
               *main.command, *main.args, *(m.path for m in main.mounts), *(v.name for v in main.env),
               *(v.value for v in main.env if v.value is not None)]
    for where in located:
        assert where is not None
        source = lines[where.line - 1]
        written = str(where.value)
        if where is workload.grace_period and filename.endswith(".sh"):
            written = "5m"
        start = where.column - 1
        assert source[start:start + len(written)] == written or source[start + 1:start + 1 + len(written)] == written, (
            where, source)


def test_sources_and_anchors() -> None:
    anchors = {name: one(name, text).anchor for name, text in FORMS.items()}
    assert (anchors["k8s/bert-ft.yaml"].line, anchors["k8s/bert-ft.yaml"].column) == (2, 1)
    assert (anchors["runai/bert-ft.yaml"].line, anchors["runai/bert-ft.yaml"].column) == (2, 1)
    assert (anchors["rest/bert-ft.json"].line, anchors["rest/bert-ft.json"].column) == (2, 3)
    assert (anchors["scripts/bert-ft.sh"].line, anchors["scripts/bert-ft.sh"].column) == (5, 1)
    sources = {name: one(name, text).source for name, text in FORMS.items()}
    assert sources == {"k8s/bert-ft.yaml": "kubernetes", "runai/bert-ft.yaml": "runai-crd",
                       "rest/bert-ft.json": "runai-rest", "scripts/bert-ft.sh": "runai-cli"}
