"""A file Git tracks is checked even when ``.gitignore`` matches it (``git add -f .env``):
in a plain check, inside an ignored folder, and in the base tree of ``--diff``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from fakes import Fakes

from spikelint.cli import main

FAKE = Fakes(22)
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.email=ci@example.org", "-c", "user.name=CI", "-c", "commit.gpgsign=false",
                    *arguments], cwd=root, check=True, capture_output=True)


def _repository(root: Path, files: dict[str, str], ignore: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(ignore, encoding="utf-8")
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body, encoding="utf-8")
    _git(root, "add", ".gitignore")
    _git(root, "add", "-f", *files)
    _git(root, "commit", "-q", "-m", "force-added")
    return root


def _findings(arguments: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> list[tuple[str, int, str]]:
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    main([*arguments, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return sorted((finding["path"], finding["line"], finding["rule"]) for finding in report["findings"])


def test_a_force_added_ignored_env_file_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = _repository(tmp_path / "repo", {".env": f"HF_TOKEN={FAKE.hf()}\n",
                                           "conf/prod/.env.local": f"GITHUB_TOKEN={FAKE.github()}\n"},
                       ignore=".env\n.env.*\nconf/\n")
    (root / "conf" / "prod" / "untracked.env").write_text(f"HF_TOKEN={FAKE.hf()}\n", encoding="utf-8")
    assert _findings(["check", "."], root, monkeypatch, capsys) == [
        (".env", 1, "SPK201"), ("conf/prod/.env.local", 1, "SPK201")]  # the untracked, ignored one stays out


def test_from_a_subfolder_a_tracked_ignored_file_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = _repository(tmp_path / "repo", {"deploy/.env": f"WANDB_API_KEY={FAKE.wandb()}\n"}, ignore="*.env\n.env\n")
    assert _findings(["check", "."], root / "deploy", monkeypatch, capsys) == [(".env", 1, "SPK201")]


def test_the_diff_base_checks_tracked_ignored_files_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The token was already in the base: ``--diff`` must not call it new (the base saw the file too)."""
    root = _repository(tmp_path / "repo", {".env": f"HF_TOKEN={FAKE.hf()}\n"}, ignore=".env\n")
    (root / "notes.txt").write_text("nothing\n", encoding="utf-8")
    _git(root, "add", "notes.txt")
    _git(root, "commit", "-q", "-m", "unrelated")
    assert _findings(["check", "."], root, monkeypatch, capsys) == [(".env", 1, "SPK201")]
    assert _findings(["check", "--diff", "HEAD~1", "."], root, monkeypatch, capsys) == []
