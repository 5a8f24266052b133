"""SPK705: sbatch reads ``#SBATCH`` lines only up to the first command; a later one is ignored by
Slurm and reported at its own line, never read as a setting."""

from __future__ import annotations

from spikelint.engine import lint_snippet

LEADING = "#!/bin/bash\n#SBATCH --job-name=sft\n#SBATCH --time=4:00:00\n"
LAUNCH = "srun torchrun train.py --output_dir /shared/ckpt/sft --save_steps 500 --resume_from_checkpoint /shared/ckpt/sft/checkpoint-500\n"


def _late(text: str, filename: str = "slurm/sft.sbatch") -> list[tuple[int, str]]:
    return [(finding.line, finding.severity) for finding in lint_snippet(filename, text) if finding.rule == "SPK705"]


def test_a_gpu_request_after_a_command_is_an_error_at_its_line() -> None:
    assert _late(LEADING + "module load cuda/12.1\n#SBATCH --gres=gpu:8\n" + LAUNCH) == [(5, "error")]


def test_each_ignored_line_is_reported() -> None:
    text = LEADING + "set -euo pipefail\n\n#SBATCH --requeue\n#SBATCH --output=/shared/logs/%j.out\n" + LAUNCH
    assert [line for line, _ in _late(text)] == [6, 7]


def test_blank_lines_and_comments_inside_the_leading_block_are_fine() -> None:
    text = "#!/bin/bash\n# resources\n#SBATCH --gres=gpu:8\n\n## time\n#SBATCH --time=4:00:00\n" + LAUNCH
    assert _late(text) == []


def test_a_commented_out_directive_is_not_a_directive() -> None:
    assert _late(LEADING + "module load cuda\n##SBATCH --gres=gpu:8\n# SBATCH --gres=gpu:8\n" + LAUNCH) == []


def test_a_job_script_written_by_a_heredoc_is_judged_on_its_own_block() -> None:
    text = (LEADING + "mkdir -p jobs\ncat > jobs/eval.sbatch <<'EOF'\n#!/bin/bash\n#SBATCH --gres=gpu:1\n"
            "srun python score.py\nEOF\nsbatch jobs/eval.sbatch\n")
    assert _late(text) == []


def test_a_non_training_job_gets_info_unless_the_ignored_line_asks_for_gpus() -> None:
    text = "#!/bin/bash\n#SBATCH --time=1:00:00\nmodule load python\n#SBATCH --mem=8G\npython make_index.py\n"
    assert _late(text) == [(4, "info")]
