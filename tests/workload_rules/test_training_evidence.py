"""Evidence before a training rule speaks (rules.md): the finding names what makes the object a
training workload; what says "not training" wins over a GPU request; the entry point is found as
the launcher finds it; kustomize patches are fragments.  Each shape was measured on repositories
nobody here wrote; the scripts below are written for these tests."""

from __future__ import annotations

import pytest

from spikelint.engine import lint_snippet

SLURM_HEAD = "#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --gres=gpu:8\n#SBATCH --time=12:00:00\n"
TRAINING_RULES = ("SPK30", "SPK40", "SPK50", "SPK60", "SPK70")


def _training(filename: str, text: str, extra: dict[str, str] | None = None) -> list[tuple[int, str, str]]:
    return [(finding.line, finding.rule, finding.message) for finding in lint_snippet(filename, text, extra_files=extra)
            if finding.rule.startswith(TRAINING_RULES) and finding.rule not in ("SPK404", "SPK406")]


def _slurm(body: str, name: str = "llm-run") -> str:
    return SLURM_HEAD.format(name=name) + body


# --------------------------------------------------------------------------- the evidence is named


def test_a_training_finding_names_the_gpus_and_the_entry_point() -> None:
    [(line, rule, message)] = _training("jobs/pretrain.sbatch", _slurm("srun torchrun --nproc_per_node 8 train.py\n"))
    assert (line, rule) == (2, "SPK401")
    assert message.endswith("(because: 8 GPUs requested; runs torchrun train.py)")


def test_a_training_operator_kind_names_its_kind() -> None:
    job = """apiVersion: kubeflow.org/v1
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
              image: reg.example.org/llm/sft:1.0.0@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
"""
    messages = [message for _, rule, message in _training("k8s/sft.yaml", job) if rule == "SPK302"]
    assert messages and "because: is a PyTorchJob (a training-operator kind)" in messages[0]


# --------------------------------------------------------------------------- "not training" wins


@pytest.mark.parametrize("filename, body, name", [
    ("slurm/merge_adapter_and_resize.slurm", "srun python tools/run.py --base /ckpt/a --out /ckpt/b\n", "job"),
    ("slurm/job.slurm", "srun python tools/run.py --ckpt /ckpt/a\n", "run_eval_harness"),
    ("eval/llama.slurm", "srun python main.py --ckpt /ckpt/a\n", "llama"),
    ("slurm/neuron.slurm", "export NEURON_EXTRACT_GRAPHS_ONLY=1\nsrun torchrun train.py\n", "llama"),
    ("slurm/smoke.slurm", "srun python run_clm.py --max_train_samples 1 --output_dir /tmp/o\n", "llama"),
    ("slurm/quant.slurm", "srun llmcompressor.oneshot --model /ckpt/a\n", "llama"),
    ("slurm/quant2.slurm", "srun python -m llm_compressor.run /ckpt/a\n", "llama"),
], ids=["file-name", "job-name", "folder", "graphs-only", "smoke-sized", "quantizer", "quantizer-module"])
def test_what_says_not_training_wins_over_a_gpu_request(filename: str, body: str, name: str) -> None:
    assert _training(filename, _slurm(body, name)) == []


@pytest.mark.parametrize("filename, body", [
    ("eval/finetune.slurm", "srun python train_sft.py\n"),  # the entry point itself says it trains
    ("slurm/job.slurm", "srun python main.py --epochs 3\n"),  # nothing says otherwise: GPUs decide
    ("slurm/job.slurm", "srun python run_clm.py --max_train_samples 50000 --output_dir /tmp/o\n"),
], ids=["stated-training-in-eval-folder", "gpu-and-neutral-script", "large-sample"])
def test_near_misses_stay_training(filename: str, body: str) -> None:
    assert [rule for _, rule, _ in _training(filename, _slurm(body))]


def test_a_camel_case_script_name_that_says_train_trains_without_gpus() -> None:
    job = "#!/bin/bash\n#SBATCH --time=1:00:00\npython Gemma3LLMTrain.py\n"
    assert [(line, rule) for line, rule, _ in _training("run.sbatch", job)] == [(2, "SPK401")]


