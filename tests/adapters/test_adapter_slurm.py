"""Slurm batch scripts in the one workload model: directives with positions, images, GPUs, lifecycle."""

from __future__ import annotations

import pytest

from spikelint.adapters import workloads_in
from spikelint.adapters.common import UNBOUNDED_RETRIES
from spikelint.adapters.slurm import gres_gpus
from spikelint.adapters.slurm import image_reference
from spikelint.adapters.slurm import signal_seconds
from spikelint.adapters.slurm import time_seconds
from spikelint.config import Config
from spikelint.documents import parse_text
from spikelint.engine import lint_snippet
from spikelint.model import SourceFile
from spikelint.model import Workload

TORCHTITAN = """\
#!/bin/bash
#SBATCH --job-name=torchtitan-llama3
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=h100:8
#SBATCH --time=2-00:00:00
#SBATCH --signal=B:USR1@90
#SBATCH --requeue
#SBATCH -o /fsx/logs/%x_%j.out

srun --container-image=ghcr.io#pytorch/torchtitan:nightly torchrun --nnodes 4 --nproc_per_node 8 \\
  -m torchtitan.train --job.config_file ./llama3_8b.toml
"""


def workloads(text: str, name: str = "job.sbatch") -> list[Workload]:
    document = parse_text(SourceFile(name, name, "shell"), text)
    return workloads_in(document, Config())


def test_directives_become_the_workload() -> None:
    [job] = workloads(TORCHTITAN)
    assert (job.source, job.kind, job.anchor.line, job.name and job.name.value) == \
        ("slurm", "sbatch", 2, "torchtitan-llama3")
    assert job.gpus_total is not None and job.gpus_total.value == 32 and job.gpus_total.line == 5
    assert job.pods == 4 and job.is_training
    assert job.deadline is not None and job.deadline.value == 2 * 86400 and job.deadline.line == 6
    assert job.grace_period is not None and job.grace_period.value == 90 and job.grace_period.line == 7
    assert job.retries is not None and job.retries.value == UNBOUNDED_RETRIES and job.retries.line == 8
    [step] = [container for container in job.containers if container.role == "step"]
    assert step.image is not None and step.image.value == "ghcr.io/pytorch/torchtitan:nightly"
    assert (step.image.line, step.image.column) == (11, 24)


def test_directives_after_the_first_command_are_not_read() -> None:
    """sbatch stops at the first command: a later #SBATCH is a plain comment to it, kept aside for SPK705."""
    [job] = workloads("#!/bin/bash\necho start\n#SBATCH --gres=gpu:8\npython train.py\n")
    assert job.gpus_total is None and job.anchor.line == 3
    assert [(where.value, where.line) for where in job.slurm.ignored] == \
        [("#SBATCH --gres=gpu:8", 3)]


def test_a_late_directive_beside_a_leading_block_is_not_read() -> None:
    [job] = workloads("#!/bin/bash\n#SBATCH --time=1:00:00\n\n# setup\nmodule load cuda\n#SBATCH --gres=gpu:8\n"
                      "torchrun train.py\n")
    assert job.gpus_total is None and job.deadline is not None and job.deadline.value == 3600
    assert [where.line for where in job.slurm.ignored] == [6]


def test_a_heredoc_that_writes_a_job_script_is_not_a_late_directive() -> None:
    text = ("#!/bin/bash\n#SBATCH --time=1:00:00\nmkdir -p jobs\ncat > jobs/step.sbatch <<'EOF'\n#!/bin/bash\n"
            "#SBATCH --gres=gpu:8\n#SBATCH --time=2:00:00\nsrun torchrun train.py\nEOF\n")
    jobs = workloads(text)
    assert [job.slurm.ignored for job in jobs] == [(), ()]


def test_a_script_without_directives_is_not_a_job() -> None:
    assert workloads("#!/bin/bash\nsrun python train.py\n", "run.sh") == []


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("30:15", 1815), ("04:00:00", 14400), ("1-12", 129600), ("1-00:30", 88200),
    ("2-00:00:00", 172800), ("UNLIMITED", None), ("infinite", None), ("0", None), ("soon", None)])
def test_time_formats(text: str, seconds: int | None) -> None:
    assert time_seconds(text) == seconds


@pytest.mark.parametrize(("text", "seconds"), [("B:USR1@90", 90), ("USR1@120", 120), ("R:TERM", 60),
                                               ("SIGUSR1@x", None)])
