"""The run folder: identity, manifest, timestamped events, per-process logs, summary.

Every smoke run gets a new folder (an existing one is refused), so results from two runs
can never mix; JSON files are written atomically.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import traceback
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from typing import NamedTuple
from typing import TextIO

from spikelint.util.folders import file_in_the_way

DEFAULT_PARENT = "spikelint-smoke"
# as pytest and ruff mark their caches: Git ignores the folder (checkpoints are megabytes), and so
# does ``spikelint check .`` (Git's listing inside a repository, the walk outside one)
GITIGNORE = "# written by spikelint smoke: a run folder is not committed\n*\n"


class RunFolder(NamedTuple):
    root: Path

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def final_states(self) -> Path:
        return self.root / "state"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def page(self) -> Path:
        """``report.html``: the losses drawn, the variants and the differences (``smoke/report/page.py``)."""
        return self.root / "report.html"

    def log_for(self, label: str, rank: int) -> Path:
        return self.logs / f"{label}.rank{rank}.log"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def create_run_folder(requested: str | None, run_id: str) -> RunFolder:
    """Create the folder (``FileExistsError`` if it exists) with its ``logs/`` and ``state/``, and a
    ``.gitignore`` that keeps it out of Git and out of ``spikelint check``."""
    root = (Path(requested) if requested else Path(DEFAULT_PARENT) / run_id).absolute()
    blocking = file_in_the_way(root.parent)
    if blocking is not None:
        raise NotADirectoryError(f"{blocking} is a file, not a folder")
    root.parent.mkdir(parents=True, exist_ok=True)
    root.mkdir()
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    folder = RunFolder(root)
    folder.logs.mkdir()
    folder.final_states.mkdir()
    return folder


def write_json_atomically(path: Path, data: Any) -> None:
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def git_revision(folder: Path) -> dict[str, Any] | None:
    """The current repository's commit and whether the work tree has uncommitted changes."""
    try:
        revision = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10
        )
        if revision.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"revision": revision.stdout.strip(), "dirty": bool(status.stdout.strip())}


class Journal:
    """``events.jsonl`` plus the progress lines on stderr and in the parent's log."""

    def __init__(self, events_path: Path | None, log_path: Path | None, stderr: TextIO, started: float) -> None:
        self._events = open(events_path, "a", encoding="utf-8") if events_path else None
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None
        self._stderr = stderr
        self._started = started

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def event(self, name: str, **details: Any) -> None:
        if self._events is None:
            return
        record = {"time": utc_now(), "elapsed_s": round(self.elapsed(), 4), "event": name, **details}
        try:
            self._events.write(json.dumps(record, default=str) + "\n")
            self._events.flush()
        except OSError as error:  # a full disk: say so once on stderr, keep running to a clean verdict
            self._events = None
            self.progress(f"warning: events.jsonl can no longer be written: {error.strerror or error}")

    def progress(self, message: str) -> None:
        line = f"spikelint smoke [{self.elapsed():6.2f}s] {message}"
        print(line, file=self._stderr, flush=True)
        if self._log is not None:
            try:
                self._log.write(line + "\n")
                self._log.flush()
            except OSError:
                self._log = None

    def log_traceback(self) -> None:
        if self._log is not None:
            traceback.print_exc(file=self._log)
            self._log.flush()

    def close(self) -> None:
        for handle in (self._events, self._log):
            if handle is not None:
                try:
                    handle.close()
                except OSError:
                    pass


def python_version() -> str:
    return sys.version.split()[0]