def test_tpu_requests_count_as_accelerators() -> None:
    job = """apiVersion: batch/v1
kind: Job
metadata:
  name: fit
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: fit
          image: reg.example.org/tpu/fit:1.0.0@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
          command: [python, main.py]
          resources:
            limits:
              google.com/tpu: 4
"""
    found = _training("k8s/fit.yaml", job)
    assert "SPK401" in [rule for _, rule, _ in found]
    assert "4 TPU chips requested" in found[0][2]  # named as what is requested, not as GPUs


# --------------------------------------------------------------------------- the entry point, as the launcher finds it


MEGATRON_ARRAY = """ARGS=(
    --num-layers 24 \\
    --save /shared/ckpt/gpt \\
    # checkpoints: every 500 steps
    --load /shared/ckpt/gpt \\
    --save-interval 500
)
srun --comment pretrain --container-image reg.example.org/nemo:24.05.01 python pretrain_gpt.py "${ARGS[@]}"
"""


def test_flags_of_an_array_with_commented_continuation_lines_are_read() -> None:
    assert _training("slurm/pretrain.sbatch", _slurm(MEGATRON_ARRAY)) == []


def test_an_array_without_checkpoint_flags_still_fires() -> None:
    text = _slurm(MEGATRON_ARRAY.replace("--save-interval 500", "--lr 3e-4").replace("--save ", "--data ")
                  .replace("--load ", "--tokenizer "))
    assert [rule for _, rule, _ in _training("slurm/pretrain.sbatch", text)] == ["SPK401"]


def test_a_helper_python_line_before_the_launch_is_not_the_entry_point() -> None:
    body = ("python tools/make_index.py --input /data/raw\n"
            "srun python pretrain_gpt.py --save /shared/ckpt --load /shared/ckpt --save-interval 500\n")
    assert _training("slurm/pretrain.sbatch", _slurm(body)) == []
    [(_, _, message)] = _training("slurm/pretrain.sbatch", _slurm(body.replace(" --load /shared/ckpt", "")))
    assert "runs python pretrain_gpt.py" in message


@pytest.mark.parametrize("launch", [
    "srun --comment llm-run --container-image reg.example.org/x:1.0.0 python main.py --epochs 3",
    "mpirun -np 8 --mca btl_tcp_if_include eth0 -x NCCL_DEBUG=INFO python main.py --epochs 3",
    "srun --label --cpu-bind none python main.py --epochs 3",
], ids=["srun-valued-option", "mpirun-mca-pair", "srun-flag-then-valued"])
def test_python_under_a_launcher_with_valued_options_is_the_entry_point(launch: str) -> None:
    [(_, rule, message)] = _training("slurm/job.sbatch", _slurm(launch + "\n"))
    assert rule == "SPK401" and "runs python main.py" in message


# --------------------------------------------------------------------------- kustomize patches


BASE_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: reg.example.org/t:1.2.3@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
          command: [torchrun, train.py]
          resources:
            limits:
              nvidia.com/gpu: 8
