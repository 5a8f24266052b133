"""Where a folder cannot be made: the part of its path that is a file."""

from __future__ import annotations

from pathlib import Path


def file_in_the_way(folder: Path) -> Path | None:
    """The first of ``folder`` and its parents that exists and is not a folder: ``mkdir`` would say only
    "File exists" (or "Not a directory") of it."""
    for candidate in (folder, *folder.parents):
        if candidate.exists() or candidate.is_symlink():
            return None if candidate.is_dir() else candidate
    return None
