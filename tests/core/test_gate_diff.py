"""``--diff REV`` failures say git's reason and how CI gets the base; the README's fetch makes it work."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import commit_all
from core_support import init_repo
from core_support import write

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _shallow_pull_request(tmp_path: Path) -> Path:
    """What actions/checkout makes: a depth-1 clone of the branch, without the base branch."""
    origin = init_repo(tmp_path / "origin")
    write(origin, {"deploy/values.yaml": VALUES_FLOATING})
    commit_all(origin, "base")
    subprocess.run(["git", "checkout", "-q", "-b", "feature"], cwd=origin, check=True)
    write(origin, {"deploy/new/values.yaml": VALUES_LATEST})
    commit_all(origin, "feature")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(clone)],
                   check=True, capture_output=True)
    return clone


@needs_git
def test_a_missing_base_in_a_shallow_clone_says_why_and_how_to_fetch(run_cli, tmp_path: Path) -> None:
    clone = _shallow_pull_request(tmp_path)
    outcome = run_cli(["check", "--diff", "origin/main", "."], cwd=clone)
    assert outcome.code == 2
    assert "origin/main" in outcome.err and "shallow clone" in outcome.err and "fatal:" in outcome.err
    assert "fetch-depth: 0" in outcome.err and "git fetch" in outcome.err


@needs_git
def test_the_readme_fetch_makes_the_diff_gate_work(run_cli, tmp_path: Path) -> None:
    clone = _shallow_pull_request(tmp_path)
    fetched = subprocess.run(["git", "fetch", "--no-tags", "--depth=1", "origin", "main:refs/remotes/origin/main"],
                             cwd=clone, capture_output=True, text=True)
    assert fetched.returncode == 0, fetched.stderr
    outcome = run_cli(["check", "--diff", "origin/main", "--format", "json", "."], cwd=clone)
    assert outcome.code == 1
    assert {finding["path"] for finding in outcome.json()["findings"]} == {"deploy/new/values.yaml"}


def test_outside_git_the_reason_is_gits(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--diff", "HEAD", "."], cwd=tmp_path)
    assert outcome.code == 2 and "not a git repository" in outcome.err and "Traceback" not in outcome.err