"""
# the same Job with only what the overlay changes: no image, no command, more GPUs
PATCH = "".join(line for line in BASE_JOB.splitlines(keepends=True)
                if "image:" not in line and "command:" not in line).replace("gpu: 8", "gpu: 16")


@pytest.mark.parametrize("kustomization", [
    "resources:\n  - ../../base\npatches:\n  - path: gpu-patch.yaml\n",
    "resources:\n  - ../../base\npatchesStrategicMerge:\n  - gpu-patch.yaml\n",
], ids=["patches", "patchesStrategicMerge"])
def test_a_kustomize_patch_is_a_fragment_not_a_workload(kustomization: str) -> None:
    extra = {"overlays/prod/kustomization.yaml": kustomization, "base/job.yaml": BASE_JOB}
    assert _training("overlays/prod/gpu-patch.yaml", PATCH, extra) == []


def test_the_same_file_listed_as_a_resource_is_a_workload() -> None:
    extra = {"overlays/prod/kustomization.yaml": "resources:\n  - gpu-patch.yaml\n"}
    assert _training("overlays/prod/gpu-patch.yaml", PATCH, extra)


# --------------------------------------------------------------------------- a script that resumes by itself

RESUMING_JOB = ("srun torchrun scripts/train.py --output_dir /shared/out --save_steps 100\n")


def test_a_script_in_the_tree_that_finds_its_last_checkpoint_needs_no_resume_flag() -> None:
    code = ("from transformers.trainer_utils import get_last_checkpoint\n\n\ndef main(args):\n"
            "    last = get_last_checkpoint(args.output_dir)\n    trainer.train(resume_from_checkpoint=last)\n")
    assert _training("slurm/sft.sbatch", _slurm(RESUMING_JOB), {"scripts/train.py": code}) == []


@pytest.mark.parametrize("code", ["trainer.train()\n", "trainer.train(resume_from_checkpoint=None)\n", None],
                         ids=["no-resume", "resume-none", "script-not-in-tree"])
def test_without_a_resume_in_code_or_on_the_line_spk402_fires(code: str | None) -> None:
    extra = {"scripts/train.py": code} if code is not None else None
    assert [(line, rule) for line, rule, _ in _training("slurm/sft.sbatch", _slurm(RESUMING_JOB), extra)] == \
        [(2, "SPK402")]


def test_a_resume_in_the_module_the_entry_script_imports_counts() -> None:
    extra = {"scripts/train.py": "from vlm.train.loop import run\n\nrun()\n",
             "vlm/train/loop.py": "def run():\n    last = get_last_checkpoint(out)\n    trainer.train(resume_from_checkpoint=last)\n"}
    assert _training("slurm/sft.sbatch", _slurm(RESUMING_JOB), extra) == []


# --------------------------------------------------------------------------- the entry script's own code

SCORER = ("import torch\n\n\ndef main():\n    model = load()\n    model.eval()\n    with torch.no_grad():\n"
          "        scores = model(batch)\n    dataset.push_to_hub('org/scored')\n")
FIT = ("import torch\n\n\ndef main():\n    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n"
       "        optimizer.step()\n    with torch.no_grad():\n        evaluate(model)\n")


def test_a_script_in_the_tree_that_runs_without_gradients_is_not_training() -> None:
    job = _slurm("srun python tools/run_job.py --input /data/shards\n")
    assert _training("slurm/job.sbatch", job, {"tools/run_job.py": SCORER}) == []


@pytest.mark.parametrize("script, code", [("tools/run_job.py", FIT), ("tools/train_scorer.py", SCORER)],
                         ids=["has-a-training-step", "name-says-train"])
def test_a_training_step_or_a_training_name_keeps_it_training(script: str, code: str) -> None:
    job = _slurm(f"srun python {script} --input /data/shards\n")
    assert [rule for _, rule, _ in _training("slurm/job.sbatch", job, {script: code})] == ["SPK401"]


def test_a_daemonset_that_runs_a_training_script_is_a_burn_in_not_a_run() -> None:
    daemonset = BASE_JOB.replace("apiVersion: batch/v1\nkind: Job", "apiVersion: apps/v1\nkind: DaemonSet")
    assert _training("k8s/burn-in.yaml", daemonset) == []
    assert [rule for _, rule, _ in _training("k8s/job.yaml", BASE_JOB)]  # the same pod spec as a Job trains


SURGERY = ("import torch\nfrom safetensors.torch import load_file, save_file\n\n\ndef main(src, dst):\n"
           "    weights = load_file(src)\n    weights['pos_embed'] = torch.nn.functional.interpolate(weights['pos_embed'], 64)\n"
           "    save_file(weights, dst)\n")


def test_a_script_that_rewrites_weights_and_never_mentions_training_is_not_training() -> None:
    job = _slurm("srun python tools/run_job.py --src /ckpt/a --dst /ckpt/b\n")
    assert _training("slurm/job.sbatch", job, {"tools/run_job.py": SURGERY}) == []


def test_a_script_that_writes_weights_and_mentions_training_stays_training() -> None:
    code = SURGERY.replace("def main", "from trainer_lib import pretrain\n\n\ndef main") + "    pretrain(dst)\n"
    job = _slurm("srun python tools/run_job.py --src /ckpt/a --dst /ckpt/b\n")
    assert [rule for _, rule, _ in _training("slurm/job.sbatch", job, {"tools/run_job.py": code})] == ["SPK401"]


def test_a_launch_through_a_variable_the_script_assigns_is_read() -> None:
    body = 'LAUNCH="torchrun --nproc_per_node 8"\nTRAINER=scripts/pretrain.py\nsrun python $TRAINER --lr 3e-4\n'
    [(_, rule, message)] = _training("slurm/job.sbatch", _slurm(body))
    assert rule == "SPK401" and "pretrain.py" in message


RUNTIME = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  mlPolicy:
    numNodes: 1
    torch:
      numProcPerNode: auto
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: reg.example.org/torch:2.5.1-cuda12.4@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
                      command: [torchrun, /workspace/train.py]
                      resources:
                        limits:
                          nvidia.com/gpu: 8
"""

