"""Ops without a deterministic implementation: a setup error naming the op and the fix, or --warn-only.

``max_unpool1d`` has no deterministic implementation on the CPU either, so both paths run here
for real; the GPU check (``bench/smoke_gpu_check.sh``) runs the same job on CUDA.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from smoke_helpers import run_smoke  # noqa: E402
from smoke_helpers import user_job  # noqa: E402

from spikelint.schemas import validation_errors  # noqa: E402
from spikelint.smoke.cli import main  # noqa: E402
from spikelint.smoke.harness.determinism import nondeterministic_op  # noqa: E402
from spikelint.smoke.harness.determinism import nondeterministic_ops_warning  # noqa: E402
from spikelint.smoke.harness.determinism import watch_nondeterministic_ops  # noqa: E402

SHORT = ("--steps", "20")
OP = "max_unpooling2d_forward_out"  # what torch calls max_unpool1d's kernel in its message


def unpool() -> None:
    values = torch.arange(8.0).view(1, 1, 8)
    pooled, where = torch.nn.functional.max_pool1d(values, 2, return_indices=True)
    torch.nn.functional.max_unpool1d(pooled, where, 2)


@pytest.fixture
def deterministic_mode() -> Any:
    """Sets deterministic mode for one test and puts back what this process had."""
    previous = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()

    def enable(warn_only: bool) -> None:
        torch.use_deterministic_algorithms(True, warn_only=warn_only)

    yield enable
    torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])


def test_the_op_is_read_from_torchs_error_and_its_warning(deterministic_mode: Any) -> None:
    deterministic_mode(False)
    with pytest.raises(RuntimeError) as raised:
        unpool()
    assert nondeterministic_op(str(raised.value)) == OP
    deterministic_mode(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        unpool()
    assert [nondeterministic_op(str(item.message)) for item in caught] == [OP]
    assert nondeterministic_op("RuntimeError: CUDA out of memory") is None
    wrapped = f"Caught RuntimeError in DataLoader worker process 0.\nRuntimeError: {raised.value}"
    assert nondeterministic_op(wrapped) == OP


def test_the_watch_reports_each_op_once_and_still_shows_the_warning(deterministic_mode: Any) -> None:
    deterministic_mode(True)
    reported: list[str] = []
    shown: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a job that silences warnings: the watch still sees this one
        warnings.showwarning = lambda message, *rest, **more: shown.append(str(message))
        watch_nondeterministic_ops(reported.append)
        for _ in range(3):
            unpool()
        warnings.warn("an unrelated warning")
    assert reported == [OP]
    assert len(shown) == 1 and OP in shown[0]


def test_the_warning_lists_each_op_and_where_it_ran() -> None:
    assert nondeterministic_ops_warning({}) is None
    text = nondeterministic_ops_warning({OP: "step 1 of the reference run"})
    assert text is not None and f"{OP} (first in step 1 of the reference run)" in text


def test_without_warn_only_the_op_is_a_setup_error_with_the_fix(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", *SHORT, "--format", "json", "--job", user_job("no_deterministic_kernel"))
    assert result.exit_code == 2
    summary = json.loads(result.stdout)
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert summary["verdict"] == "setup_error" and summary["plan"]["warn_only"] is False
    message = summary["message"]
    assert f"the job calls {OP}, which has no deterministic implementation on cpu" in message
    assert "in step 1 of the reference run" in message
    assert "rerun with --warn-only" in message and f"replace {OP} with an op that has" in message
    assert "Traceback" not in result.stderr


def test_with_warn_only_the_op_runs_is_named_and_the_comparison_decides(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", *SHORT, "--signal", "term", "--warn-only",
                       "--job", user_job("no_deterministic_kernel"))
    summary = result.summary()
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert result.exit_code == 0 and summary["verdict"] == "verified", summary["message"]
    assert summary["plan"]["warn_only"] is True
    (warning,) = [text for text in summary["warnings"] if text.startswith("--warn-only")]
    assert f"{OP} (first in step 1 of the reference run)" in warning
    assert f"warning: reference: {OP} has no deterministic implementation" in result.stderr
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    runs = {event["run"] for event in events if event["event"] == "nondeterministic_op"}
    assert runs == {"reference", "sigterm.interrupted", "sigterm.resumed"}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["determinism"]["deterministic_warn_only"] is True


def test_with_warn_only_a_job_that_does_not_repeat_itself_names_the_ops(tmp_path: Path) -> None:
    result = run_smoke(tmp_path / "run", *SHORT, "--signal", "term", "--warn-only",
                       "--job", user_job("varying_without_deterministic_kernel"))
    summary = result.summary()
    assert result.exit_code == 1 and summary["verdict"] == "state_differs"
    assert "already differed from the uninterrupted one at step 1" in summary["message"]
    assert f"The job ran {OP} without a deterministic implementation (--warn-only)" in summary["message"]


def test_warn_only_does_not_apply_to_a_command(tmp_path: Path) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["--cmd", "python train.py {resume}", "--warn-only", "--run-dir", str(tmp_path / "run")],
                stdout=stdout, stderr=stderr, process_exits=False)
    assert code == 2 and "--warn-only applies to --job and the built-in job" in stderr.getvalue()