def test_signal_notice(text: str, seconds: int | None) -> None:
    assert signal_seconds(text) == seconds


@pytest.mark.parametrize(("text", "gpus"), [("gpu:8", 8), ("gpu:a100:4", 4), ("gpu", 1), ("gpu:8(S:0-1)", 8),
                                            ("nvme:1,gpu:2", 2), ("nvme:1", None)])
def test_gres(text: str, gpus: int | None) -> None:
    assert gres_gpus(text) == gpus


@pytest.mark.parametrize(("text", "reference"), [
    ("nvcr.io#nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/pytorch:24.05-py3"),
    ("docker://nvcr.io#nvidia/nemo:24.07", "nvcr.io/nvidia/nemo:24.07"),
    ("docker://ubuntu:22.04", "ubuntu:22.04"),
    ("/lustre/images/pytorch.sqsh", None), ("./nemo.sif", None), ("library://alpine", None)])
def test_image_references(text: str, reference: str | None) -> None:
    """pyxis/enroot write the registry before '#'; local squashfs and SIF files have nothing to pin."""
    assert image_reference(text) == reference


def test_gpus_total_and_gpus_per_task() -> None:
    [total] = workloads("#!/bin/bash\n#SBATCH -N 2\n#SBATCH -G 16\n#SBATCH -t 60\nsrun python train.py\n")
    assert total.gpus_total is not None and total.gpus_total.value == 16
    [per_task] = workloads("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n"
                           "#SBATCH --gpus-per-task=1\nsrun python train.py\n")
    assert per_task.gpus_total is not None and per_task.gpus_total.value == 8


def test_scontrol_requeue_in_a_trap_is_a_retry() -> None:
    text = ("#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=10:00:00\n"
            "trap 'scontrol requeue $SLURM_JOB_ID' USR1\nsrun python train.py --save-steps 100\n")
    [job] = workloads(text)
    assert job.retries is not None and job.retries.line == 4
    findings = lint_snippet("job.sh", text, {"select": ["SPK405"]})
    assert [(f.rule, f.line) for f in findings] == [("SPK405", 2)]
    assert "scontrol requeue" in findings[0].message


def test_no_requeue_is_zero_retries() -> None:
    [job] = workloads("#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH --no-requeue\nsrun python train.py\n")
    assert job.retries is not None and job.retries.value == 0


def test_heredoc_and_wrap_jobs() -> None:
    text = ("#!/bin/bash\ncat > job.sbatch <<'EOF'\n#!/bin/bash\n#SBATCH --gres=gpu:4\n#SBATCH -t 1:00:00\n"
            "srun python train.py --save-steps 10\nEOF\nsbatch job.sbatch\n"
            "sbatch -G 1 --wrap 'python finetune.py --max_steps 10'\n")
    found = workloads(text, "launch.sh")
    assert [(job.anchor.line, job.gpus_total.value if job.gpus_total else None) for job in found] == \
        [(4, 4), (9, 1)]
    assert all(job.is_training for job in found)


WRAPS = ("#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH --time=1:00:00\n"
         "srun python train.py --save_steps 10 --resume_from_checkpoint latest\n"
         'sbatch -G 1 --wrap "srun apptainer exec --nv docker://myorg/eval:latest python eval.py"\n'
         "sbatch -G 1 --wrap='python sft.py --save_steps 10 | tee sft.log'\n"
         "sbatch --wrap=\"apptainer exec $SIF sh -c 'echo ok \\$(busybox | head -n 1)'\"\n"
         'echo sbatch --wrap "srun apptainer exec docker://myorg/eval:latest python eval.py"\n'
         "# sbatch --wrap 'srun --container-image=ubuntu python t.py | tee x'\n")


def test_a_wrap_job_runs_the_images_of_its_command() -> None:
    """The image a ``--wrap`` command's step runs belongs to that job, placed in the file; the script that
    submits it (a job of its own here) does not run it."""
    found = workloads(WRAPS, "launch.sh")
    steps = {job.anchor.line: [(c.image.value, c.image.line, c.image.column) for c in job.containers
                               if c.role == "step" and c.image is not None] for job in found}
    assert steps == {2: [], 5: [("myorg/eval:latest", 5, 46)], 6: [], 7: []}


