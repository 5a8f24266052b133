"""What ``--diff REV`` reports: findings that are new compared with Git revision REV.

The base revision's tree is exported (``git archive``) into a temporary folder and linted
with the same configuration and paths; a finding whose fingerprint is not among the base's
is new.  Comparing findings rather than changed lines also catches a change that only
deletes a protective line (``set -o pipefail``, a PVC volume): the finding it causes sits
on an unchanged line, but it was not there before.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from spikelint.engine import check_paths

if TYPE_CHECKING:
    from spikelint.config import Config
    from spikelint.model import Report

MAX_ARCHIVE = 2 * 1024 * 1024 * 1024  # a base tree larger than this is not exported

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


def _export(revision: str, top: Path, into: Path) -> None:
    """The tree of ``revision`` as files under ``into`` (links and special files kept inside)."""
    result = subprocess.run(["git", "archive", "--format=tar", "--end-of-options", revision], cwd=top,
                            capture_output=True, timeout=600, check=False)
    if result.returncode != 0:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ValueError(lines[-1] if lines else f"git archive exited with status {result.returncode}")
    archive = result.stdout
    if len(archive) > MAX_ARCHIVE:
        raise ValueError(f"the tree of {revision} is larger than {MAX_ARCHIVE} bytes")
    with tarfile.open(fileobj=io.BytesIO(archive)) as bundle:
        if hasattr(tarfile, "data_filter"):
            bundle.extractall(into, filter="data")  # no absolute paths, no links leaving the folder
            return
        for member in bundle.getmembers():  # an older Python: plain files and folders with plain names only
            parts = Path(member.name).parts
            if (member.isfile() or member.isdir()) and not Path(member.name).is_absolute() and ".." not in parts:
                bundle.extract(member, into)


def _track(revision: str, top: Path, base: Path) -> None:
    """Give the exported tree ``revision``'s index, so files tracked there but matched by
    ``.gitignore`` (a force-added ``.env``) are checked in the base as they are here.

    The objects are borrowed (``objects/info/alternates``), not copied; only the index is written.
    """
    objects = Path(_git(["rev-parse", "--path-format=absolute", "--git-common-dir"], top).strip()) / "objects"
    (base / ".git" / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (base / ".git" / "objects" / "info" / "alternates").write_text(str(objects) + "\n", encoding="utf-8")
    commit = _git(["rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}"], top).strip()
    _git(["read-tree", commit], base)


def _inside(path: Path, top: Path, base: Path) -> Path | None:
    """``path`` (in the work tree) as the same place in the exported base tree."""
    try:
        return base / Path(os.path.abspath(path)).relative_to(top)
    except ValueError:
        return None


def base_fingerprints(revision: str, cwd: Path, paths: list[str], config: Config, jobs: int | None) -> set[str]:
    """Fingerprints of the findings ``spikelint check PATHS`` reports on ``revision``'s tree."""
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _verify_revision(revision, cwd)
    with tempfile.TemporaryDirectory(prefix="spikelint-base-") as folder:
        base = Path(folder) / "tree"
        base.mkdir()
        _export(revision, top, base)
        _git(["init", "-q"], base)  # a work tree of its own: paths keyed on its root, .gitignore honoured, as here
        _track(revision, top, base)
        base_cwd = _inside(cwd, top, base)
        if base_cwd is None or not base_cwd.is_dir():
            return set()  # the folder is new: every finding in it is new
        root = _inside(Path(config.root), top, base) if config.path is not None else None
        settings = replace(config, root=str(root)) if root is not None else config
        wanted = []
        for path in paths:  # the same paths, written the same way, so findings get the same paths
            mapped = _inside(cwd / path, top, base)
            if mapped is not None and os.path.lexists(mapped):
                wanted.append(str(mapped) if os.path.isabs(path) else os.path.relpath(mapped, base_cwd))
        if not wanted:
            return set()
        result = check_paths(wanted, settings, cwd=base_cwd, jobs=jobs)
    return {finding.fingerprint for finding in result.report.findings}


def new_findings(report: Report, fingerprints: set[str]) -> Report:
    """The findings of ``report`` that the base revision did not have."""
    return replace(report, findings=[finding for finding in report.findings if finding.fingerprint not in fingerprints])
