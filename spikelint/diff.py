"""Lines added or changed since a Git revision (the merge-request gate of ``--diff``)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _git(arguments: list[str], cwd: Path) -> str:
    result = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise ValueError(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "git failed")
    return result.stdout


def changed_lines(revision: str, cwd: Path) -> dict[str, set[int] | None]:
    """Path (relative to ``cwd``) -> changed line numbers; ``None`` for untracked (wholly new) files."""
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], cwd)
    diff = _git(["-c", "core.quotepath=off", "diff", "--no-color", "--no-ext-diff", "-U0", "--relative=",
                 revision, "--"], top)
    changed: dict[str, set[int] | None] = {}
    current: set[int] | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            if name == "/dev/null":
                current = None
                continue
            name = name[2:] if name.startswith("b/") else name
            current = set()
            changed[_relative(top / name, cwd)] = current
        elif line.startswith("@@") and current is not None:
            match = HUNK.match(line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or "1")
                current.update(range(start, start + count))
    for name in _git(["-c", "core.quotepath=off", "ls-files", "--others", "--exclude-standard"], top).splitlines():
        changed[_relative(top / name, cwd)] = None
    return changed


def _relative(path: Path, cwd: Path) -> str:
    return Path(os.path.relpath(path, cwd)).as_posix()
