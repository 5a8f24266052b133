"""A ``--cmd`` that cannot work is refused before anything runs (exit 2, the option and the fix named,
never a traceback), and stopping smoke — Ctrl-C, or SIGTERM when a CI job is cancelled — stops the
command it runs too. Each case is one a new user met."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spikelint.smoke.cli import main

JOB = Path(__file__).with_name("cmd_job.py")
COMMAND = f"{sys.executable} {JOB} --max-steps {{steps}} --save-every {{every}} --ckpt-dir {{ckpt}} {{resume}}"


def refused(tmp_path: Path, *options: str) -> str:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["--device", "cpu", "--run-dir", str(tmp_path / "run"), *options], stdout=stdout, stderr=stderr,
                process_exits=False)
    assert code == 2, stderr.getvalue()
    assert "Traceback" not in stderr.getvalue() and not (tmp_path / "run").exists()
    return stderr.getvalue()


@pytest.mark.parametrize(("options", "said"), [
    (["--cmd", COMMAND.replace("{ckpt}", "'{ckpt}")], "--cmd is not valid shell quoting (no closing quotation)"),
    (["--cmd", COMMAND, "--resume-arg", "--resume '{ckpt}"], "--resume-arg is not valid shell quoting"),
    (["--cmd", COMMAND, "--progress-regex", r"step=\d+"], r"--progress-regex 'step=\\d+' has no group"),
    (["--cmd", COMMAND, "--loss-regex", r"loss=\S+"], "--loss-regex 'loss=\\\\S+' has no group"),
    (["--cmd", COMMAND.replace("{ckpt} {resume}", "{ckpt {resume}")], "has an unclosed placeholder at '{ckpt {resume"),
    (["--cmd", COMMAND.replace("{steps}", "{step}")], "{step} belongs in --resume-arg"),
    (["--cmd", COMMAND, "--resume-arg", "--resume {stepz}"], "--resume-arg uses unknown placeholder(s) {stepz}"),
    (["--cmd", COMMAND.replace("--ckpt-dir {ckpt}", "--ckpt-dir /tmp/elsewhere")], "--cmd has no {ckpt}"),
    (["--steps", "100000000000"], "--steps must be at most 1,000,000"),
])
def test_a_command_that_cannot_work_is_refused_before_anything_runs(tmp_path: Path, options: list[str],
                                                                    said: str) -> None:
    assert said in refused(tmp_path, *options)


def test_a_folder_whose_path_holds_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["--device", "cpu", "--run-dir", str(tmp_path / "afile" / "run"), "--cmd", COMMAND],
                stdout=stdout, stderr=stderr, process_exits=False)
    assert code == 2 and f"{tmp_path / 'afile'} is a file, not a folder" in stderr.getvalue()


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGINT, 130, "spikelint: interrupted"),
                                                      (signal.SIGTERM, 143, "spikelint: terminated (SIGTERM)")])
def test_stopping_smoke_stops_the_command_it_runs(tmp_path: Path, signum: int, code: int, said: str) -> None:
    """The resumed command loads slowly and silently; smoke is stopped meanwhile. The command used to live
    on (its parent gone) until it next printed into the closed pipe."""
    run = tmp_path / "run"
    command = f"{COMMAND} --resume-wait 3"
    smoke = subprocess.Popen([sys.executable, "-m", "spikelint", "smoke", "--device", "cpu", "--signal", "kill",
                              "--steps", "12", "--run-dir", str(run), "--cmd", command],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert smoke.stderr is not None
    seen = []
    for line in smoke.stderr:  # the first resumed run has started: it is in its silent wait now
        seen.append(line)
        if ".resumed:" in line:
            break
    time.sleep(0.5)
    smoke.send_signal(signum)
    rest = smoke.stderr.read()
    assert smoke.wait(timeout=30) == code, "".join(seen) + rest
    assert said in rest and f"what ran so far is in {run}" in rest
    time.sleep(4)  # past the wait: a command still alive would write alive.txt now
    assert list(run.rglob("alive.txt")) == []
    assert str(JOB) not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


PRINTS_STEPS = f"{sys.executable} -c \"print(chr(10).join('step=%d loss=1.0' % s for s in range(1, 13)))\""


@pytest.mark.parametrize(("options", "said"), [
    (["--timeout", "3", "--cmd", f"{sys.executable} -c \"import time; print('starting', flush=True); "
                                 "time.sleep(60)\" {ckpt} {resume}"],
     "the uninterrupted command did not finish before --timeout (3 s) and was killed"),
    (["--cmd", PRINTS_STEPS + " {ckpt} {resume}"], "the uninterrupted command wrote nothing into {ckpt}"),
])
def test_a_reference_run_that_cannot_be_one_is_a_setup_error_saying_why(tmp_path: Path, options: list[str],
                                                                        said: str) -> None:
    """It was blamed on SIGKILL, told to check --resume, or ended in a traceback (a group that is no number)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["--device", "cpu", "--run-dir", str(tmp_path / "run"), "--steps", "12", *options],
                stdout=stdout, stderr=stderr, process_exits=False)
    assert code == 2 and said in stdout.getvalue() + stderr.getvalue(), stderr.getvalue()
    assert "Traceback" not in stderr.getvalue()


def test_a_progress_group_that_is_no_number_reads_no_step_instead_of_crashing() -> None:
    import re

    from spikelint.smoke.command.steplines import read_line

    assert read_line("step=7 loss=0.5", re.compile(r"(step)=\d+"), re.compile(r"loss=(\S+)")) is None
    assert read_line("step=7 loss=0.5", re.compile(r"step=(\d+)"), re.compile(r"loss=(\S+)?")).loss == "0.5"
