"""SPK105/SPK106 on trainer flags: launch scripts, runai commands and workload manifests."""

from __future__ import annotations

import pytest

from tests.hub.conftest import SHA
from tests.hub.conftest import found
from tests.hub.conftest import lint

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sft
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: ghcr.io/acme/trainer:1.2.3
          command: {command}
          args:
{args}
"""
TORCHRUN = '["torchrun", "--nproc_per_node", "8", "run_sft.py"]'


def job(*args: str, command: str = TORCHRUN) -> str:
    return JOB.format(command=command, args="\n".join(f"            - {arg}" for arg in args))


@pytest.mark.parametrize("script, line", [
    ("#!/bin/bash\npython run_clm.py --model_name_or_path openai-community/gpt2 --output_dir /ckpt\n", 2),
    ("#!/bin/bash\ntorchrun train.py \\\n  --model_name_or_path=Qwen/Qwen2.5-7B \\\n  --output_dir /ckpt\n", 3),
    ("#!/bin/bash\nMODEL=Qwen/Qwen2.5-7B\naccelerate launch sft.py --model_name_or_path \"$MODEL\"\n", 3),
    ("#!/bin/bash\npython train.py --dataset_name HuggingFaceH4/ultrachat_200k\n", 2),
    ("#!/bin/bash\npython train.py --model-name-or-path org/m --revision main\n", 2),
    ("#!/bin/bash\npython train.py --base_model org/m\n", 2),
    ("#!/bin/bash\npython train.py model.name=org/m trainer.max_steps=10\n", 2),
    ("#!/bin/bash\n#SBATCH --gres=gpu:8\nsrun python train.py --model_name_or_path org/m\n", 3),
    ("#!/bin/bash\nrunai training submit sft -i ghcr.io/acme/t:1.0 -g 8 -- "
     "python train.py --model_name_or_path org/m\n", 2),
])
def test_unpinned_flags_in_scripts(script: str, line: int) -> None:
    assert found("scripts/launch.sh", script) == {(line, "SPK105")}


@pytest.mark.parametrize("script", [
    f"#!/bin/bash\npython train.py --model_name_or_path org/m --model_revision {SHA}\n",
    f"#!/bin/bash\npython train.py --model_name_or_path org/m --revision={SHA}\n",
    "#!/bin/bash\npython train.py --model_name_or_path org/m --model_revision \"$MODEL_REVISION\"\n",
    "#!/bin/bash\npython train.py --model_name_or_path \"$1\"\n",
    "#!/bin/bash\npython train.py --model_name_or_path ${MODEL_PATH}\n",
    "#!/bin/bash\npython train.py --model_name_or_path /models/llama\n",
    "#!/bin/bash\npython train.py --model_name_or_path ./output/checkpoint-500\n",
    "#!/bin/bash\npython train.py --model_name_or_path gpt2\n",
    "#!/bin/bash\npython train.py --output_dir org/m\n",
    "#!/bin/bash\necho model_name_or_path org/m\n",
])
def test_script_near_misses(script: str) -> None:
    assert found("scripts/launch.sh", script) == set()


def test_trust_remote_code_flag_replaces_spk105_at_the_flag() -> None:
    script = "#!/bin/bash\npython train.py --model_name_or_path org/m --trust_remote_code\n"
    findings = lint("scripts/launch.sh", script)
    assert [(f.line, f.column, f.rule) for f in findings] == [(2, 44, "SPK106")]
    assert "--model_revision <40-hex sha>" in findings[0].message


@pytest.mark.parametrize("script, expected", [
    ("#!/bin/bash\npython train.py --model_name_or_path org/m --trust-remote-code True\n", {(2, "SPK106")}),
    ("#!/bin/bash\npython train.py --model_name_or_path org/m --trust_remote_code False\n", {(2, "SPK105")}),
    (f"#!/bin/bash\npython train.py --model_name_or_path org/m --model_revision {SHA} --trust_remote_code\n", set()),
    # the flag of another command does not cover this one
    ("#!/bin/bash\npython a.py --trust_remote_code\npython b.py --model_name_or_path org/m\n", {(3, "SPK105")}),
])
def test_trust_flag_per_command(script: str, expected: set[tuple[int, str]]) -> None:
    assert found("scripts/launch.sh", script) == expected


def test_one_finding_per_id_per_script() -> None:
    script = ("#!/bin/bash\npython sft.py --model_name_or_path org/m\n"
              "python dpo.py --model_name_or_path org/m\npython eval.py --model_name_or_path org/n\n")
    assert found("scripts/launch.sh", script) == {(2, "SPK105"), (4, "SPK105")}


def test_kubernetes_args() -> None:
    text = job("--model_name_or_path", "mistralai/Mistral-7B-v0.1", "--output_dir", "/ckpt")
    assert found("k8s/sft-job.yaml", text) == {(15, "SPK105")}


def test_kubernetes_args_pinned_and_trusted() -> None:
    assert found("k8s/sft-job.yaml", job("--model_name_or_path", "org/m", "--model_revision", SHA)) == set()
    assert found("k8s/sft-job.yaml", job("--model_name_or_path", "org/m", "--trust_remote_code")) == {(16, "SPK106")}


def test_kubernetes_shell_command() -> None:
    text = job("|\n              set -euo pipefail\n              torchrun --nproc_per_node 8 run_sft.py"
               " --model_name_or_path org/m --output_dir /ckpt", command='["bash", "-c"]')
    assert found("k8s/sft-job.yaml", text) == {(16, "SPK105")}


def test_runai_crd_arguments() -> None:
    text = """\
apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata:
  name: sft
spec:
  image:
    value: ghcr.io/acme/trainer:1.2.3
  command:
    value: python
  arguments:
    value: run_sft.py --model_name_or_path org/m --output_dir /ckpt
"""
    assert found("runai/sft.yaml", text) == {(11, "SPK105")}


def test_runai_rest_body_args() -> None:
    text = """\
{
  "name": "sft-r3",
  "projectId": "4",
  "clusterId": "d73a738f-fab3-430a-8fa3-5241493d7128",
  "spec": {
    "image": "ghcr.io/acme/trainer:1.2.3",
    "command": "python run_sft.py",
    "args": "--model_name_or_path org/m --trust_remote_code --output_dir /results/sft",
    "compute": {"gpuDevicesRequest": 1}
  }
}
"""
    assert found("runai/sft.json", text) == {(8, "SPK106")}
    assert found("runai/sft.json", text.replace("--trust_remote_code", f"--revision {SHA}")) == set()


@pytest.mark.parametrize("script, expected", [
    # the command names another model service: its names are not hub ids
    ("#!/bin/bash\npython finetune.py --model_type amazon.nova-lite-v1:0 --model_name_or_path nova-lite/prod\n",
     set()),
    ("#!/bin/bash\npython eval.py --provider bedrock --base_model acme-team/claims-v2\n", set()),
    ("#!/bin/bash\npython eval.py --model_name_or_path bedrock/meta.llama3-8b-instruct-v1\n", set()),
    # a service named on another command does not cover this one; an HF model type names none
    ("#!/bin/bash\npython a.py --provider openai\npython b.py --model_name_or_path acme-team/m\n", {(3, "SPK105")}),
    ("#!/bin/bash\npython run_clm.py --model_type openai-gpt --model_name_or_path acme-team/m\n", {(2, "SPK105")}),
])
def test_another_service_on_the_same_command(script: str, expected: set[tuple[int, str]]) -> None:
    assert found("scripts/launch.sh", script) == expected


@pytest.mark.parametrize("script, expected", [
    ("#!/bin/bash\nvllm serve acme-team/m --tokenizer acme-team/tok\n", {(2, "SPK105")}),
    ("#!/bin/bash\npython train.py model.name_or_path=acme-team/m\n", {(2, "SPK105")}),
    ("#!/bin/bash\npython -m levanter.main.train_lm --initialize_from_hf acme-team/m@main\n", {(2, "SPK105")}),
    (f"#!/bin/bash\npython -m levanter.main.train_lm --initialize_from_hf acme-team/m@{SHA}\n", set()),
    ("#!/bin/bash\npython train.py --hf_dataset_name acme-team/d\n", {(2, "SPK105")}),
    ("#!/bin/bash\npython train.py --tokenizer ./tok\n", set()),
])
def test_added_flags(script: str, expected: set[tuple[int, str]]) -> None:
    assert found("scripts/launch.sh", script) == expected


# --------------------------------------------------------------------------- each id pinned by its own revision

LAUNCH = "#!/bin/bash\naccelerate launch finetune.py {flags}\n"


@pytest.mark.parametrize("flags, unpinned", [
    (f"--model_name_or_path org/m --model_revision {SHA} --tokenizer_name_or_path org/tok --tokenizer_revision {SHA}",
     []),
    (f"--model_name_or_path org/m --model_revision {SHA} --tokenizer_name_or_path org/tok", []),  # the model's
    (f"--model_name_or_path org/m --model_revision {SHA} --tokenizer_name_or_path org/tok --tokenizer_revision main",
     ["org/tok"]),
    (f"--model_name_or_path org/m --model_revision main --tokenizer_name_or_path org/tok --tokenizer_revision {SHA}",
     ["org/m"]),
    (f"--model_name_or_path org/m --model_revision {SHA} --dataset_name org/ds", []),  # a sibling sha (rules.md)
    (f"--model_name_or_path org/m --model_revision {SHA} --dataset_name org/ds --dataset_revision {SHA}", []),
], ids=["both-pinned", "tokenizer-follows-model", "tokenizer-on-a-branch", "model-on-a-branch",
        "dataset-beside-a-sha", "dataset-pinned"])
def test_a_revision_pins_its_own_id_not_every_id_on_the_command(flags: str, unpinned: list[str]) -> None:
    findings = lint("scripts/sft.sh", LAUNCH.format(flags=flags))
    assert sorted(finding.message.split("'")[1] for finding in findings) == unpinned


def test_the_message_names_the_ids_own_revision() -> None:
    config = f"model_name_or_path: org/m\nmodel_revision: main\ndataset_name: org/ds\ndataset_revision: {SHA}\n"
    (finding,) = lint("configs/sft.yaml", config)
    assert "'org/m'" in finding.message and "revision 'main'" in finding.message
    config = "model_name_or_path: org/m\nmodel_revision: main\ndataset_name: org/ds\n"
    messages = {finding.message.split("'")[1]: finding.message for finding in lint("configs/sft.yaml", config)}
    assert "no commit is pinned" in messages["org/ds"] and "main" not in messages["org/ds"]