TRAINJOB = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llama-sft
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    image: reg.example.org/torch:2.5.1-cuda12.4@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
    command: [torchrun, train.py]
    numNodes: 2
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 8
"""


@pytest.mark.parametrize("kind", ["ClusterTrainingRuntime", "TrainingRuntime"])
def test_a_trainer_runtime_is_a_blueprint_and_gets_no_training_rule(kind: str) -> None:
    """Kubeflow Trainer's runtimes are what TrainJobs name and fill in (their command, volumes and checkpoints):
    the training rules speak on the TrainJob, not on every runtime a platform ships."""
    assert _training("runtimes/torch.yaml", RUNTIME.replace("ClusterTrainingRuntime", kind)) == []
    rules = [rule for _, rule, _ in _training("jobs/llama-sft.yaml", TRAINJOB)]
    assert "SPK401" in rules  # the TrainJob that runs still gets the training rules


def test_a_trainjob_whose_runtime_brings_the_volumes_is_not_told_it_has_none() -> None:
    """The runtime a TrainJob names mounts the volumes (a PVC at /workspace/out, say): the TrainJob alone
    cannot show where its outputs land, so no storage finding claims they land on the container's disk."""
    job = TRAINJOB.replace("command: [torchrun, train.py]", "command: [torchrun, train.py, --output_dir, /workspace/out]")
    assert not [rule for _, rule, _ in _training("jobs/llama-sft.yaml", job) if rule.startswith("SPK30")]
    without_runtime = job.replace("  runtimeRef:\n    name: torch-distributed\n", "")
    assert "SPK301" in [rule for _, rule, _ in _training("jobs/llama-sft.yaml", without_runtime)]


TPU_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: maxtext-train
spec:
  template:
    spec:
      containers:
        - name: train
          image: us-docker.pkg.dev/proj/maxtext:2024-05-01
          command: [python3, -m, MaxText.train, MaxText/configs/base.yml, "base_output_directory=OUT", run_name=r1]
          resources:
            limits:
              google.com/tpu: 4
"""


def test_a_tpu_request_is_named_in_tpu_chips() -> None:
    findings = {rule: message for _, rule, message in _training("tpu/job.yaml", TPU_JOB.replace("OUT", "gs://b/run"))}
    assert "holds its 4 TPU chips indefinitely" in findings["SPK704"]
    assert all("GPU" not in message for message in findings.values())
    assert findings["SPK704"].endswith("(because: 4 TPU chips requested; runs python3 -m MaxText.train)")


@pytest.mark.parametrize("output", ["base_output_directory=gs://bucket/run", "--model_dir=gs://bucket/t5x/run",
                                    "--output_dir=s3://bucket/run"])
def test_outputs_written_to_an_object_store_need_no_persistent_volume(output: str) -> None:
    """MaxText's base_output_directory and T5X's --model_dir hold checkpoints, logs and summaries; on gs:// or
    s3:// nothing is lost with the pod, so SPK302 has nothing to say."""
    job = TPU_JOB.replace('"base_output_directory=OUT"', f'"{output}"')
    assert "SPK302" not in [rule for _, rule, _ in _training("tpu/job.yaml", job)]


@pytest.mark.parametrize("output", ["base_output_directory=/tmp/run", "--model_dir=/tmp/t5x/run"])
def test_the_same_outputs_on_the_containers_disk_are_reported_at_the_value(output: str) -> None:
    job = TPU_JOB.replace('"base_output_directory=OUT"', f'"{output}"')
    found = [(line, rule) for line, rule, _ in _training("tpu/job.yaml", job) if rule.startswith("SPK30")]
    assert found == [(11, "SPK301")]


# --------------------------------------------------------------------------- a launch script started by srun

FINETUNE_SCRIPT = ("#!/bin/bash\ntorchrun --nproc_per_node 8 finetune.py --output_dir /shared/ckpt/run "
                   "--save_steps 400 --resume_from_checkpoint auto\n")


