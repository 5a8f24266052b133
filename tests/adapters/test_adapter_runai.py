"""Run:ai CRDs, REST bodies and runai command lines -> workloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_support import column_of
from adapter_support import line_of
from adapter_support import load
from adapter_support import one

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"


def corpus(name: str) -> str:
    path = CORPUS / name
    if not path.exists():
        pytest.skip("needs the workload corpus of spikelint's development workspace, which a clone does not include")
    return path.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- CRDs

INTERACTIVE = """\
apiVersion: run.ai/v1alpha1
kind: InteractiveWorkload
metadata:
  name: alice-notebook
  annotations: {spikelint.io/disable: SPK202}
spec:
  name: {value: alice-notebook}
  image: {value: "jupyter/pytorch-notebook:latest"}
  gpu: {value: "0.5"}
  preemptible: {value: true}
  command: {value: start-notebook.sh}
  arguments:
    value: --NotebookApp.base_url=/${RUNAI_PROJECT} --NotebookApp.token=''
  environment:
    items:
      WANDB_API_KEY:
        value: 0123456789abcdef0123456789abcdef01234567
      HF_TOKEN:
        value: SECRET:hf,token
  volumes:
    items:
      volume--0:
        value: {source: /raid/scratch/alice, target: /home/jovyan/work}
  pvcs:
    items:
      tmp:
        value: {claimName: tmp, existingPvc: false, path: /tmp-claim, ephemeral: true}
  terminationGracePeriodSeconds: {value: 10}
"""


def test_interactive_crd() -> None:
    workload = one("nb.yaml", INTERACTIVE)
    assert workload.source == "runai-crd" and workload.kind == "InteractiveWorkload"
    assert not workload.is_training and workload.preemptible
    assert workload.default_retries == 0 and workload.grace_period.value == 10
    main = workload.containers[0]
    assert main.image.value == "jupyter/pytorch-notebook:latest" and main.image.line == 8
    assert main.image.column == column_of(INTERACTIVE, '"jupyter')
    assert [str(w.value) for w in main.command] == ["start-notebook.sh"]
    assert [str(w.value) for w in main.args] == ["--NotebookApp.base_url=/${RUNAI_PROJECT}", "--NotebookApp.token="]
    assert (main.args[1].line, main.args[1].column) == (13, column_of(INTERACTIVE, "--NotebookApp.token"))
    env = {str(v.name.value): (v.value.value if v.value else None, v.reference) for v in main.env}
    assert env == {"WANDB_API_KEY": ("0123456789abcdef0123456789abcdef01234567", None),
                   "HF_TOKEN": (None, "runai-secret")}
    assert main.env[0].name.line == line_of(INTERACTIVE, "WANDB_API_KEY:")
    assert main.env[0].value.line == line_of(INTERACTIVE, "0123456789")
    mounts = {str(m.path.value): (m.volume.source, m.volume.persistent) for m in main.mounts}
    assert mounts == {"/home/jovyan/work": ("hostPath", False), "/tmp-claim": ("ephemeral-pvc", False)}
    assert workload.gpus_total.value == 0.5 and workload.gpus_total.line == 9
    assert workload.disabled_rules[0].rules == ("SPK202",)


def test_training_and_distributed_crds_from_the_corpus() -> None:
    training = one("03.yaml", corpus("03-runai-trainingworkload-good.yaml"))
    assert training.is_training and training.preemptible
    assert training.retries.value == 3 and training.ttl.value == 48 * 3600
    assert training.gpus_total.value == 2 and training.containers[0].working_dir.value == "/workspace"
    assert sorted((str(p.value) for p in training.persistent_mount_paths)) == ["/ckpt", "/data"]
    assert training.name.value == "resnet-ft-r7"
    distributed = one("05.yaml", corpus("05-runai-distributedworkload.yaml"))
    assert distributed.kind == "DistributedWorkload" and distributed.pods == 4
    assert distributed.gpus_total.value == 32 and distributed.name.value == "llm-pretrain"
    assert distributed.preemptible and distributed.default_retries == 6
    assert [str(w.value) for w in distributed.containers[0].command] == ["torchrun"]
    assert str(distributed.containers[0].args[-1].value) == "/cfg/llama3_8b.toml"


def test_crd_without_wrappers_and_non_preemptible() -> None:
    text = """\
apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata: {name: plain}
spec:
  image: trainer:1.0.0
  gpu: 1
  nonPreemptible: {value: true}
  environment: {items: {A: {value: "1"}}}
