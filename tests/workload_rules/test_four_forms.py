"""One workload written four ways (Kubernetes, Run:ai CRD, Run:ai REST, runai CLI) gives the same findings."""

from __future__ import annotations

import pytest

from tests.workload_rules.conftest import lint
from tests.workload_rules.conftest import pairs
from tests.workload_rules.conftest import rules

# bad: outputs on the container filesystem, logs on emptyDir, checkpoints named volume on hostPath,
# a relative TensorBoard dir without a working directory is avoided (working dir set), retries without resume
K8S_BAD = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: bert-ft-r12
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: harbor.example.org/nlp/bert-ft:1.4.2
          workingDir: /workspace
          command: ["torchrun", "--nproc_per_node", "4", "train.py"]
          args: ["--output_dir", "/workspace/out", "--save_steps", "500"]
          env:
            - name: LOG_DIR
              value: /scratch/logs
          volumeMounts:
            - {name: ckpt, mountPath: /ckpt}
            - {name: scratch, mountPath: /scratch}
            - {name: host, mountPath: /checkpoints}
      volumes:
        - {name: ckpt, persistentVolumeClaim: {claimName: nlp-checkpoints}}
        - {name: scratch, emptyDir: {}}
        - {name: host, hostPath: {path: /raid/ckpt}}
"""
K8S_BAD_LINES = {(2, "SPK405"), (15, "SPK301"), (18, "SPK301"), (22, "SPK303")}

CRD_BAD = """\
apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata:
  name: bert-ft-r12
spec:
  nonPreemptible: {value: true}
  image: {value: harbor.example.org/nlp/bert-ft:1.4.2}
  workingDir: {value: /workspace}
  command: {value: torchrun}
  arguments: {value: --nproc_per_node 4 train.py --output_dir /workspace/out --save_steps 500}
  backoffLimit: {value: 2}
  environment:
    items:
      LOG_DIR: {value: /scratch/logs}
  pvcs:
    items:
      ckpt: {value: {claimName: nlp-checkpoints, existingPvc: true, path: /ckpt}}
  emptyDirVolumes:
    items:
      scratch: {value: {name: scratch, path: /scratch}}
  hostPath:
    items:
      host: {value: {path: /raid/ckpt, mountPath: /checkpoints}}
"""
CRD_BAD_LINES = {(2, "SPK405"), (10, "SPK301"), (14, "SPK301"), (23, "SPK303")}

REST_BAD = """\
{
  "name": "bert-ft-r12",
  "projectId": "1042",
  "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
  "spec": {
    "image": "harbor.example.org/nlp/bert-ft:1.4.2",
    "command": "torchrun",
    "args": "--nproc_per_node 4 train.py --output_dir /workspace/out --save_steps 500",
    "workingDir": "/workspace",
    "backoffLimit": 2,
    "preemptibility": "non-preemptible",
    "environmentVariables": [{"name": "LOG_DIR", "value": "/scratch/logs"}],
    "storage": {
      "pvc": [{"claimName": "nlp-checkpoints", "existingPvc": true, "path": "/ckpt"}],
      "emptyDirVolume": [{"name": "scratch", "path": "/scratch"}],
      "hostPath": [{"name": "host", "path": "/raid/ckpt", "mountPath": "/checkpoints"}]
    }
  }
}
"""
REST_BAD_LINES = {(2, "SPK405"), (8, "SPK301"), (12, "SPK301"), (16, "SPK303")}

CLI_BAD = """\
#!/usr/bin/env bash
set -euo pipefail
runai training submit bert-ft-r12 \\
  -i harbor.example.org/nlp/bert-ft:1.4.2 \\
  --non-preemptible \\
  --working-dir /workspace \\
  --backoff-limit 2 \\
  -e LOG_DIR=/scratch/logs \\
  --existing-pvc claimname=nlp-checkpoints,path=/ckpt \\
  --empty-dir-volume name=scratch,path=/scratch \\
  --host-path path=/raid/ckpt,mount=/checkpoints \\
  -- torchrun --nproc_per_node 4 train.py --output_dir /workspace/out --save_steps 500
