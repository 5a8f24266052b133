"""Lines added or changed since a Git revision (the merge-request gate of ``--diff``)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


FETCH_HINT = ("fetch the base before the check (git fetch --no-tags --depth=1 origin BRANCH), or check out the "
              "full history (GitHub Actions: actions/checkout with fetch-depth: 0; GitLab CI: GIT_DEPTH: 0)")


def _git(arguments: list[str], cwd: Path) -> str:
    """Git's output; on failure a ValueError carrying git's own reason (its stderr), not just 'git failed'."""
    result = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.strip().splitlines() if line.strip()]
        reason = " ".join(lines[-3:]) if lines else f"git {arguments[0]} exited with status {result.returncode}"
        if "not a git repository" in reason:
            reason += " (--diff needs a Git work tree)"
        raise ValueError(reason)
    return result.stdout


def _verify_revision(revision: str, cwd: Path) -> None:
    """``revision`` names a commit here; else say why, and how CI gets it (shallow clones lack the base)."""
    try:
        _git(["rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}"], cwd)
    except ValueError as error:
        shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=cwd, capture_output=True,
                                 text=True, timeout=30, check=False).stdout.strip() == "true"
        where = "this shallow clone" if shallow else "this repository"
        raise ValueError(f"git cannot find revision {revision!r} in {where} ({error}); {FETCH_HINT}") from None


def changed_lines(revision: str, cwd: Path) -> dict[str, set[int] | None]:
    """Path (relative to ``cwd``) -> changed line numbers; ``None`` for untracked (wholly new) files."""
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _verify_revision(revision, cwd)
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
