"""The repository a run is judged in, when the given paths are in another one than the current folder.

``spikelint check ../other-repo`` (or ``/tmp/clone``, from inside some other repository or from no
repository at all) is judged as ``cd ../other-repo && spikelint check .`` judges it: that
repository's configuration, its root for fingerprints (so its baseline matches), its Git for
``--diff`` and its files for the references a workload makes — never those around the current folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from spikelint.files import git_root


def foreign_root(paths: list[str], cwd: Path) -> Path | None:
    """The Git root of the given paths, when they all lie in one repository the current folder is not in;
    ``None`` when the current folder's own repository (or folder) holds them, or they are in no repository."""
    if not paths:
        return None
    if all(inside(cwd / raw, cwd) for raw in paths) and _marked_work_tree(cwd):
        return None  # the common case (a hook, ``check .``): no Git process to start
    here = git_root(cwd)
    if here is not None and all(inside(cwd / raw, here) for raw in paths):
        return None
    first = cwd / paths[0]
    theirs = git_root(first if first.is_dir() else first.parent)
    if theirs is None or inside(cwd, theirs) or not all(inside(cwd / raw, theirs) for raw in paths):
        return None
    return theirs


def _marked_work_tree(folder: Path) -> bool:
    """Whether ``folder`` or a folder above it holds ``.git`` (a repository's or a worktree's)."""
    return any(os.path.exists(os.path.join(candidate, ".git")) for candidate in (folder, *folder.parents))


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or below it (links resolved)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
