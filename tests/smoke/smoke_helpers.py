"""Shared helpers for the smoke tests: run ``spikelint smoke`` in this process and read its folder."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any
from typing import NamedTuple

from spikelint.smoke.cli import main

USER_JOBS = Path(__file__).with_name("user_jobs.py")


class SmokeResult(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str
    run_dir: Path

    def summary(self) -> dict[str, Any]:
        return json.loads((self.run_dir / "summary.json").read_text(encoding="utf-8"))

    def events(self) -> list[dict[str, Any]]:
        lines = (self.run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


def user_job(factory: str) -> str:
    return f"{USER_JOBS}:{factory}"


def run_smoke(run_dir: Path, *options: str, exec_check: bool = False) -> SmokeResult:
    """The smoke test in-process (children are forked from here), output captured.

    The fresh-interpreter resume of the fork default costs seconds of ``import torch``; tests
    that are about something else leave it out (``--no-exec-check``), the ones about it ask for it.
    """
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["--device", "cpu", "--run-dir", str(run_dir), *options]
    if not exec_check and "--restart" not in options:
        argv.append("--no-exec-check")
    code = main(argv, stdout=stdout, stderr=stderr, process_exits=False)
    return SmokeResult(code, stdout.getvalue(), stderr.getvalue(), run_dir)