"""
CLI_BAD_LINES = {(3, "SPK405"), (12, "SPK301"), (8, "SPK301"), (11, "SPK303")}

FORMS = [
    ("k8s/bert-ft-job.yaml", K8S_BAD, K8S_BAD_LINES),
    ("runai/bert-ft-crd.yaml", CRD_BAD, CRD_BAD_LINES),
    ("runai/bert-ft-rest.json", REST_BAD, REST_BAD_LINES),
    ("scripts/submit_bert.sh", CLI_BAD, CLI_BAD_LINES),
]


@pytest.mark.parametrize(("filename", "text", "expected"), FORMS, ids=[form[0] for form in FORMS])
def test_bad_workload_gives_the_same_findings_in_every_form(filename: str, text: str,
                                                             expected: set[tuple[int, str]]) -> None:
    findings = lint(filename, text)
    assert rules(findings) == ["SPK301", "SPK301", "SPK303", "SPK405"]
    assert pairs(findings) == expected


def _fixed(text: str) -> str:
    """The same workload with outputs and logs on the PVC, the resume flag added, no hostPath."""
    return (text.replace("/workspace/out", "/ckpt/bert-ft-r12")
            .replace("/scratch/logs", "/ckpt/bert-ft-r12/logs")
            .replace("--save_steps 500", "--save_steps 500 --resume_from_checkpoint /ckpt/bert-ft-r12/checkpoint-500")
            .replace('"--save_steps", "500"]', '"--save_steps", "500", "--resume", "/ckpt/bert-ft-r12"]')
            .replace("/checkpoints", "/dev/shm"))


@pytest.mark.parametrize(("filename", "text", "expected"), FORMS, ids=[form[0] for form in FORMS])
def test_fixed_workload_is_clean_in_every_form(filename: str, text: str, expected: set[tuple[int, str]]) -> None:
    assert lint(filename, _fixed(text)) == []


def test_the_same_relative_path_without_working_directory_is_spk603_in_every_form() -> None:
    found = []
    for filename, text, _ in FORMS:
        changed = _fixed(text).replace("--output_dir /ckpt/bert-ft-r12", "--output_dir out") \
            .replace('"--output_dir", "/ckpt/bert-ft-r12"', '"--output_dir", "out"')
        changed = "\n".join(line for line in changed.splitlines()
                            if "workingDir" not in line and "--working-dir" not in line) + "\n"
        found.append(rules(lint(filename, changed)))
    assert found == [["SPK603"]] * 4


def test_preemptible_training_without_checkpoints_is_an_error_in_every_form() -> None:
    severities = []
    for filename, text, _ in FORMS:
        changed = _fixed(text)
        for old, new in (("--output_dir /ckpt/bert-ft-r12 --save_steps 500 --resume_from_checkpoint "
                          "/ckpt/bert-ft-r12/checkpoint-500", "--epochs 3 --log-dir /ckpt/logs"),
                         ('"--output_dir", "/ckpt/bert-ft-r12", "--save_steps", "500", "--resume", '
                          '"/ckpt/bert-ft-r12"', '"--epochs", "3", "--log-dir", "/ckpt/logs"'),
                         ("nonPreemptible: {value: true}", "nonPreemptible: {value: false}"),
                         ('"non-preemptible"', '"preemptible"'), ("--non-preemptible", "--preemptible")):
            changed = changed.replace(old, new)
        if filename.startswith("k8s/"):
            changed = changed.replace("      restartPolicy: Never", "      restartPolicy: Never\n"
                                      "      priorityClassName: low-priority-preemptible")
        findings = lint(filename, changed)
        assert rules(findings) == ["SPK401"], (filename, findings)
        severities.append(findings[0].severity)
    assert severities == ["error"] * 4


# distributed: every pod appends to one log on the PVC (SPK503) and the output folder carries the clock (SPK406)
PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: gpt-small-ddp
spec:
  runPolicy: {backoffLimit: 0}
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: harbor.example.org/llm/gpt-train:1.8.0
              command: ["bash", "-c"]
              args: ["torchrun train.py --output_dir /ckpt/run-$(date +%s) --save_steps 100 --resume /ckpt/gpt 2>&1 | tee -a /ckpt/train.log"]
              volumeMounts: [{name: ckpt, mountPath: /ckpt}]
          volumes:
            - {name: ckpt, persistentVolumeClaim: {claimName: llm-checkpoints}}
"""
DISTRIBUTED_CRD = """\
apiVersion: run.ai/v2alpha1
kind: DistributedWorkload
metadata:
  name: gpt-small-ddp
spec:
  workers: {value: 3}
  backoffLimit: {value: 0}
  image: {value: harbor.example.org/llm/gpt-train:1.8.0}
  command: {value: bash}
  arguments: {value: "-c 'torchrun train.py --output_dir /ckpt/run-$(date +%s) --save_steps 100 --resume /ckpt/gpt 2>&1 | tee -a /ckpt/train.log'"}
  pvcs:
    items:
      ckpt: {value: {claimName: llm-checkpoints, existingPvc: true, path: /ckpt}}
"""
DISTRIBUTED_REST = """\
{
  "name": "gpt-small-ddp",
  "projectId": "1042",
  "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
  "spec": {
    "distributedFramework": "PyTorch",
    "numWorkers": 3,
    "image": "harbor.example.org/llm/gpt-train:1.8.0",
    "command": "bash",
    "args": "-c 'torchrun train.py --output_dir /ckpt/run-$(date +%s) --save_steps 100 --resume /ckpt/gpt 2>&1 | tee -a /ckpt/train.log'",
    "backoffLimit": 0,
    "storage": {"pvc": [{"claimName": "llm-checkpoints", "existingPvc": true, "path": "/ckpt"}]}
  }
}
"""
DISTRIBUTED_CLI = """\
#!/usr/bin/env bash
runai training pytorch submit gpt-small-ddp -i harbor.example.org/llm/gpt-train:1.8.0 --workers 3 \\
  --backoff-limit 0 --existing-pvc claimname=llm-checkpoints,path=/ckpt \\
  -- bash -c 'torchrun train.py --output_dir /ckpt/run-$(date +%s) --save_steps 100 --resume /ckpt/gpt 2>&1 | tee -a /ckpt/train.log'
"""
DISTRIBUTED = [("k8s/ddp.yaml", PYTORCHJOB, 17), ("runai/ddp-crd.yaml", DISTRIBUTED_CRD, 10),
               ("runai/ddp-rest.json", DISTRIBUTED_REST, 10), ("scripts/ddp.sh", DISTRIBUTED_CLI, 4)]


@pytest.mark.parametrize(("filename", "text", "line"), DISTRIBUTED, ids=[form[0] for form in DISTRIBUTED])
def test_distributed_shared_log_and_clock_folder_in_every_form(filename: str, text: str, line: int) -> None:
    findings = lint(filename, text)
    assert pairs(findings) == {(line, "SPK406"), (line, "SPK503")}
    by_rule = {finding.rule: finding for finding in findings}
    source_line = text.splitlines()[line - 1]
    assert by_rule["SPK406"].column == source_line.index("/ckpt/run-$(date") + 1
    assert by_rule["SPK503"].column == source_line.index("/ckpt/train.log") + 1