@pytest.mark.parametrize("launch", ["srun bash /cluster/home/me/repo/jobs/finetune_llm.sh",
                                    "srun --mpi=pmix --container-image x.sqsh bash jobs/finetune_llm.sh",
                                    "srun ${EXTRA_SRUN_ARGS} bash jobs/finetune_llm.sh",
                                    "srun -N 2 jobs/finetune_llm.sh"])
def test_a_script_srun_starts_is_read_for_its_checkpoint_settings(launch: str) -> None:
    files = {"jobs/finetune_llm.sh": FINETUNE_SCRIPT}
    assert _training("jobs/submit.sbatch", _slurm(launch + "\n"), files) == []


def test_a_script_srun_starts_without_checkpoints_still_fires_spk401() -> None:
    files = {"jobs/finetune_llm.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 finetune.py --lr 3e-4\n"}
    found = _training("jobs/submit.sbatch", _slurm("srun bash jobs/finetune_llm.sh\n"), files)
    assert [(line, rule) for line, rule, _ in found] == [(2, "SPK401")]


def test_a_script_srun_starts_that_is_not_in_the_tree_leaves_spk401_silent() -> None:
    """Its settings cannot be read (rules.md: where the evidence cannot be read, the rule says nothing)."""
    assert _training("jobs/submit.sbatch", _slurm("srun bash /cluster/shared/finetune_llm.sh\n")) == []


# --------------------------------------------------------------------------- trainers that restore their own folder


@pytest.mark.parametrize("launch", ["srun python -m paxml.main --job_log_dir=/shared/runs/pax --exp=tasks.lm.Lm1B",
                                    "srun python t5x/train.py --model_dir=/shared/runs/t5x --gin_file=base.gin"],
                         ids=["paxml", "t5x"])
def test_a_trainer_that_restores_its_run_folder_needs_no_resume_flag(launch: str) -> None:
    assert _training("jobs/pretrain.sbatch", _slurm(launch + "\n")) == []


@pytest.mark.parametrize("launch", ["srun python train.py --output_dir /shared/runs/hf --save_steps 500",
                                    "MODEL_DIR=/models/base srun python train.py --output_dir /shared/x --save_steps 9"],
                         ids=["hf-output-dir", "model-dir-from-the-environment"])
def test_an_output_folder_that_is_not_restored_still_needs_a_resume_setting(launch: str) -> None:
    assert [(line, rule) for line, rule, _ in _training("jobs/pretrain.sbatch", _slurm(launch + "\n"))] == [(2, "SPK402")]


@pytest.mark.parametrize("script, training", [("pytorch-screen.py", False), ("gpu_screen.py", False),
                                              ("screen_and_train.py", True)])
def test_a_screening_script_checks_the_machine_and_trains_nothing(script: str, training: bool) -> None:
    found = _training("validation/env.sbatch", _slurm(f"srun python {script}\n"))
    assert bool(found) == training


# --------------------------------------------------------------------------- a name that starts with what it does


@pytest.mark.parametrize("script, training", [
    ("scripts/data/convert_sft_data.py", False), ("tests/test_train_loop.py", False),
    ("tools/generate_training_jobs.py", False), ("eval_finetuned.py", False),
    ("run_sft.py", True), ("finetune_then_eval.py", True), ("train_tokenizer.py", True)])
def test_the_first_word_of_a_script_name_says_what_it_does(script: str, training: bool) -> None:
    found = _training("jobs/run.sbatch", _slurm(f"srun python {script} --output_dir /shared/o\n"))
    assert bool(found) == training


@pytest.mark.parametrize("inner, training", [
    ("hf download org/tok --local-dir /t && python scripts/data/convert_sft_data.py --resume True", False),
    ("torchrun --nproc_per_node 8 open_instruct/finetune.py --output_dir /shared/o --resume True", True)])
def test_a_submitter_is_judged_by_the_command_after_its_double_dash(inner: str, training: bool) -> None:
    text = f"#!/bin/bash\npython mason.py --cluster ai2/x --gpus 8 -- {inner}\n"
    rules = {finding.rule for finding in lint_snippet("scripts/submit.sh", text)}
    assert ("SPK404" in rules) == training  # ``--resume True``: an implicit resume, where the command trains


# --------------------------------------------------------------------------- torchtune's named configs, overrides