def test_rules_read_a_wrap_command_as_the_job_script_sbatch_writes() -> None:
    """SPK101 on the image inside ``--wrap``, SPK501/SPK502 on its last pipeline (sbatch runs it with
    ``/bin/sh``, no pipefail); nothing for a pipe inside a substitution, an ``echo``, or a comment."""
    found = [(f.rule, f.line, f.column) for f in lint_snippet("launch.sh", WRAPS, {"select": ["SPK1", "SPK5"]})]
    assert found == [("SPK101", 5, 46), ("SPK501", 6, 21), ("SPK502", 6, 21)]


def test_a_command_line_job_is_told_to_fix_the_sbatch_command() -> None:
    """`sbatch --wrap` takes its options on the command line: no `#SBATCH` line to add or drop."""
    text = ('#!/bin/bash\nsbatch -G 1 --requeue --wrap "python train.py --save_steps 10 --output_dir /lustre/r"\n')
    found = {f.rule: f.message for f in lint_snippet("launch.sh", text, {"select": ["SPK405", "SPK704"]})}
    assert "no sbatch --time" in found["SPK704"] and "set sbatch's --time a margin" in found["SPK704"]
    assert "is requeued (sbatch --requeue)" in found["SPK405"] and "(sbatch --no-requeue)" in found["SPK405"]
    assert "#SBATCH" not in found["SPK405"] + found["SPK704"]


def test_a_requeue_directive_below_the_anchor_is_named_with_its_line() -> None:
    text = ("#!/bin/bash\n#SBATCH --job-name=pretrain\n#SBATCH --gres=gpu:8\n#SBATCH --time=24:00:00\n"
            "#SBATCH --requeue\nsrun python train.py --save_steps 100 --output_dir /lustre/run\n")
    (finding,) = lint_snippet("job.sbatch", text, {"select": ["SPK405"]})
    assert finding.line == 2 and "is requeued (#SBATCH --requeue, line 5)" in finding.message


def test_an_image_the_model_rewrites_is_also_named_as_written() -> None:
    """Pyxis writes ``registry#image``; the message names what the file says as well as what it means."""
    text = ("#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH -t 60\n"
            "srun --container-image=nvcr.io#nvidia/pytorch:latest python train.py --save_steps 10\n"
            "srun --container-image=docker://ubuntu:latest hostname\n"
            "BASE=nvcr.io/nvidia/nemo\nsrun --container-image=docker://${BASE}:latest hostname\n")
    found = [(f.line, f.message.split(" uses ")[0]) for f in lint_snippet("job.sbatch", text, {"select": ["SPK101"]})]
    assert found == [(4, "image 'nvcr.io/nvidia/pytorch:latest' (written 'nvcr.io#nvidia/pytorch:latest')"),
                     (5, "image 'ubuntu:latest'"),  # the prefix alone is no other spelling
                     (7, "image 'nvcr.io/nvidia/nemo:latest' (from 'docker://${BASE}:latest')")]


def test_the_pipefail_fix_for_a_wrap_command_is_inside_it() -> None:
    """The submitting script's `set -o pipefail` does not reach the job: the fix runs the command with bash."""
    text = ('#!/bin/bash\nset -euo pipefail\nsbatch -G 1 --wrap "python train.py --save_steps 10 | tee log.txt"\n'
            "sbatch -G 1 --wrap \"bash -o pipefail -c 'python train.py --save_steps 10 | tee log.txt'\"\n")
    (finding,) = lint_snippet("launch.sh", text, {"select": ["SPK501"]})
    assert finding.line == 3 and "sbatch --wrap \"bash -o pipefail -c '…'\"" in finding.message


def test_a_wrap_command_in_double_quotes_has_the_submitting_scripts_variables() -> None:
    """The shell expands ``"…$IMG…"`` before sbatch sees it; ``'…$IMG…'`` is expanded when the job runs."""
    text = ('#!/bin/bash\nIMG=nvcr.io/nvidia/pytorch:latest\n'
            'sbatch -G 1 --wrap "srun --container-image=$IMG python eval.py"\n'
            "sbatch -G 1 --wrap 'srun --container-image=$IMG python eval.py'\n"
            "sbatch -G 1 --wrap='srun --container-image=$IMG python eval.py'\n")
    found = [(f.rule, f.line, f.column) for f in lint_snippet("launch.sh", text, {"select": ["SPK1"]})]
    assert found == [("SPK101", 2, 5), ("SPK104", 4, 44), ("SPK104", 5, 44)]


