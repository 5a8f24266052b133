"""The proof of a fix and what `fix` exits with: a fix whose edit would change what the file means
(its normalised workloads) apart from the property it sets is refused, and a refusal by the proof
exits 1 with the file:line, the rule and the reason — 2 is for usage errors only."""

from __future__ import annotations

from pathlib import Path

import pytest

from fix_support import findings
from fix_support import run
from fix_support import write

from spikelint.config import Config
from spikelint.fix.meaning import meaning_change
from spikelint.fix.meaning import workloads_of

SBATCH = """\
#!/bin/bash
#SBATCH --gres=gpu:8
#SBATCH --time=4:00:00
#SBATCH --output=/shared/%j.out

srun torchrun train.py --output_dir /shared/ckpt 2>&1 | tee /shared/train.log
"""
BELOW = SBATCH.replace("%j.out\n", "%j.out\nset -o pipefail\n")
ABOVE = SBATCH.replace("#!/bin/bash\n", "#!/bin/bash\nset -o pipefail\n")
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sweep
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example.net/ml/trainer:3.2.1
          command: {command}
          env:
            - name: WANDB_PROJECT
              value: "vision"
            - name: HUB_TOKEN
              value: "placeholder-from-ci"
          resources:
            limits:
              nvidia.com/gpu: {gpus}
"""
SCRIPT = '["bash", "-c", "python train.py | tee /ckpt/log"]'


def _change(kind: str, before: str, after: str, *rules: str, path: str = "job.yaml") -> str:
    config = Config()
    return meaning_change(workloads_of(path, kind, before, config), workloads_of(path, kind, after, config), rules)


def _job(command: str = SCRIPT, gpus: int = 1) -> str:
    return JOB.format(command=command, gpus=gpus)


# --------------------------------------------------------------------------- the comparison


def test_slurm_directives_below_the_inserted_line_are_a_change_of_meaning() -> None:
    """sbatch stops reading #SBATCH at the first command: a line above them drops the GPU request,
    the time limit and the log path, though every other line is kept byte for byte."""
    assert _change("shell", SBATCH, BELOW, "SPK501", path="job.sbatch") == ""
    reason = _change("shell", SBATCH, ABOVE, "SPK501", path="job.sbatch")
    assert reason.startswith("the edit would change what the file means — the sbatch workload: ")
    assert "GPUs 8 -> none" in reason and "time limit 14400 -> none" in reason and "log paths" in reason


def test_pipefail_and_unbuffered_python_are_the_only_command_changes_allowed() -> None:
    fixed = _job('["bash", "-c", "set -o pipefail; python -u train.py | tee /ckpt/log"]')
    assert _change("yaml", _job(), fixed, "SPK501", "SPK502") == ""
    assert "container trainer command" in _change("yaml", _job(), fixed, "SPK501")  # -u is not SPK501's
    assert "command" in _change("yaml", _job(), _job(SCRIPT.replace("train.py", "eval.py")), "SPK501")


def test_python_u_glued_into_an_exec_word_is_a_change() -> None:
    """`["python -u", …]` runs a program called `python -u`: not what the word list `python`, `-u` means."""
    before = _job('["python", "train.py"]')
    assert _change("yaml", before, _job('["python", "-u", "train.py"]'), "SPK502") == ""
    assert "command" in _change("yaml", before, _job('["python -u", "train.py"]'), "SPK502")


def test_resources_are_compared_and_shown() -> None:
    assert "GPUs 1 -> 2" in _change("yaml", _job(), _job(gpus=2), "SPK501")


def test_ttl_may_change_only_under_the_ttl_fix() -> None:
    fixed = _job().replace("spec:\n  template:", "spec:\n  ttlSecondsAfterFinished: 86400\n  template:")
    assert _change("yaml", _job(), fixed, "SPK702") == ""
    assert "TTL none -> 86400" in _change("yaml", _job(), fixed, "SPK501")


def test_a_secret_reference_replaces_only_its_own_literal_and_no_value_is_shown() -> None:
    reference = ('valueFrom:\n                secretKeyRef:\n                  name: replace-me-secret\n'
                 '                  key: HUB_TOKEN')
    fixed = _job().replace('value: "placeholder-from-ci"', reference)
    assert _change("yaml", _job(), fixed, "SPK202") == ""
    other = fixed.replace('value: "vision"', 'value: "audio"')
    reason = _change("yaml", _job(), other, "SPK202")
    assert "container trainer env" in reason and "audio" not in reason and "vision" not in reason


def test_a_pinned_digest_is_the_only_image_change_allowed() -> None:
    digest = "@sha256:" + "e1" * 32
    pinned = _job().replace("trainer:3.2.1", "trainer:3.2.1" + digest)
    assert _change("yaml", _job(), pinned, "SPK102") == ""
    assert "image" in _change("yaml", _job(), pinned.replace("3.2.1", "3.2.2"), "SPK102")
    assert "image" in _change("yaml", _job(), pinned, "SPK501")


def test_files_without_workloads_compare_equal() -> None:
    assert _change("dockerfile", "FROM x\n", "FROM y\n", "SPK501", path="Dockerfile") == ""


# --------------------------------------------------------------------------- fix: refusals and exit codes


def _misplaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixer that puts `set -o pipefail` above the directives, as the first versions did."""
    monkeypatch.setattr("spikelint.fix.shell.insertion_line", lambda lines: 1)


