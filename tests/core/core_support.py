"""Helpers for the core tests: write small repositories, run the CLI in-process or as a
subprocess, and make real Git work trees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterator

import pytest

from spikelint.cli import main

REPOSITORY = Path(__file__).resolve().parents[2]

# A Helm values file whose image tag is mutable: one SPK101 (error) on line 2, found by a
# document check, so it does not depend on the workload adapters.
VALUES_LATEST = "replicaCount: 1\nimage: busybox:latest\n"
# The same with a tag that is not a full version: one SPK102 (warning) on line 2.
VALUES_FLOATING = "replicaCount: 1\nimage: busybox:1.2\n"
VALUES_PINNED = "replicaCount: 1\nimage: busybox:1.36.1@sha256:" + "a" * 64 + "\n"


@dataclass
class Outcome:
    """What one CLI run returned and printed."""

    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.out)

    def pairs(self) -> set[tuple[str, int, str]]:
        """(path, line, rule) of every finding of a ``--format json`` run."""
        return {(f["path"], f["line"], f["rule"]) for f in self.json()["findings"]}


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> text or bytes) under ``root``."""
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8", newline="")
    return root


def git(root: Path, *arguments: str) -> str:
    result = subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True, check=True)
    return result.stdout


def init_repo(root: Path) -> Path:
    """A Git work tree with an identity, so commits work anywhere."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@example.org")
    git(root, "config", "user.name", "CI")
    git(root, "config", "commit.gpgsign", "false")
    return root


def commit_all(root: Path, message: str = "change") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


RunCli = Callable[..., Outcome]


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[RunCli]:
    """``run_cli(args, cwd=..., stdin=...)`` runs ``spikelint`` in this process (fast)."""

    def run(arguments: list[str], cwd: Path, stdin: bytes | None = None) -> Outcome:
        monkeypatch.chdir(cwd)
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
        if stdin is not None:
            import io

            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        capsys.readouterr()
        code = main(arguments)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    yield run


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = str(REPOSITORY) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def run_process(arguments: list[str], cwd: Path, stdin: bytes | None = None, **env: str) -> Outcome:
    """``python -m spikelint ARGS`` as a real process (exit codes, start-up, streams)."""
    result = subprocess.run([sys.executable, "-m", "spikelint", *arguments], cwd=cwd, input=stdin,
                            capture_output=True, env=subprocess_env(**env), timeout=120, check=False)
    return Outcome(result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"))
