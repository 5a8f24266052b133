"""The one decision every training rule relies on: does a workload train?

Commands and objects are modelled on what public ML-infrastructure repositories contain (queue
demos, certificate hooks, NCCL tests, inference servers, launchers behind wrappers), with
invented names.
"""

from __future__ import annotations

import shlex

import pytest

from spikelint.adapters.entry_points import command_purpose
from spikelint.adapters.purpose import invocation_trains
from spikelint.adapters.purpose import text_purposes

from adapter_support import load


@pytest.mark.parametrize("command", [
    "python train.py --epochs 3",
    "python3 -u -m trainer.run --lr 1e-4",
    "python -W ignore main.py",
    "torchrun --nproc_per_node 8 --nnodes 2 pretrain.py",
    "python -m torch.distributed.run --nproc_per_node 2 main.py",
    "accelerate launch --config_file fsdp.yaml scripts/run_sft.py",
    "deepspeed --num_gpus 8 pretrain_gpt.py --deepspeed ds.json",
    "composer train.py",
    "tune run lora_finetune_single_device --config llama3/8B_lora",
    "lightning run model train.py",
    "llamafactory-cli train examples/llama3_lora_sft.yaml",
    "axolotl train config.yml",
    "mpirun -np 16 -bind-to none -map-by slot python train_imagenet.py",
    "srun --ntasks-per-node 8 python -u pretrain_gpt.py",
    "env NCCL_DEBUG=INFO nohup python main.py",
    "timeout 72h torchrun train.py",
    "numactl --cpunodebind=0 python train.py",
    "coverage run -a --source=/workspace examples/nlp/enc_dec_nmt.py",
    "bash /workspace/scripts/finetune_llama.sh",
    "/opt/train.py --data /data",
])
def test_training_entry_points(command: str) -> None:
    purpose = command_purpose(shlex.split(command))
    assert purpose is not None and purpose.training, purpose


@pytest.mark.parametrize(("command", "what"), [
    ("python -c 'import torch; print(torch.cuda.is_available())'", "utility"),
    ("python -uc 'print(1)'", "utility"),
    ("python -m pip install -r requirements.txt", "utility"),
    ("python setup.py install", "utility"),
    ("python eval.py --model /models/x", "evaluation"),
    ("torchrun --nproc_per_node 8 evaluate.py", "evaluation"),
    ("python run_inference.py", "evaluation"),
    ("python scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py --model resnet50", "evaluation"),
    ("python -m pytest tests/", "evaluation"),
    ("coverage run -a tests/collections/llm/sft.py --auto-resume", "evaluation"),
    ("python download_model.py --out /models", "data"),
    ("python preprocess_data.py --input x", "data"),
    ("python tools/convert_checkpoint.py", "data"),
    ("python -m vllm.entrypoints.openai.api_server --model x", "server"),
    ("python3 -m sglang.launch_server --model-path x", "server"),
    ("uvicorn app:api --port 8080", "server"),
    ("nginx -g 'daemon off;'", "server"),
    ("llamafactory-cli webui", "server"),
    ("axolotl preprocess config.yml", "data"),
    ("tune run eleuther_eval --config x", "evaluation"),
    ("accelerate config default", "utility"),
    ("mpirun -np 16 /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G", "utility"),
    ("srun all_gather_perf", "utility"),
    ("mpirun -n 2 /home/mpiuser/pi", "utility"),
    ("sleep 60", "utility"),
    ("/agnhost pause", "utility"),
    ("nvidia-smi", "utility"),
    ("dcgmi profile --resume", "utility"),
    ("rsync -a --resume a/ b/", "utility"),
    ("kube-webhook-certgen create --host svc", "utility"),
    ("python -m paddle.distributed.launch run_check", "utility"),
    ("bash run.sh", "script"),
])
def test_commands_that_train_nothing(command: str, what: str) -> None:
    purpose = command_purpose(shlex.split(command))
    assert purpose is not None and purpose.what == what, purpose