"""
    workload = one("plain.yaml", text)
    assert workload.containers[0].image.value == "trainer:1.0.0" and not workload.preemptible
    assert workload.name.value == "plain" and workload.containers[0].env[0].value.value == "1"


# --------------------------------------------------------------------------- REST


def test_rest_training_from_the_corpus() -> None:
    text = corpus("06-runai-rest-training-good.json")
    workload = one("06.json", text)
    assert workload.kind == "training" and workload.is_training and workload.preemptible
    assert workload.anchor.line == line_of(text, '"name": "sft-llama-7b-r4"')
    assert workload.retries.value == 3 and workload.grace_period.value == 300 and workload.ttl.value == 259200
    assert workload.gpus_total.value == 8 and workload.gpus_total.line == line_of(text, "gpuDevicesRequest")
    main = workload.containers[0]
    env = {str(v.name.value): v.reference for v in main.env}
    assert env == {"HF_HOME": None, "WANDB_API_KEY": "rest-secret", "POD_NAME": "fieldRef"}
    assert [str(w.value) for w in main.command] == ["torchrun"]
    assert str(main.args[3].value) == "--output_dir"
    assert main.args[4].column == column_of(text, "/ckpt/sft-llama-7b-r4")


def test_rest_workspace_from_the_corpus() -> None:
    text = corpus("07-runai-rest-workspace-bad.json")
    workload = one("07.json", text)
    assert workload.kind == "workspace" and not workload.is_training and not workload.preemptible
    mounts = {str(m.path.value): (m.volume.source, m.volume.persistent) for m in workload.containers[0].mounts}
    assert mounts == {"/ckpt": ("ephemeral-pvc", False), "/home/bob": ("hostPath", False)}
    assert [str(w.value) for w in workload.containers[0].args] == ["-c", "sleep infinity"]


@pytest.mark.parametrize(("body", "filename", "expected"), [
    ('"spec": {"image": "i:1.0.0", "command": "python train.py"}', "body.json", "training"),
    ('"spec": {"image": "i:1.0.0", "command": "sleep infinity"}', "body.json", "workspace"),
    ('"spec": {"image": "i:1.0.0"}', "inference-body.json", "inference"),
    ('"spec": {"image": "i:1.0.0", "servingPort": {"port": 8000}}', "body.json", "inference"),
    ('"spec": {"image": "i:1.0.0", "numWorkers": 2}', "body.json", "distributed"),
    ('"_comment": "POST /api/v1/workloads/workspaces", "spec": {"image": "i:1.0.0", "command": "python train.py"}',
     "body.json", "workspace"),
])
def test_rest_class_detection(body: str, filename: str, expected: str) -> None:
    workload = one(filename, '{"name": "w", "projectId": "1", ' + body + "}")
    assert workload.kind == expected


def test_rest_distributed_and_assets() -> None:
    text = """\
{"name": "d", "projectId": "1", "masterSpecSameAsWorker": false,
 "masterSpec": {"image": "i:1.0.0", "compute": {"gpuDevicesRequest": 1}},
 "spec": {"image": "i:1.0.0", "distributedFramework": "PyTorch", "numWorkers": 3,
          "compute": {"gpuDevicesRequest": 8}, "preemptibility": "non-preemptible",
          "labels": [{"name": "git-sha", "value": "abc"}, {"name": "x", "value": "y", "exclude": true}]}}
"""
    workload = one("d.json", text)
    assert workload.kind == "distributed" and workload.pods == 4 and workload.gpus_total.value == 25
    assert not workload.preemptible and set(workload.labels) == {"git-sha"}
    assets = one("a.json", '{"name": "a", "projectId": "1", "assets": {"environment": "e",'
                           ' "datasources": [{"id": "ds-1", "kind": "pvc"}]}, "specificEnv": {"command": "x"}}')
    assert assets.platform.storage_unknown and assets.volumes[0].persistent


# --------------------------------------------------------------------------- runai CLI


def test_cli_good_script_from_the_corpus() -> None:
    text = corpus("01-runai-cli-good.sh")
    workload = one("01.sh", text)
    assert workload.kind == "training" and workload.anchor.line == line_of(text, "runai training standard submit sft")
    main = workload.containers[0]
    assert main.image.line == line_of(text, "IMAGE=harbor") and main.image.column == 7
    assert workload.gpus_total.value == 8 and workload.retries.value == 3
    assert workload.grace_period.value == 300 and workload.ttl.value == 72 * 3600
    assert workload.preemptible and main.working_dir.value == "/workspace"
    env = {str(v.name.value): (v.value.value if v.value else None, v.reference) for v in main.env}
    assert env == {"HF_HOME": ("/data/hf-cache", None), "HF_HUB_OFFLINE": ("1", None),
                   "WANDB_API_KEY": (None, "runai-secret"), "HF_TOKEN": (None, "runai-secret")}
    ckpt = main.mounts[0].path
    assert (ckpt.value, ckpt.line) == ("/ckpt", line_of(text, "nlp-checkpoints"))
    line = text.splitlines()[ckpt.line - 1]
    assert line[ckpt.column - 1:ckpt.column + 4] == "/ckpt"
    assert [str(w.value) for w in main.command][:4] == ["torchrun", "--nproc_per_node", "8", "train.py"]


def test_cli_bad_script_from_the_corpus() -> None:
    text = corpus("02-runai-cli-bad.sh")
    legacy, nightly, devbox = load("02.sh", text)
    assert legacy.kind == "training" and legacy.retries.value == 0 and legacy.preemptible
    assert [(str(m.path.value), m.volume.source, m.volume.persistent) for m in legacy.containers[0].mounts] == [
        ("/scratch", "pvc", True), ("/home/alice", "hostPath", False)]
    assert legacy.containers[0].env[0].value.value.startswith("0123")
    assert nightly.containers[0].image.value == "nvcr.io/nvidia/pytorch:py3"
    assert nightly.containers[0].env[0].value.column == column_of(text, "hf_EXAMPLE")
    assert devbox.kind == "workspace" and devbox.preemptible and not devbox.is_training
    assert devbox.containers[0].image.value == "${DEV_IMAGE:-ubuntu}"


CLI_VARIANTS = """\
#!/bin/bash
NAME=run-7
TAG=2.1.0
GIT_SHA=$(git rev-parse HEAD)
runai submit-dist pytorch --name "$NAME" --workers=3 -g 2 -i "harbor.example.org/t:${TAG}" \\
  --new-pvc claimname=scratch,size=1Ti,path=/scratch,ephemeral \\
  --label git-sha=$GIT_SHA --annotation spikelint.io/disable=SPK303 \\
  -e SEED=1 -e TOKEN=SECRET:tok,key \\
  --termination-grace-period 0 --ttl-after-finish 5m \\
  -- python train.py
