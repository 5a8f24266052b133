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


class SeveralRepositories(ValueError):
    """Given paths in two repositories: one run has one configuration, one root and one Git to compare with."""


def foreign_root(paths: list[str], cwd: Path) -> Path | None:
    """The Git root of the given paths, when they all lie in one repository the current folder is not in;
    ``None`` when the current folder's own repository (or folder) holds them, or they are in no repository.
    Raises :class:`SeveralRepositories` when they lie in two repositories."""
    if not paths:
        return None
    if all(inside(cwd / raw, cwd) for raw in paths) and _marked_work_tree(cwd):
        return None  # the common case (a hook, ``check .``): no Git process to start
    here = git_root(cwd)
    roots: dict[str, list[str]] = {}  # repository root -> the given paths in it
    outside_any = False
    for raw in paths:
        path = cwd / raw
        if here is not None and inside(path, here):
            roots.setdefault(os.path.realpath(here), []).append(raw)
            continue
        theirs = git_root(path if path.is_dir() else path.parent)
        if theirs is None:
            outside_any = True
        else:
            roots.setdefault(os.path.realpath(theirs), []).append(raw)
    if len(roots) > 1:
        named = "; ".join(f"{', '.join(given[:2])}{f' and {len(given) - 2} more' if len(given) > 2 else ''} in {root}"
                          for root, given in sorted(roots.items()))
        raise SeveralRepositories(f"the given paths are in {len(roots)} Git repositories ({named}): each is judged "
                                  "by its own configuration and baseline, so check one repository at a time")
    if not roots or outside_any:
        return None
    root = Path(next(iter(roots)))
    return None if inside(cwd, root) else root


def _marked_work_tree(folder: Path) -> bool:
    """Whether ``folder`` or a folder above it holds ``.git`` (a repository's or a worktree's)."""
    return any(os.path.exists(os.path.join(candidate, ".git")) for candidate in (folder, *folder.parents))


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or below it (links resolved)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
