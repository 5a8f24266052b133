"""The name and suffix of a POSIX path string, as :class:`~pathlib.PurePosixPath` gives them,
without building a path object (checks ask for them per file and per command word)."""

from __future__ import annotations

from pathlib import PurePosixPath


def base_name(path: str) -> str:
    """``PurePosixPath(path).name``: ``a/b.yaml`` -> ``b.yaml``; ``.`` and ``""`` -> ``""``."""
    name = path.rstrip("/").rpartition("/")[2] if "/" in path else path
    return PurePosixPath(path).name if name == "." else name  # ``a/.``: pathlib drops the dot


def name_suffix(name: str) -> str:
    """``PurePosixPath(name).suffix`` of a base name: ``.bashrc`` and ``a.`` have none."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""