def test_rules_speak_slurm() -> None:
    findings = {f.rule: f for f in lint_snippet("job.sbatch", TORCHTITAN.replace("#SBATCH --time=2-00:00:00\n", ""),
                                                {})}
    assert "SPK704" in findings and "#SBATCH --time" in findings["SPK704"].message
    assert "activeDeadlineSeconds" not in findings["SPK704"].message
    assert "SPK504" not in findings and "SPK302" not in findings and "SPK603" not in findings
    assert "SPK101" in findings and findings["SPK101"].line == 10


def test_persistent_paths_and_unknown_paths() -> None:
    """Node-local paths are lost; a configured persistent path is kept; other paths are unknown, not reported."""
    text = ("#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH -t 60\n"
            "srun python train.py --save_steps 10 --resume_from_checkpoint latest --output_dir /local_scratch/run\n"
            "srun python train.py --save_steps 10 --resume_from_checkpoint latest --output_dir /lustre/run\n"
            "srun python train.py --save_steps 10 --resume_from_checkpoint latest --output_dir /ckpt/run\n")
    found = [(f.rule, f.line) for f in lint_snippet("job.sh", text, {"select": ["SPK301"]})]
    assert found == [("SPK301", 4)]  # /lustre and /ckpt: the script does not say, so nothing is claimed
    kept = [(f.rule, f.line) for f in lint_snippet("job.sh", text, {"select": ["SPK301"],
                                                                     "persistent_paths": ["/local_scratch"]})]
    assert kept == []


def test_sbatch_reading_its_script_from_a_heredoc() -> None:
    text = ("#!/bin/bash\nsbatch <<EOF\n#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=1:00:00\n"
            "srun torchrun train.py --save-steps 100 --output_dir /tmp/run\nEOF\n")
    [job] = workloads(text, "submit.sh")
    assert job.anchor.line == 4 and job.is_training
    assert [(f.rule, f.line) for f in lint_snippet("submit.sh", text, {"select": ["SPK301", "SPK402"]})] == \
        [("SPK402", 4), ("SPK301", 6)]


@pytest.mark.parametrize("step", ["srun apptainer run --nv docker://org/train:latest python3 -m pkg.train",
                                  "srun --mpi=pmix -N 2 singularity exec docker://org/train:latest bash run.sh",
                                  "apptainer exec --nv docker://org/train:latest python train.py"])
def test_an_image_a_container_tool_runs_under_srun_is_judged(step: str) -> None:
    text = f"#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=10:00:00\n{step}\n"
    findings = lint_snippet("job.sbatch", text, {"select": ["SPK101"]})
    assert [(f.rule, f.line, f.column) for f in findings] == [("SPK101", 4, step.index("docker://") + 1)]


def test_srun_of_a_container_tool_with_a_pinned_image_is_quiet() -> None:
    text = f"#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=1:00:00\nsrun apptainer run docker://org/t:1.2.3@sha256:{'a' * 64} x\n"
    assert lint_snippet("job.sbatch", text, {"select": ["SPK1"]}) == []


BIG_JOB = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n#SBATCH --time=4:00:00\n{comment}"
           "srun python train.py --output_dir /shared/run --save_steps 100 --resume_from_checkpoint /shared/run/last\n")


@pytest.mark.parametrize("comment", ['#SBATCH --comment="spikelint.io/baseline: bert-1gpu-r3"\n',
                                     "#SBATCH --comment=sweep-7,spikelint.io/baseline=bert-1gpu-r3\n"])
def test_a_slurm_job_names_its_baseline_run_in_its_comment(comment: str) -> None:
    assert lint_snippet("big.sbatch", BIG_JOB.format(comment=comment), {"max_gpus": 1, "select": ["SPK701"]}) == []


def test_a_slurm_job_without_it_is_told_the_slurm_way_and_in_nodes() -> None:
    [finding] = lint_snippet("big.sbatch", BIG_JOB.format(comment="#SBATCH --comment=sweep-7\n"),
                             {"max_gpus": 1, "select": ["SPK701"]})
    assert (finding.line, finding.rule) == (3, "SPK701")
    assert "(2 nodes × 4 GPUs)" in finding.message and "#SBATCH --comment=spikelint.io/baseline:<run-id>" in finding.message
    assert "annotation" not in finding.message
