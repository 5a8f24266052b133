"""The run folder stays out of the repository it is written in: Git ignores it, ``check .`` skips it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spikelint.smoke.runfolder import create_run_folder

ROOT = Path(__file__).resolve().parents[2]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
LATEST = "replicaCount: 1\nimage: busybox:latest\n"  # a finding, were the file linted


def _git(cwd: Path, *arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _checked(cwd: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "spikelint", "check", "--show-files", "."], cwd=cwd,
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    return result.stdout


def _fill(folder: Path) -> None:
    """What a run leaves: configs, logs and checkpoints (a YAML config that would be a finding)."""
    (folder / "configs").mkdir()
    (folder / "configs" / "values.yaml").write_text(LATEST, encoding="utf-8")
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "step-00000020.rank0.pt").write_bytes(b"\0" * 1024)


@needs_git
def test_the_default_run_folder_is_ignored_by_git_and_by_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "job.yaml").write_text(LATEST, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    folder = create_run_folder(None, "20260101T000000Z-abc123")
    assert folder.root == tmp_path / "spikelint-smoke" / "20260101T000000Z-abc123"
    assert (folder.root / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    _fill(folder.root)
    assert _git(tmp_path, "status", "--porcelain", "--untracked-files=all").split() == ["??", "job.yaml"]
    shown = _checked(tmp_path)
    assert "job.yaml\t" in shown and "20260101T000000Z-abc123" not in shown  # the folder is not entered
    assert "spikelint-smoke/\tleft out: ignored by Git" in shown  # and --show-files says why, once


def test_outside_git_check_does_not_enter_a_run_folder(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(LATEST, encoding="utf-8")
    folder = create_run_folder(str(tmp_path / "runs" / "first"), "unused")
    _fill(folder.root)
    shown = _checked(tmp_path)
    assert "job.yaml\t" in shown and "runs/first/\tleft out" in shown  # the folder, not entered
    assert "configs/values.yaml" not in shown


def test_a_folder_whose_gitignore_names_patterns_is_still_entered(tmp_path: Path) -> None:
    """Near miss: only ``*`` (everything) makes a folder a tool's own; ``*.log`` keeps its YAML linted."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / ".gitignore").write_text("# logs only\n*.log\n", encoding="utf-8")
    (tmp_path / "deploy" / "values.yaml").write_text(LATEST, encoding="utf-8")
    assert "deploy/values.yaml" in _checked(tmp_path)


def test_ignores_itself_reads_only_the_patterns() -> None:
    from spikelint.files import ignores_itself

    assert not ignores_itself(str(ROOT / "no-such-folder"))
    assert not ignores_itself(str(ROOT / "spikelint"))  # no .gitignore there