def test_shell_scripts_are_read_command_by_command() -> None:
    found = text_purposes("set -e; nvidia-smi && pip install -e . ; python train.py 2>&1 | tee /ckpt/log")
    assert [purpose.what for purpose in found] == ["utility", "utility", "utility", "training", "utility"]
    assert not any(purpose.training for purpose in text_purposes("echo 'python train.py' && sleep 100"))


@pytest.mark.parametrize(("words", "trains"), [
    ("python train.py --resume auto", True),
    ("$PYTHON finetune.py --resume auto", True),
    ("$LAUNCHER --resume", False),
    ("runai training submit sft -g 8 -- python train.py --resume auto", True),
    ("runai workspace submit nb -- jupyter lab", False),
    ("runai submit sft -g 1 -i img:1.0.0", True),
    ("dcgmi profile --resume", False),
])
def test_launch_script_lines(words: str, trains: bool) -> None:
    assert invocation_trains(shlex.split(words)) is trains


OBJECTS = """\
apiVersion: batch/v1
kind: Job
metadata: {name: entrypoint-gpu}
spec:
  template:
    spec:
      containers: [{name: t, image: "registry.example.org/trainer:1.0.0", resources: {limits: {nvidia.com/gpu: 2}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: entrypoint-cpu}
spec:
  template:
    spec:
      containers: [{name: t, image: "registry.example.org/trainer:1.0.0"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: busybox-gpu}
spec:
  template:
    spec:
      containers: [{name: t, image: "busybox:1.36", resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: server-gpu}
spec:
  template:
    spec:
      containers: [{name: s, image: "registry.example.org/model:1.0.0", resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ptj-sleep}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: p, image: "registry.example.org/t:1.0.0", command: [sleep, "3600"]}]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ptj-entrypoint}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: p, image: "registry.example.org/t:1.0.0"}]
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    leaderTemplate:
      spec:
        containers: [{name: l, image: "registry.example.org/vllm:0.6.0", command: [sh, -c, "ray start --head && vllm serve x"]}]
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: ray-train}
spec:
  entrypoint: python /home/ray/train_resnet.py --num-workers 2
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: h, image: "rayproject/ray:2.9.0"}]
"""


def test_objects() -> None:
    found = {w.name.value: w for w in load("objects.yaml", OBJECTS) if w.name is not None}
    training = {name for name, workload in found.items() if workload.is_training}
    assert training == {"entrypoint-gpu", "ptj-entrypoint", "ray-train"}
    assert found["ptj-sleep"].purpose == "utility"
    assert found["vllm"].purpose == "server" and found["server-gpu"].purpose == "idle"
    assert found["ray-train"].purpose_reason == "runs python /home/ray/train_resnet.py"