runai submit --interactive -i jupyter:2024.01.01 -g 0.5 --jupyter
runai workspace submit ws --gpu-devices-request 2 --gpu-portion-request 0.5 --preemptible -i w:1.0.0
runai training pytorch submit ddp --workers 1 --no-master -g 4 -i t:1.0.0 -- torchrun train.py
runai distributed submit d2 --framework PyTorch --workers 2 -g 1 --master-gpu-devices-request 0 -i t:1.0.0
runai workload submit --file job.yaml
runai list jobs
echo runai submit not-a-command
if true; then
  exec runai inference submit srv -i s:1.0.0 -g 1
fi
"""


def test_cli_variants() -> None:
    dist, interactive, workspace, ddp, dist2, inference = load("variants.sh", CLI_VARIANTS)
    assert dist.kind == "distributed" and dist.name.value == "run-7" and dist.name.line == 2
    assert dist.pods == 4 and dist.gpus_total.value == 8 and dist.gpus_total.line == 5
    assert dist.containers[0].image.value == "harbor.example.org/t:2.1.0" and dist.containers[0].image.line == 5
    mount = dist.containers[0].mounts[0]
    assert mount.volume.source == "ephemeral-pvc" and not mount.volume.persistent
    assert dist.labels["git-sha"].value == "$GIT_SHA"  # a command substitution is not expanded
    assert dist.disabled_rules[0].rules == ("SPK303",) and dist.disabled_rules[0].line == 7
    assert dist.grace_period is None and dist.ttl.value == 300
    assert {str(v.name.value): v.reference for v in dist.containers[0].env} == {"SEED": None, "TOKEN": "runai-secret"}
    assert [str(w.value) for w in dist.containers[0].args] == ["python", "train.py"]
    assert dist.platform.line_range == (5, 10)
    assert interactive.kind == "workspace" and not interactive.preemptible and interactive.gpus_total.value == 0.5
    assert workspace.gpus_total.value == 1 and workspace.preemptible
    assert ddp.kind == "distributed" and ddp.pods == 1 and ddp.gpus_total.value == 4
    assert [str(w.value) for w in ddp.containers[0].args] == ["torchrun", "train.py"]
    assert dist2.pods == 3 and dist2.gpus_total.value == 2
    assert inference.kind == "inference" and not inference.is_training and inference.anchor.column == 8


def test_cli_flag_equals_forms_and_command_words() -> None:
    text = "runai training submit x --image=t:1.0.0 --gpu-devices-request=3 --backoff-limit=0 " \
           "--command -- python -u train.py\n"
    workload = one("x.sh", text)
    main = workload.containers[0]
    assert main.image.value == "t:1.0.0" and main.image.column == column_of(text, "t:1.0.0")
    assert workload.gpus_total.value == 3 and workload.retries.value == 0
    assert [str(w.value) for w in main.command] == ["python", "-u", "train.py"] and main.args == []


def test_scripts_without_runai_have_no_workloads() -> None:
    assert load("train.sh", "#!/bin/bash\nset -e\npython train.py | tee log.txt\n") == []


def test_cli_arithmetic_and_unknown_worker_counts() -> None:
    text = "NODES=4\nrunai training pytorch submit a -i t:1.0.0 -g 8 --workers $((NODES - 1))\n" \
           "runai training pytorch submit b -i t:1.0.0 -g 8 --workers \"$(cat workers.txt)\"\n"
    first, second = load("arith.sh", text)
    assert first.pods == 4 and first.gpus_total.value == 32
    assert second.pods == 2 and second.gpus_total.value == 16