REASON = ("not fixable job.sbatch:6: SPK501: not fixed, file left as it was: the edit would change what the file "
          "means — the sbatch workload: ")


@pytest.mark.parametrize("options", [(), ("--fail-on", "never"), ("--dry-run",)])
def test_a_fix_refused_by_its_proof_exits_1_and_says_where_and_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        options: tuple[str, ...]) -> None:
    write(tmp_path, {"job.sbatch": SBATCH})
    _misplaced(monkeypatch)
    ran = run(tmp_path, capsys, "fix", *options)
    assert ran.code == 1, ran.err
    assert REASON in ran.err and "GPUs 8 -> none" in ran.err and "(fix this one by hand)" in ran.err
    assert "1 not fixable (said above)" in ran.err and "---" not in ran.out
    assert ("exit 1: a fix was refused by its proof" in ran.err) == ("--dry-run" in options)
    assert (tmp_path / "job.sbatch").read_text(encoding="utf-8") == SBATCH


def test_check_fix_with_a_refused_fix_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"job.sbatch": SBATCH})
    _misplaced(monkeypatch)
    ran = run(tmp_path, capsys, "check", "--fix", "--fail-on", "never")
    assert ran.code == 1 and REASON in ran.err
    assert (tmp_path / "job.sbatch").read_text(encoding="utf-8") == SBATCH


def test_the_same_fix_below_the_directives_is_applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"job.sbatch": SBATCH})
    ran = run(tmp_path, capsys, "fix", "--fail-on", "never")
    assert ran.code == 0, ran.err
    assert "not fixable" not in ran.err and "fixed 1 finding in 1 file;" in ran.err
    assert (tmp_path / "job.sbatch").read_text(encoding="utf-8") == BELOW
    assert not [item for item in findings(tmp_path, capsys) if item["rule"] == "SPK501"]


def test_a_fixer_refusal_follows_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a proof refusal: the fixer cannot fix it (sh has no pipefail); the finding stays and the
    exit code is the remaining findings' against --fail-on, as for `check`."""
    write(tmp_path, {"run.sh": "#!/bin/sh\nset -e\ntorchrun train.py | tee /ckpt/log\n"})
    assert run(tmp_path, capsys, "fix", "--fail-on", "never").code == 0
    ran = run(tmp_path, capsys, "fix")
    assert ran.code == 1 and "not fixable run.sh:3: SPK501" in ran.err


@pytest.mark.parametrize("argv", [("fix", "--no-such-option"), ("fix", "missing.sh"),
                                  ("fix", "--dry-run", "--fail-on", "sometimes")])
def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    write(tmp_path, {"job.sbatch": SBATCH})
    ran = run(tmp_path, capsys, *argv)
    assert ran.code == 2 and "Traceback" not in ran.err
    assert (tmp_path / "job.sbatch").read_text(encoding="utf-8") == SBATCH