CONTROLLERS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers: [{name: w, image: "registry.example.org/web:1.0.0", command: [python, main.py]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ddp}
spec:
  template:
    spec:
      containers: [{name: t, image: "registry.example.org/t:1.0.0", command: [torchrun, --nnodes, "2", main.py]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer}
spec:
  template:
    spec:
      containers: [{name: t, image: "registry.example.org/t:1.0.0", command: [python, train.py]}]
"""


def test_controllers_train_only_when_it_is_stated() -> None:
    found = {w.name.value: w.is_training for w in load("controllers.yaml", CONTROLLERS) if w.name is not None}
    assert found == {"web": False, "ddp": True, "trainer": True}


# --------------------------------------------------------------------------- GPU cost decides


def _job(args: str, gpus: int | None = None, kind: str = "Job") -> str:
    limits = f"\n          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}" if gpus else ""
    words = ", ".join(f'"{word}"' for word in shlex.split(args))
    return (f"apiVersion: batch/v1\nkind: {kind}\nmetadata: {{name: helper}}\nspec:\n  template:\n    spec:\n"
            f"      restartPolicy: Never\n      containers:\n        - name: main\n          image: repo/app:1.0.0\n"
            f"          command: [{words}]{limits}\n")


TRAINING_RULES = {"select": ["SPK3", "SPK4", "SPK504", "SPK604"], "required_run_identity": ["seed"]}


@pytest.mark.parametrize("args", ["python -u prep.py --in /data/raw", "python main.py", "python3 run.py --n 4"])
def test_cpu_only_helper_jobs_are_not_training(args: str) -> None:
    """A Job with no GPU running prep.py/main.py/run.py costs no GPU time: no SPK401, SPK504, SPK604."""
    from spikelint.engine import lint_snippet

    assert lint_snippet("job.yaml", _job(args), TRAINING_RULES) == []


@pytest.mark.parametrize("args", ["python main.py", "python -u run.py"])
def test_the_same_entry_point_on_gpus_is_training(args: str) -> None:
    from spikelint.engine import lint_snippet

    rules = {finding.rule for finding in lint_snippet("job.yaml", _job(args, gpus=8), TRAINING_RULES)}
    assert {"SPK401", "SPK504", "SPK604"} <= rules


@pytest.mark.parametrize("args", ["python train.py", "python main.py --num_train_epochs 3", "torchrun main.py",
                                  "python finetune_lora.py"])
def test_an_entry_point_that_says_it_trains_is_training_on_cpu_too(args: str) -> None:
    from spikelint.engine import lint_snippet

    rules = {finding.rule for finding in lint_snippet("job.yaml", _job(args), TRAINING_RULES)}
    assert "SPK401" in rules


def test_spk302_is_a_warning_on_cpu_and_an_error_on_gpus() -> None:
    from spikelint.engine import lint_snippet

    cpu = [f for f in lint_snippet("job.yaml", _job("python train.py --save_steps 10 --resume_from_checkpoint x")
                                   .replace("restartPolicy: Never", "restartPolicy: Never\n      priorityClassName: "
                                            "high"), {"select": ["SPK302"]})]
    assert cpu and cpu[0].severity == "error"  # a Job retries 6 times by default
    demo = _job("python train.py --save_steps 10 --resume_from_checkpoint x", kind="Pod")
    [finding] = lint_snippet("pod.yaml", demo.replace("apiVersion: batch/v1", "apiVersion: v1")
                             .replace("spec:\n  template:\n    spec:\n      restartPolicy: Never\n", "spec:\n"
                                      "      restartPolicy: Never\n"), {"select": ["SPK302"]})
    assert finding.severity == "warning"
    gpu = lint_snippet("pod.yaml", _job("python train.py --save_steps 10 --resume_from_checkpoint x", gpus=1),
                       {"select": ["SPK302"]})
    assert gpu[0].severity == "error"


HYPERPOD = """\
apiVersion: sagemaker.amazonaws.com/v1
kind: HyperPodPyTorchJob
metadata:
  name: llama3-8b-fsdp
spec:
  nprocPerNode: "8"
  runPolicy:
    jobMaxRetryCount: 10
  replicaSpecs:
    - name: pods
      replicas: 4
      template:
        spec:
          containers:
            - name: pytorch
              image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/fsdp:1.2.0
              command: [hyperpodrun, --nnodes=4, --nproc-per-node=8, /fsdp/train.py, --checkpoint_dir=/tmp/ckpt]
              resources:
                limits:
                  nvidia.com/gpu: 8
"""


def test_hyperpod_jobs_are_read_through_their_pod_template() -> None:
    """An unknown kind with a pod template: hyperpodrun trains; its retry count and checkpoint path are read."""
    from spikelint.engine import lint_snippet

    found = {(f.rule, f.line): f for f in lint_snippet("hyperpod.yaml", HYPERPOD, {"select": ["SPK3", "SPK4"]})}
    assert set(found) == {("SPK301", 17), ("SPK405", 2)}
    assert "HyperPodPyTorchJob retries 10 times" in found[("SPK405", 2)].message
    assert invocation_trains(["hyperpodrun", "--nnodes=4", "/fsdp/train.py"])
    assert not invocation_trains(["hyperpodrun", "--nnodes=4", "/fsdp/evaluate.py"])
