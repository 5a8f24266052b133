"""``spikelint smoke --cmd``: every interruption variant on a command, with a torch-free job that runs in milliseconds."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")  # the comparison loads checkpoint files through compare.py

from smoke_helpers import run_smoke

from spikelint.schemas import validation_errors
from spikelint.smoke.command.process import CommandRun
from spikelint.smoke.command.process import run_command
from spikelint.smoke.command.files import complete_steps
from spikelint.smoke.command.files import step_of

JOB = Path(__file__).with_name("cmd_job.py")
COMMAND = f"{sys.executable} {JOB} --max-steps {{steps}} --save-every {{every}} --ckpt-dir {{ckpt}} {{resume}}"
STEP = re.compile(r"step[=: ](\d+)")
LOSS = re.compile(r"loss[=: ](\S+)")


def variants(summary: dict) -> dict[str, dict]:
    return {variant["name"]: variant for variant in summary["variants"]}


def test_a_correct_command_passes_every_variant_and_kill_during_write_is_said_not_applicable(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", "--steps", "12", "--format", "json", "--cmd", COMMAND)
    summary = result.summary()
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert result.exit_code == 0 and summary["verdict"] == "verified", summary["message"]
    found = variants(summary)
    assert list(found) == ["kill-between-checkpoints", "truncated-newest", "kill-off-period", "sigterm",
                           "sigterm-mid-step"]
    assert summary["plan"]["not_applicable"][0]["name"] == "kill-during-write"
    assert "cannot be paused inside its checkpoint write" in summary["plan"]["not_applicable"][0]["reason"]
    torn = found["truncated-newest"]
    assert torn["resumed_from_step"] == 4 and torn["refused_checkpoints"][0]["path"] == "step-8.json"
    assert "the torn step-8.json refused" in torn["message"]
    off = found["kill-off-period"]
    assert off["resumed_from_step"] == 3 and "step-9.json" in off["notes"][0]  # its own {every} = 3
    assert (tmp_path / "run" / "logs" / "reference-every-3.log").is_file()
    assert found["sigterm"]["resumed_from_step"] >= 10
    assert any(event["event"] == "checkpoint_damaged" for event in result.events())
    assert "kill-during-write not run" in run_smoke(tmp_path / "text", "--steps", "12", "--signal", "kill",
                                                    "--cmd", COMMAND).stdout


def test_state_lost_inside_an_accumulation_window_fails_only_off_period_and_the_summary_says_why(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", "--steps", "12", "--signal", "kill", "--cmd",
                       COMMAND + " --accumulate 2 --bug forget-accumulation")
    summary = result.summary()
    assert result.exit_code == 1 and summary["verdict"] == "state_differs"
    found = variants(summary)
    assert found["kill-between-checkpoints"]["verdict"] == "verified"  # resumed from step 8: on the window
    assert found["kill-off-period"]["verdict"] == "state_differs"
    # the earliest checkpoint the resumed run wrote names the difference
    assert "first differing key step-6.json:w" in found["kill-off-period"]["message"]
    assert "Variants disagree" in summary["message"] and "off the job's period" in summary["message"]


def test_a_counter_restored_but_not_saved_back_passes_one_resume_and_fails_the_second(tmp_path: Path) -> None:
    """The job positions its data by a progress counter that it saves counted since the process began: a first
    resume reads the uninterrupted run's counter (right), the counters it saves are off (bookkeeping that fed
    nothing, as far as one resume can tell), and only a second resume reads one of them."""
    result = run_smoke(tmp_path / "run", "--steps", "24", "--signal", "kill", "--format", "json", "--cmd",
                       COMMAND + " --bug counter-since-start")
    summary = result.summary()
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert result.exit_code == 1 and summary["verdict"] == "state_differs"
    found = variants(summary)
    assert found["kill-between-checkpoints"]["verdict"] == "verified"
    assert "progress bookkeeping" in found["kill-between-checkpoints"]["message"]
    again = found["successive-resume"]
    assert again["verdict"] == "state_differs" and again["resumed_from_step"] == 16
    assert again["message"].startswith("state not saved back after a resume: the checkpoint the first resumed run "
                                       "wrote (step-16.json) already differs")
    assert "save them counted from step 0" in again["message"] and "data position not restored" not in again["message"]
    assert "the resumed run SIGKILLed again after step 18" in " ".join(again["notes"])


def test_a_correct_command_passes_the_successive_resume(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", "--steps", "24", "--signal", "kill", "--format", "json", "--cmd", COMMAND)
    summary = result.summary()
    assert result.exit_code == 0 and summary["verdict"] == "verified", summary["message"]
    again = variants(summary)["successive-resume"]
    assert again["resumed_from_step"] == 16 and again["losses"]["equal"] is True
    assert (tmp_path / "run" / "logs" / "successive-resume.resumed-first.log").is_file()


def test_a_plan_too_short_for_a_second_kill_has_no_successive_resume() -> None:
    from spikelint.smoke.plan import SmokeOptions
    from spikelint.smoke.plan import make_plan
    from spikelint.smoke.plan import successive_variant

    assert successive_variant(make_plan(SmokeOptions(steps=12, checkpoint_every=4, signal="kill"))) is None
    spec = successive_variant(make_plan(SmokeOptions(steps=24, checkpoint_every=4, signal="kill")))
    assert spec is not None and (spec.hold_at_step, spec.again_at_step, spec.expected_resume_step) == (14, 18, 16)
    assert successive_variant(make_plan(SmokeOptions(steps=24, checkpoint_every=4, signal="term"))) is None
    # an epoch of 16 steps: the second resume starts from the checkpoint at the first epoch's last step
    at_end = successive_variant(make_plan(SmokeOptions(steps=24, checkpoint_every=4, signal="kill")), 16)
    assert at_end is not None and (at_end.again_at_step, at_end.expected_resume_step) == (18, 16)
    assert "the last step of epoch 0" in at_end.description
    later = successive_variant(make_plan(SmokeOptions(steps=40, checkpoint_every=4, signal="kill")), 16)
    assert later is not None and (later.hold_at_step, later.again_at_step, later.expected_resume_step) == (26, 34, 32)
    too_long = successive_variant(make_plan(SmokeOptions(steps=24, checkpoint_every=4, signal="kill")), 100)
    assert too_long is not None and too_long.expected_resume_step == 16 and "epoch" not in too_long.description


def test_a_variant_the_command_finishes_before_is_incomplete_not_a_failure(tmp_path: Path) -> None:
    """The job stops at step 9 whatever {steps} says: the kill planned after step 10 never goes out. That
    variant tested nothing; it is neither a resume failure nor a pass, and the run is INCOMPLETE (exit 3)."""
    command = COMMAND.replace("--max-steps {steps}", "--max-steps 9")
    result = run_smoke(tmp_path / "run", "--steps", "12", "--signal", "kill", "--format", "json", "--cmd", command)
    summary = result.summary()
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert result.exit_code == 3 and summary["verdict"] == "incomplete", summary["message"]
    between = variants(summary)["kill-between-checkpoints"]
    assert between["verdict"] == "incomplete" and "before printing step 10" in between["message"]
    assert "no signal was sent, so this variant tested nothing" in between["message"]
    assert variants(summary)["kill-off-period"]["verdict"] == "verified"
    assert summary["message"].startswith("1 of 3 variants passed and none failed")


def test_a_torn_newest_checkpoint_crashing_the_resume_or_loaded_as_is_fails_with_the_file_named(tmp_path: Path) -> None:
    crash = run_smoke(tmp_path / "crash", "--steps", "12", "--signal", "kill", "--cmd", COMMAND + " --bug no-fallback")
    summary = crash.summary()
    assert crash.exit_code == 1 and summary["verdict"] == "resume_failed"
    torn = variants(summary)["truncated-newest"]
    assert torn["verdict"] == "resume_failed"
    assert torn["message"].startswith("resume failed: the newest checkpoint was torn, step-8.json (truncated to")
    assert "ended with exit 1 instead of refusing it" in torn["message"] and "JSONDecodeError" in torn["message"]
    assert "only the run whose newest checkpoint was torn failed" in summary["message"]

    trusting = run_smoke(tmp_path / "trust", "--steps", "12", "--signal", "kill", "--cmd", COMMAND + " --bug load-torn")
    torn = variants(trusting.summary())["truncated-newest"]
    assert trusting.exit_code == 1
    assert torn["message"].startswith("resume failed: it loaded the damaged checkpoint of step 8, step-8.json")


def test_a_command_that_ignores_sigterm_is_killed_after_the_grace_period_and_reported(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_smoke(tmp_path / "run", "--steps", "12", "--signal", "term", "--kill-at-step", "3",
                       "--grace-period", "0.4", "--cmd", COMMAND + " --step-time 0.15 --bug ignore-sigterm")
    sigterm = variants(result.summary())["sigterm"]
    assert result.exit_code == 1 and sigterm["verdict"] == "resume_failed"
    assert sigterm["message"].startswith("the command did not exit within the 0.4 s grace period after SIGTERM")
    assert "SIGKILLed as Kubernetes does" in sigterm["message"] and sigterm["interrupted_exit"] == ["killed by SIGKILL"]
    assert time.monotonic() - started < 10

    finished = run_smoke(tmp_path / "finished", "--steps", "12", "--signal", "term", "--kill-at-step", "9",
                         "--cmd", COMMAND + " --bug ignore-sigterm")
    sigterm = variants(finished.summary())["sigterm"]
    assert finished.exit_code == 1 and "the command went on to step 12 and exited 0: it ignores SIGTERM" in sigterm["message"]


def test_a_command_without_a_sigterm_handler_loses_the_steps_since_its_last_checkpoint(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", "--steps", "12", "--signal", "term", "--kill-at-step", "6",
                       "--cmd", COMMAND + " --bug no-sigterm-handler")
    sigterm = variants(result.summary())["sigterm"]
    assert result.exit_code == 1 and sigterm["interrupted_exit"] == ["killed by SIGTERM"]
    assert "without a checkpoint at the step boundary: the resume started at step 4" in sigterm["message"]
    assert "exit 143" in sigterm["message"]


def test_a_sigterm_handler_that_saves_at_once_passes_between_steps_and_fails_inside_one(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", "--steps", "12", "--signal", "term", "--kill-at-step", "6",
                       "--cmd", COMMAND + " --step-time 0.2 --bug save-in-handler")
    summary = result.summary()
    found = variants(summary)
    assert found["sigterm"]["verdict"] == "verified", found["sigterm"]["message"]
    assert found["sigterm-mid-step"]["verdict"] == "state_differs"
    assert any("ms after the step 6 line, half the uninterrupted run's median step" in note
               for note in found["sigterm-mid-step"]["notes"])
    assert "only the SIGTERM that landed inside a step failed" in summary["message"]


def test_a_silent_command_gets_a_heartbeat_with_its_last_step(tmp_path: Path) -> None:
    script = "import time; print('step=1 loss=0.5', flush=True); time.sleep(1.0); print('step=2 loss=0.25')"
    run = CommandRun("quiet", [sys.executable, "-c", script], tmp_path / "quiet.log")
    beats: list[tuple[int | None, float]] = []
    run_command(run, STEP, LOSS, time.monotonic() + 30, heartbeat=lambda r, quiet: beats.append((r.last_step(), quiet)),
                heartbeat_s=0.25)
    assert run.exit_code == 0 and run.steps == {1: "0.5", 2: "0.25"}
    assert any(step == 1 and quiet >= 0.2 for step, quiet in beats), beats


def test_sigkill_reaches_workers_started_in_sessions_of_their_own(tmp_path: Path) -> None:
    """As torchrun starts its workers: a kill of the main process alone would leave them training."""
    pid_file = tmp_path / "worker.pid"
    worker = ("import os, sys, time\n"
              f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
              "for step in range(1, 1000):\n    print(f'step={step}', flush=True); time.sleep(0.05)\n")
    launcher = ("import subprocess, sys\n"
                f"sys.exit(subprocess.Popen([sys.executable, '-c', {worker!r}], start_new_session=True).wait())\n")
    run = CommandRun("launcher", [sys.executable, "-c", launcher], tmp_path / "launcher.log")
    run_command(run, STEP, LOSS, time.monotonic() + 30, stop_at_step=3, signum=signal.SIGKILL)
    assert run.signalled_at_step == 3 and run.exit_code == -signal.SIGKILL
    worker_pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{worker_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break  # killed, waiting for its new parent to reap it
        time.sleep(0.05)
    else:
        pytest.fail(f"worker {worker_pid} survived the SIGKILL")


def test_a_checkpoint_is_named_by_the_first_number_in_its_path() -> None:
    assert step_of(Path("checkpoint-8/rng_state_1.pth")) == 8
    assert step_of(Path("step-12-rng-rank0.pt")) == 12
    assert step_of(Path("last.pt")) is None


def test_a_step_whose_files_were_not_all_written_is_not_a_checkpoint(tmp_path: Path) -> None:
    """Killed between a checkpoint's RNG file and its model file: step 18 is incomplete, so a resume
    from step 15 is right and no "does not load its newest checkpoint" note may be written."""
    reference = tmp_path / "reference"
    reference.mkdir()
    for name in ("step-15.pt", "step-15-rng-rank0.pt", "step-18.pt", "step-18-rng-rank0.pt", "last.pt"):
        (reference / name).write_bytes(b"x")
    present = [Path("step-15.pt"), Path("step-15-rng-rank0.pt"), Path("step-18-rng-rank0.pt")]
    assert complete_steps(present, reference) == [15]
    assert complete_steps([*present, Path("step-18.pt")], reference) == [15, 18]


def test_a_second_resume_of_a_job_read_by_its_checkpoints_starts_where_the_first_resume_really_did() -> None:
    """A job that prints no step (the stock Trainer) is read through its checkpoints: when the first SIGKILL
    is delivered a save late, the first resume loads checkpoint 24, not the planned 20, and its losses are
    lined up from step 25 (lined up from 21 they differed, a false "state differs" on run_clm.py)."""
    from spikelint.smoke.command.driver import first_resume_step

    assert first_resume_step({}, True, [4, 8, 12, 16, 20, 24], 20) == 24
    assert first_resume_step({}, True, [], 20) == 20
    assert first_resume_step({25: "", 26: ""}, True, [4, 8, 20, 24], 20) == 24
    assert first_resume_step({21: "", 22: ""}, False, [4, 8, 20, 24], 20) == 20  # its own step lines say so
