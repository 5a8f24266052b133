"""Stable finding fingerprints: what baselines, GitLab and SARIF use to recognise a finding.

A fingerprint is a hash of the rule id, the path, the normalised offending content and an
occurrence index — never the line number — so it survives unrelated edits that move lines,
and two identical findings in one file still get different fingerprints.  Secret checks pass
a hash of the secret as the content, so no secret reaches a baseline.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from pathlib import Path
from typing import Iterable

from spikelint.files import git_root

FINGERPRINT_LENGTH = 32


def normalise_key(key: str) -> str:
    """Whitespace-collapsed content, so re-indenting or re-wrapping does not churn baselines."""
    return " ".join(key.split())


def fingerprint(rule: str, path: str, key: str, occurrence: int = 0) -> str:
    """The first 32 hex digits of SHA-256 over rule, path, normalised key and occurrence."""
    material = "\0".join((rule, path, normalise_key(key), str(occurrence)))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_LENGTH]


def assign_fingerprints(items: Iterable[tuple[str, str, str]]) -> list[str]:
    """Fingerprints for ``(rule, path, key)`` triples given in document order.

    The n-th repetition of an identical triple (after key normalisation) gets occurrence
    index n, so repeated findings stay unique within a file while the first one keeps the
    fingerprint it would have on its own.
    """
    seen: dict[tuple[str, str, str], int] = {}
    result: list[str] = []
    for rule, path, key in items:
        identity = (rule, path, normalise_key(key))
        occurrence = seen.get(identity, 0)
        seen[identity] = occurrence + 1
        result.append(fingerprint(rule, path, key, occurrence))
    return result


def identity_root(cwd: Path, config_root: Path | None = None) -> Path:
    """The folder finding paths are keyed on: the Git root, else the configuration's folder, else ``cwd``."""
    root = git_root(cwd)
    if root is not None:
        return root
    return config_root if config_root is not None else cwd


def root_prefix(cwd: Path, root: Path) -> str:
    """``cwd`` relative to ``root`` as a ``/``-ended prefix (``"deploy/"``), ``""`` at or outside the root."""
    try:
        relative = os.path.relpath(os.path.realpath(cwd), os.path.realpath(root))
    except ValueError:  # another drive
        return ""
    relative = Path(relative).as_posix()
    if relative == "." or relative.startswith(".."):
        return ""
    return relative.rstrip("/") + "/"


def identity_path(path: str, prefix: str) -> str:
    """A finding's path as the repository root sees it, so baselines match from any sub-folder."""
    if not prefix:
        return path
    normal = posixpath.normpath(prefix + path)
    return path if normal.startswith("../") or normal == ".." else normal
