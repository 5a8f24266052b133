"""``smoke --cmd`` on real training scripts of the kinds teams run: plain PyTorch with a DataLoader and its
generator, a stock Lightning job and a stock Hugging Face Trainer job (``tests/smoke/jobs/``, tiny
models built in code). Correct jobs verify with default options; each broken one fails naming its cause.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from smoke_helpers import run_smoke

from spikelint.schemas import validation_errors

JOBS = Path(__file__).parent / "jobs"
PLAIN = (f"{sys.executable} {JOBS / 'plain_torch.py'} --max-steps {{steps}} --save-every {{every}} "
         f"--output-dir {{ckpt}} {{resume}}")


def smoke(tmp_path: Path, command: str, *options: str) -> dict:
    result = run_smoke(tmp_path / "run", *options, "--cmd", command)
    summary = result.summary()
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert result.exit_code == summary["exit_code"]
    assert "<svg" in (tmp_path / "run" / "report.html").read_text(encoding="utf-8") or not summary["variants"]
    return summary


def variant(summary: dict, name: str) -> dict:
    return next(v for v in summary["variants"] if v["name"] == name)


def test_a_correct_plain_pytorch_job_that_logs_its_resume_verifies(tmp_path: Path) -> None:
    summary = smoke(tmp_path, PLAIN)
    assert summary["verdict"] == "verified", summary["message"]
    plan = summary["plan"]
    assert plan["step_lines"]["examples"][0].startswith("epoch=0 step=1 loss=")
    assert plan["step_lines"]["not_steps_count"] > 0  # "Saving checkpoint at step 4 …" and the resume lines
    assert plan["steps_per_epoch"] == 16 and plan["epoch_boundary_crossed"] is True
    assert plan["checkpoints_seen"]["layout"] == "numbered"
    assert "sigterm-mid-step" in plan["variants"]  # the variants do not depend on how fast a step is
    between = variant(summary, "kill-between-checkpoints")
    # step 24 on a quiet machine; a kill that a loaded machine delivers a save late resumes from step 28
    assert f"the resumed run loaded step-{between['resumed_from_step']}.pt" in between["notes"]
    assert between["resumed_from_step"] in (24, 28)
    torn = variant(summary, "truncated-newest")
    newest = max(torn["checkpoints_before_interruption"])  # 24; 28 where a loaded machine delivers the kill late
    refused = torn["refused_checkpoints"]
    assert refused and refused[0]["path"] == f"step-{newest}.pt" and f"step-{newest - 4}.pt" in refused[0]["reason"]


def test_a_step_counter_off_by_one_is_named(tmp_path: Path) -> None:
    summary = smoke(tmp_path, PLAIN + " --bug step-off-by-one", "--signal", "kill")
    assert summary["verdict"] == "state_differs"
    message = variant(summary, "kill-between-checkpoints")["message"]
    # step 24; 28 where a loaded machine delivers the kill a save late
    loaded = re.search(r"loaded step-(\d+)\.pt, the checkpoint of step \1, but its first step line is step (\d+)", message)
    assert loaded and int(loaded[1]) in (24, 28) and int(loaded[2]) == int(loaded[1]) + 2, message
    assert "off by +1" in message


def test_an_optimizer_saved_under_another_name_and_not_saved_at_all(tmp_path: Path) -> None:
    summary = smoke(tmp_path, PLAIN + " --bug no-optimizer", "--signal", "kill")
    assert summary["verdict"] == "state_differs"
    assert "no optimizer state in any checkpoint file" in summary["message"]


def test_a_loader_generator_not_restored_fails_once_the_plan_crosses_a_long_epoch(tmp_path: Path) -> None:
    command = PLAIN.replace("{resume}", "--samples 128 {resume}") + " --bug no-loader-generator"
    silent = (f"{sys.executable} -m spikelint.smoke.example_train --max-steps {{steps}} --save-every {{every}} "
              f"--ckpt-dir {{ckpt}} {{resume}}")  # prints no epoch
    unknown = smoke(tmp_path / "unknown", silent, "--signal", "kill", "--steps", "12", "--checkpoint-every", "2")
    assert unknown["plan"]["steps_per_epoch"] is None and unknown["plan"]["epoch_boundary_crossed"] is None
    assert any("no epoch boundary was crossed" in warning and "--steps-per-epoch" in warning
               for warning in unknown["warnings"])
    known = smoke(tmp_path / "known", command, "--signal", "kill", "--steps-per-epoch", "32")
    assert known["plan"]["steps"] > 32 and known["plan"]["epoch_boundary_crossed"] is True
    assert known["verdict"] == "state_differs"
    assert "data position" in variant(known, "kill-between-checkpoints")["message"]


def test_an_epoch_only_the_checkpoints_show_is_found_and_crossed(tmp_path: Path) -> None:
    """64 batches an epoch, longer than the 40-step default plan, and no epoch= on the step lines: the
    epoch counter in the checkpoints says the job has epochs; the plan runs on until it changes, then
    past it, and a loader generator that is not restored is caught (the last release said VERIFIED)."""
    command = PLAIN.replace("{resume}", "--samples 256 --no-epoch-lines {resume}")
    broken = smoke(tmp_path / "broken", command + " --bug no-loader-generator", "--signal", "kill")
    assert broken["plan"]["steps_per_epoch"] == 64 and broken["plan"]["epoch_boundary_crossed"] is True
    assert broken["verdict"] == "state_differs", broken["message"]
    assert "data position" in variant(broken, "kill-between-checkpoints")["message"]


def test_a_job_that_prints_no_step_is_tested_through_the_checkpoints_it_writes(tmp_path: Path) -> None:
    """A stock Trainer prints ``{'loss': …}`` and no step: the checkpoints it writes are its progress (the
    signal goes out half a period after the checkpoint before the planned step), and its loss lines, one
    per step, are compared in order."""
    command = PLAIN.replace("{resume}", "--no-step-lines --step-time 0.03 {resume}")
    good = smoke(tmp_path / "good", command, "--signal", "kill")
    assert good["verdict"] == "verified", good["message"]
    between = variant(good, "kill-between-checkpoints")
    assert between["resumed_from_step"] == 24 and between["losses"]["equal"] is True
    assert "the losses of steps 25-40" in between["message"]
    broken = smoke(tmp_path / "broken", command + " --bug no-optimizer", "--signal", "kill")
    assert broken["verdict"] == "state_differs"
    assert "no optimizer state in any checkpoint file" in broken["message"]


def test_steps_counted_from_zero_are_read_as_such(tmp_path: Path) -> None:
    """``step=0`` after the first step (nanoGPT's ``iter 0``): read one early, every resume point would be
    a step off and the off-period resume would look like one on the period."""
    command = PLAIN.replace("{resume}", "--count-from-zero {resume}")
    summary = smoke(tmp_path, command, "--signal", "kill")
    assert summary["verdict"] == "verified", summary["message"]
    off = variant(summary, "kill-off-period")
    assert off["resumed_from_step"] % 2 == 1, off  # an odd step, off the period, as planned


@pytest.mark.parametrize(("bug", "named"), [("no-scheduler", "scheduler"), ("restart-epoch", "data position")])
def test_planted_bugs_are_named_with_long_epochs_and_no_epoch_on_the_lines(tmp_path: Path, bug: str, named: str) -> None:
    """Epochs of 64 steps, longer than the default plan, and step lines without epoch=: the plan finds the
    epoch in the checkpoints, runs past it, and names what the job does not restore."""
    command = PLAIN.replace("{resume}", f"--samples 256 --no-epoch-lines --bug {bug} {{resume}}")
    summary = smoke(tmp_path, command, "--signal", "kill")
    assert summary["verdict"] == "state_differs" and summary["plan"]["epoch_boundary_crossed"] is True
    assert named in variant(summary, "kill-between-checkpoints")["message"]


def test_a_job_with_epochs_the_plan_cannot_cross_is_incomplete(tmp_path: Path) -> None:
    """4,096 batches an epoch: past the longest plan a smoke test runs. Every variant passes, but no
    resume ran past an epoch end: INCOMPLETE, exit 3, naming what was not tested."""
    command = PLAIN.replace("{resume}", "--samples 16384 --no-epoch-lines {resume}")
    summary = smoke(tmp_path, command, "--signal", "kill", "--steps", "12", "--checkpoint-every", "2")
    assert summary["verdict"] == "incomplete" and summary["exit_code"] == 3
    assert all(v["verdict"] == "verified" for v in summary["variants"])
    assert "no resume ran past an epoch end" in summary["message"] and "--steps-per-epoch" in summary["message"]


def test_a_long_epoch_printed_on_the_step_lines_is_found_by_running_longer(tmp_path: Path) -> None:
    """128 batches an epoch, default 40 steps: the reference is run on until its epoch changes, then the plan
    resumes in the second epoch, where a loader generator re-seeded instead of restored shows."""
    command = PLAIN.replace("{resume}", "--samples 512 {resume}") + " --bug no-loader-generator"
    summary = smoke(tmp_path, command, "--signal", "kill")
    plan = summary["plan"]
    assert plan["steps_per_epoch"] == 128 and plan["epoch_probed_to_step"] == 160
    assert plan["steps"] > 128 and plan["epoch_boundary_crossed"] is True
    assert summary["verdict"] == "state_differs"
    assert "data position (step-" in variant(summary, "kill-between-checkpoints")["message"]


def test_a_single_checkpoint_is_named_as_such_when_torn(tmp_path: Path) -> None:
    summary = smoke(tmp_path, PLAIN + " --single", "--signal", "kill")
    assert summary["plan"]["checkpoints_seen"]["layout"] == "single"
    assert variant(summary, "kill-between-checkpoints")["verdict"] == "verified"
    torn = variant(summary, "truncated-newest")
    assert torn["verdict"] == "resume_failed"
    assert "the job keeps a single checkpoint, last.pt" in torn["message"]
    assert "nothing to fall back to" in torn["message"]


def test_global_rng_states_left_out_are_named(tmp_path: Path) -> None:
    summary = smoke(tmp_path, PLAIN + " --bug no-rng", "--signal", "kill")
    assert summary["verdict"] == "state_differs"
    assert "no RNG state in any checkpoint file" in variant(summary, "kill-between-checkpoints")["message"]


def test_a_job_whose_epoch_restarts_on_resume_fails(tmp_path: Path) -> None:
    summary = smoke(tmp_path, PLAIN + " --bug restart-epoch", "--signal", "kill")
    assert summary["verdict"] == "state_differs"


def test_a_job_without_fallback_and_one_without_a_sigterm_handler(tmp_path: Path) -> None:
    torn = smoke(tmp_path / "torn", PLAIN + " --bug no-fallback", "--signal", "kill")
    assert variant(torn, "truncated-newest")["verdict"] == "resume_failed"
    assert "torn" in variant(torn, "truncated-newest")["message"]
    term = smoke(tmp_path / "term", PLAIN + " --bug no-sigterm-handler", "--signal", "term")
    assert term["verdict"] == "resume_failed"


LIGHTNING = (f"{sys.executable} {JOBS / 'lightning_job.py'} --max-steps {{steps}} --save-every {{every}} "
             f"--ckpt-dir {{ckpt}} {{resume}}")


def test_a_correct_stock_lightning_job_verifies_and_its_ema_outside_the_checkpoint_does_not(tmp_path: Path) -> None:
    pytest.importorskip("lightning")
    good = smoke(tmp_path / "good", LIGHTNING, "--signal", "kill")
    assert good["verdict"] == "verified", good["message"]
    torn = variant(good, "truncated-newest")
    newest = max(torn["checkpoints_before_interruption"])  # 24; 28 where a loaded machine delivers the kill late
    assert f"the torn epoch=1-step={newest}.ckpt was not read: the job loaded last.ckpt" in torn["message"], torn
    bad = smoke(tmp_path / "bad", LIGHTNING + " --bug ema-outside-checkpoint", "--signal", "kill")
    assert bad["verdict"] == "state_differs", [(v["name"], v["verdict"], v["message"]) for v in bad["variants"]]
    assert "state_dict.ema" in bad["message"]


def test_a_loader_that_skips_a_whole_epoch_when_resumed_at_its_end_fails_every_time(tmp_path: Path) -> None:
    """Resumed from the checkpoint at an epoch's last batch, the loader skips every batch of the epoch
    Lightning has moved on to: an empty epoch is counted. The second resume of the successive variant
    starts there on purpose, so this shows on every run, not when a late kill happens to land there."""
    pytest.importorskip("lightning")
    summary = smoke(tmp_path, LIGHTNING + " --bug epoch-end-skip", "--signal", "kill")
    assert summary["verdict"] == "state_differs", summary["message"]
    successive = variant(summary, "successive-resume")
    assert successive["verdict"] == "state_differs" and "the last step of epoch 1" in successive["description"]
    assert "epoch" in successive["message"], successive["message"]
    assert variant(summary, "kill-off-period")["verdict"] == "verified"  # resumed inside the first epoch


def test_a_plain_loader_under_lightning_is_named_with_lightnings_own_warning(tmp_path: Path) -> None:
    pytest.importorskip("lightning")
    summary = smoke(tmp_path, LIGHTNING + " --bug plain-loader", "--signal", "kill")
    assert summary["verdict"] == "state_differs"
    message = variant(summary, "kill-between-checkpoints")["message"]
    assert message.startswith("data position not restored: the job's own log says \"You're resuming from a "
                              "checkpoint that ended before the epoch ended"), message


def test_a_stock_hugging_face_trainer_is_told_that_it_trusts_its_newest_folder(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    command = (f"{sys.executable} {JOBS / 'hf_trainer_job.py'} --max-steps {{steps}} --save-every {{every}} "
               f"--output-dir {{ckpt}} {{resume}}")
    summary = smoke(tmp_path, command, "--signal", "kill")
    torn = variant(summary, "truncated-newest")
    assert torn["verdict"] == "resume_failed"
    assert "Hugging Face Trainer writes checkpoint-N/ in place" in torn["message"]
    assert variant(summary, "kill-off-period")["verdict"] == "verified", variant(summary, "kill-off-period")


def test_a_kill_that_reaches_the_job_inside_a_save_is_aimed_again(tmp_path: Path) -> None:
    """Step lines two steps late and saves written file by file (torchrun workers with millisecond steps): the
    SIGKILL sent after step 14 lands inside the save of step 16. That tests a torn write, which truncated-newest
    tests; kill-between and successive-resume run again with their kills right after a checkpoint and verify,
    saying so, while the variants that test a torn checkpoint fail naming it."""
    late = (f"{sys.executable} {JOBS / 'late_lines.py'} --max-steps {{steps}} --save-every {{every}} "
            f"--output-dir {{ckpt}} {{resume}}")
    summary = smoke(tmp_path, late, "--signal", "kill", "--steps", "24", "--checkpoint-every", "4")
    for name in ("kill-between-checkpoints", "successive-resume"):
        result = variant(summary, name)
        assert result["verdict"] == "verified", result["message"]
        assert "reached the job inside its save of step" in result["notes"][0]
        assert "run again with each kill right after a checkpoint" in result["notes"][0]
    truncated = variant(summary, "truncated-newest")
    assert truncated["verdict"] == "resume_failed" and "torn" in truncated["message"]


def test_a_step_counter_off_by_one_is_named_by_the_sigterm_variants_too(tmp_path: Path) -> None:
    """The job saves at the step boundary on SIGTERM, but records the step one ahead: the SIGTERM variants name
    the counter, not a missing handler (which the job has)."""
    summary = smoke(tmp_path, PLAIN + " --bug step-off-by-one", "--signal", "term")
    for name in ("sigterm", "sigterm-mid-step"):
        message = variant(summary, name)["message"]
        assert "the step counter it saves or restores is off by +1" in message, message
        assert "without a checkpoint at the step boundary" not in message
        assert variant(summary, name)["verdict"] == "state_differs"