def test_a_torchtune_named_config_is_not_read_and_its_settings_are_not_claimed_missing() -> None:
    launch = "srun tune run --nnodes 1 --nproc_per_node 8 full_finetune_distributed --config llama3/8B_full\n"
    files = {"recipes/configs/llama3/8B_full.yaml": "output_dir: /tmp/out\ncheckpointer:\n  checkpoint_dir: /tmp/m\n"}
    assert _training("recipes/run.sbatch", _slurm(launch), files) == []
    found = lint_snippet("recipes/run.sbatch", _slurm(launch.replace("8B_full", "8B_full --max_steps 10")), {})
    assert all("runs tune run full_finetune_distributed" in finding.message or not finding.rule.startswith("SPK7")
               for finding in found)  # the evidence names the recipe, not the value of --nnodes


CONFIG_WITH_TMP = "model: org/m\noutput_dir: /tmp/run\nsave_steps: 500\nresume_from_checkpoint: true\n"


def test_a_command_line_override_replaces_the_configs_value() -> None:
    files = {"configs/sft.yaml": CONFIG_WITH_TMP}
    launch = "srun python train.py --config configs/sft.yaml output_dir=/shared/runs/sft\n"
    assert [rule for _, rule, _ in _training("jobs/sft.sbatch", _slurm(launch), files)] == []
    plain = "srun python train.py --config configs/sft.yaml\n"
    assert [rule for _, rule, _ in _training("jobs/sft.sbatch", _slurm(plain), files)] == ["SPK301"]


# --------------------------------------------------------------------------- a module that resumes by itself

PPO_MAIN = "from mypkg.trainer.ppo.loop import Runner\n\n\ndef main(config):\n    Runner(config).fit()\n"
PPO_LOOP = ("from mypkg.utils.ckpt import find_latest_ckpt_path\n\n\nclass Runner:\n    def fit(self):\n"
            "        folder = find_latest_ckpt_path(self.config.trainer.default_local_dir)\n")
PPO_LAUNCH = "srun python3 -m mypkg.trainer.main_ppo trainer.save_freq=10 trainer.default_local_dir={where}\n"


def test_a_module_run_with_python_m_that_finds_its_latest_checkpoint_needs_no_resume_flag() -> None:
    files = {"mypkg/trainer/main_ppo.py": PPO_MAIN, "mypkg/trainer/ppo/loop.py": PPO_LOOP}
    assert _training("examples/ppo.sbatch", _slurm(PPO_LAUNCH.format(where="/shared/ckpt")), files) == []
    without = {"mypkg/trainer/main_ppo.py": PPO_MAIN, "mypkg/trainer/ppo/loop.py": "class Runner:\n    pass\n"}
    found = _training("examples/ppo.sbatch", _slurm(PPO_LAUNCH.format(where="/shared/ckpt")), without)
    assert [rule for _, rule, _ in found] == ["SPK402"]


@pytest.mark.parametrize("files", [
    {"tools/main_ppo.py": "last = get_last_checkpoint(out)\n"},  # another package's file of the same name
    {"mypkg/trainer/main_ppo.py": "from mypkg.trainer.ppo.loop import Runner\n",  # an import of another loop.py
     "other/loop.py": "folder = find_latest_ckpt_path(out)\n"},
], ids=["entry-module", "imported-module"])
def test_a_module_is_only_the_file_that_ends_in_its_whole_dotted_path(files: dict[str, str]) -> None:
    found = _training("examples/ppo.sbatch", _slurm(PPO_LAUNCH.format(where="/shared/ckpt")), files)
    assert [(line, rule) for line, rule, _ in found] == [(2, "SPK402")]


def test_verls_default_local_dir_is_where_checkpoints_go() -> None:
    files = {"mypkg/trainer/main_ppo.py": PPO_MAIN, "mypkg/trainer/ppo/loop.py": PPO_LOOP}
    found = _training("examples/ppo.sbatch", _slurm(PPO_LAUNCH.format(where="/tmp/ckpt")), files)
    assert [rule for _, rule, _ in found] == ["SPK301"]


def test_a_config_named_by_a_variable_cannot_be_read_so_spk401_says_nothing() -> None:
    """``--config $1``: the settings may be in that file (rules.md: where the evidence cannot be read, nothing)."""
    assert _training("slurm/run.slurm", _slurm("python scripts/train_model.py --config $1 --start $2\n")) == []
    plain = _training("slurm/run.slurm", _slurm("python scripts/train_model.py --start $2\n"))
    assert [rule for _, rule, _ in plain] == ["SPK401"]
