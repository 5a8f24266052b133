"""``spikelint smoke --cmd``: the team's own command, every run a new process, real signals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from smoke_helpers import run_smoke

from spikelint.schemas import validation_errors
from spikelint.smoke.command.process import CommandError
from spikelint.smoke.command.process import expand

EXAMPLE = f"{sys.executable} -m spikelint.smoke.example_train --max-steps {{steps}} --save-every {{every}} --ckpt-dir {{ckpt}} {{resume}}"


def test_placeholders_expand_per_word_and_an_empty_resume_disappears() -> None:
    values = {"steps": "20", "every": "4", "ckpt": "/tmp/a b", "seed": "0", "resume": ""}
    assert expand("python t.py --n {steps} --dir={ckpt} {resume}", values) == ["python", "t.py", "--n", "20", "--dir=/tmp/a b"]
    assert expand("t {resume}", {**values, "resume": "--resume-from latest"}) == ["t", "--resume-from", "latest"]
    with pytest.raises(CommandError, match=r"unknown placeholder\(s\) \{step\}"):
        expand("t {step}", values)


def test_the_resume_text_may_name_the_folder_and_the_newest_step() -> None:
    values = {"steps": "20", "every": "4", "ckpt": "/runs/a", "seed": "0", "step": "8",
              "resume": "--resume_from_checkpoint {ckpt}/checkpoint-{step}"}
    assert expand("python run.py --output_dir {ckpt} {resume}", values) == [
        "python", "run.py", "--output_dir", "/runs/a", "--resume_from_checkpoint", "/runs/a/checkpoint-8"]
    # inside a word: nanoGPT's --init_from=resume
    assert expand("python train.py {resume}", {**values, "resume": "--init_from=resume"})[-1] == "--init_from=resume"


def test_a_resume_text_that_starts_with_dashes_is_a_value() -> None:
    from spikelint.smoke.cli import build_parser
    from spikelint.smoke.cli import text_values_joined

    words = ["--cmd", "python train.py {resume}", "--resume-arg", "--init_from=resume", "--steps", "12"]
    args = build_parser().parse_args(text_values_joined(words))
    assert args.resume_arg == "--init_from=resume" and args.steps == 12


def torchrun() -> str:
    """torchrun itself, next to this interpreter (its module where the script is not installed)."""
    script = Path(sys.executable).with_name("torchrun")
    return str(script) if script.is_file() else f"{sys.executable} -m torch.distributed.run"


LAUNCHERS = {
    "python": f"{sys.executable} -m",
    "torchrun": f"{torchrun()} --standalone --nproc_per_node 2 -m",
}


@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_a_real_train_py_resume_is_verified_and_a_broken_one_caught(tmp_path: Path, launcher: str) -> None:
    """The tiny real script as one process and as two torchrun workers (gloo): SIGTERM goes to the
    main process, which under torchrun forwards it to the workers; every rank loads on resume."""
    command = EXAMPLE.replace(f"{sys.executable} -m", LAUNCHERS[launcher])
    good = run_smoke(tmp_path / "good", "--steps", "12", "--kill-at-step", "7", "--signal", "term", "--cmd", command)
    summary = good.summary()
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert good.exit_code == 0 and summary["verdict"] == "verified", summary["message"]
    variant = summary["variants"][0]  # and sigterm-mid-step where the steps are long enough to aim into
    # The signal lands when the step line is read: at step 7, or the step after on a busy machine.
    assert variant["resumed_from_step"] in (7, 8) and variant["leaves_compared"] > 20
    assert "last.pt" in variant["notes"][0] and variant["losses"]["equal"]
    if launcher == "torchrun":
        assert "last-rng-rank1.pt" in variant["notes"][0]  # every rank's own RNG state compared

    broken = run_smoke(tmp_path / "broken", "--steps", "12", "--checkpoint-every", "2", "--kill-at-step", "5",
                       "--signal", "term", "--cmd", command + " --forget-optimizer")
    failed = broken.summary()
    assert validation_errors("smoke-summary.v1.schema.json", failed) == []
    assert broken.exit_code == 1 and failed["verdict"] == "state_differs"
    message = failed["variants"][0]["message"]
    assert "first differing key step-" in message and ".pt:model." in message
    assert "no optimizer state in any checkpoint file" in message


def test_a_command_that_never_prints_progress_is_a_setup_error(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", "--steps", "12", "--signal", "term",
                       "--cmd", f"{sys.executable} -c pass {{ckpt}}")
    assert result.exit_code == 2 and "no line matching --progress-regex" in result.summary()["message"]


def test_the_report_says_how_a_signalled_process_really_ended() -> None:
    from spikelint.smoke.report.summary import base_summary
    from spikelint.smoke.report.summary import render_text

    summary = base_summary("verified", "ok")
    summary["variants"] = [{"name": "sigterm", "verdict": "verified", "message": "m", "interrupted_exit": ["exit 0"],
                            "sigterm": {"signal_to_exit_s": 0.4, "checkpoint_write_s": None}}]
    text = render_text(summary)
    assert "after SIGTERM: exit 0, 400.00 ms later" in text and "exit 143" not in text


def test_a_headline_with_variants_that_failed_to_resume_and_variants_that_differ_counts_both() -> None:
    """A job without a SIGTERM handler fails its SIGTERM variants (resume failed) while its SIGKILL ones
    resumed and differ: "a run could not be resumed" alone read as if nothing had resumed."""
    from spikelint.smoke.report.summary import base_summary
    from spikelint.smoke.report.summary import render_text

    summary = base_summary("resume_failed", "m")
    summary["variants"] = [{"name": name, "verdict": verdict, "message": "m"} for name, verdict in (
        ("kill-between-checkpoints", "state_differs"), ("truncated-newest", "state_differs"),
        ("sigterm", "resume_failed"), ("successive-resume", "state_differs"))]
    first = render_text(summary).splitlines()[0]
    assert first == ("spikelint smoke: RESUME FAILED in 1 of 4 variants, and in 3 more a resumed run does not "
                     "reproduce the uninterrupted run")
    summary["variants"] = summary["variants"][2:3]  # only a failed resume: the plain sentence
    assert render_text(summary).splitlines()[0] == "spikelint smoke: RESUME FAILED: a run could not be resumed from its checkpoints"
