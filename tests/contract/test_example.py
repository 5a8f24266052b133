"""The worked example of examples/run-contract/ does what its README shows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spikelint.run import precheck
from spikelint.run import verify

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "run-contract"


def test_the_committed_run_folder_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    assert verify.main([str(EXAMPLE / "runs" / "r1")]) == 0
    assert "0 errors" in capsys.readouterr().err


def test_the_launch_sequence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "example"
    shutil.copytree(EXAMPLE, folder)
    monkeypatch.chdir(folder)
    assert precheck.main(["--config", "configs/run-broken.yaml", "--run-dir", "runs/r2"]) == 1
    assert capsys.readouterr().err.count("configs/run-broken.yaml:") == 4
    assert precheck.main(["--config", "configs/run.yaml", "--run-dir", "runs/r1"]) == 1
    assert precheck.main(["--config", "configs/run.yaml", "--run-dir", "runs/r2", "--init", "--seed", "17"]) == 0
    assert json.loads(capsys.readouterr().out)["batch_size"] == 2
    subprocess.run([sys.executable, "infer.py", "--run-dir", "runs/r2"], check=True)
    assert verify.main(["runs/r2"]) == 0
    summary = json.loads((folder / "runs" / "r2" / "summary.json").read_text(encoding="utf-8"))
    assert (summary["received"], summary["succeeded"], summary["rejected"]) == (5, 4, 1)
    with (folder / "runs" / "r2" / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "q-001", "output": "AGAIN"}\n')
    assert verify.main(["runs/r2"]) == 1
    assert precheck.main(["--config", "configs/run.yaml", "--run-dir", "runs/r2", "--resume"]) == 0


def test_the_example_lints_clean() -> None:
    from spikelint.config import Config
    from spikelint.engine import check_paths

    result = check_paths([str(EXAMPLE)], Config(), cwd=EXAMPLE, jobs=1)
    assert result.report.findings == []
