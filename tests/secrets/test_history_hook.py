"""The shipped ``spikelint-history`` hook as a real pre-push hook: a push whose commits added a
token (even one deleted again before the push) is refused; commits already on the remote are
not scanned again, so a later clean push goes through."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import Fakes

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
ROOT = Path(__file__).resolve().parents[2]
FAKE = Fakes(6060)


def git(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org", "PRE_COMMIT_HOME": str(root / ".cache"),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *arguments], cwd=root, capture_output=True, text=True,
                          env=environment, timeout=300, check=False)


def _hook_config() -> str:
    import yaml

    hook = next(hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
                if hook["id"] == "spikelint-history")
    entry = hook["entry"].replace("spikelint", f"{sys.executable} -m spikelint", 1)
    return ("repos:\n  - repo: local\n    hooks:\n      - id: spikelint-history\n        name: history\n"
            f"        entry: {entry}\n        language: system\n        stages: {hook['stages']}\n"
            f"        pass_filenames: {str(hook['pass_filenames']).lower()}\n"
            f"        always_run: {str(hook['always_run']).lower()}\n")


def test_a_push_that_added_a_token_is_refused_even_after_deleting_it(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    assert git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote)).returncode == 0
    assert git(tmp_path, "clone", "-q", str(remote), str(work)).returncode == 0
    git(work, "checkout", "-q", "-b", "main")
    (work / ".pre-commit-config.yaml").write_text(_hook_config(), encoding="utf-8")
    (work / ".gitignore").write_text(".cache/\n", encoding="utf-8")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "hooks")
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"], cwd=work,
                               capture_output=True, text=True, timeout=300, check=False,
                               env={**os.environ, "PRE_COMMIT_HOME": str(work / ".cache")})
    assert installed.returncode == 0, installed.stderr
    assert git(work, "push", "-q", "origin", "main").returncode == 0  # nothing leaked yet

    token = FAKE.hf()
    (work / ".env").write_text(f"HF_TOKEN={token}\n", encoding="utf-8")
    git(work, "add", ".env")
    git(work, "commit", "-q", "-m", "oops")
    (work / ".env").unlink()
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "remove it again")
    refused = git(work, "push", "-q", "origin", "main")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "SPK201" in output and ".env:1" in output and token not in output

    git(work, "reset", "-q", "--hard", "HEAD~2")  # rewrite the unpushed history without the token
    (work / "notes.md").write_text("clean\n", encoding="utf-8")
    git(work, "add", "notes.md")
    git(work, "commit", "-q", "-m", "clean")
    accepted = git(work, "push", "-q", "origin", "main")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
