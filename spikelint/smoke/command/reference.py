"""What makes an uninterrupted run of the command unusable as the reference every variant is compared with:
said at once, as a setup error (exit 2), instead of as a verdict about resuming."""

from __future__ import annotations

from pathlib import Path

from spikelint.smoke.command.process import CommandRun
from spikelint.smoke.command.verdict import describe


def ended_badly(reference: CommandRun, where: str, timeout_s: float) -> str | None:
    """Why the run did not end as a run that completes does, or ``None``."""
    if reference.timed_out:
        return (f"the uninterrupted command{where} did not finish before --timeout ({timeout_s:g} s) and was "
                f"killed; last output: {reference.tail()}")
    if reference.exit_code != 0:
        return f"the uninterrupted command{where} ended with {describe(reference.exit_code)}; last output: {reference.tail()}"
    return None


def unusable(reference: CommandRun, where: str, folder: Path, progress_regex: str) -> str | None:
    """Why a run that completed still cannot be a reference (no progress seen, nothing saved), or ``None``."""
    if not reference.steps:
        return (f"the command{where} printed no line matching --progress-regex {progress_regex!r} and wrote no "
                f"numbered checkpoint to {{ckpt}} ({folder}): print the step (step=N), or name checkpoints by step "
                "(checkpoint-N, step-N.pt)")
    if not folder.is_dir() or not any(folder.iterdir()):
        return (f"the uninterrupted command{where} wrote nothing into {{ckpt}} ({folder}): smoke resumes a run from "
                "the checkpoints it writes there, so pass {ckpt} as the folder your command saves to "
                "(e.g. --ckpt-dir {ckpt}, --output_dir {ckpt})")
    return None
