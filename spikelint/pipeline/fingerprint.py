"""Stable finding fingerprints: what baselines, GitLab and SARIF use to recognise a finding.

A fingerprint is a hash of the rule id, the path, the normalised offending content and an
occurrence index — never the line number — so it survives unrelated edits that move lines,
and two identical findings in one file still get different fingerprints.  Secret checks pass
a hash of the secret as the content, so no secret reaches a baseline; a secret's fingerprint
hashes the general secret rule's id whichever SPK2 rule reports it (an env literal, a command
line, a notebook output, ``history``), so one baseline serves ``check`` and ``history``.

A finding also carries *aliases*: the fingerprints a baseline written by an earlier release
holds for it (its own rule id, its former key), and for a repeated secret the first
occurrence's — ``history`` reports a secret once per path.  Baselines match on either.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from pathlib import Path
from typing import Iterable

from spikelint.files import git_root
from spikelint.secrets.redact import SECRET_KEY_PREFIX

FINGERPRINT_LENGTH = 32
SECRET_IDENTITY = "SPK201"  # the general secret rule: what SPK201 and history fingerprints always hashed


def normalise_key(key: str) -> str:
    """Whitespace-collapsed content, so re-indenting or re-wrapping does not churn baselines."""
    return " ".join(key.split())


def is_secret(rule: str, key: str) -> bool:
    """An SPK2 finding keyed on a secret's hash: one secret, whichever rule reports it."""
    return rule.startswith("SPK2") and key.startswith(SECRET_KEY_PREFIX)


def identity_rule(rule: str, key: str) -> str:
    """The rule id a fingerprint hashes: the rule's own, or for a secret :data:`SECRET_IDENTITY`."""
    return SECRET_IDENTITY if is_secret(rule, key) else rule


def _digest(rule: str, path: str, key: str, occurrence: int) -> str:
    material = "\0".join((rule, path, normalise_key(key), str(occurrence)))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_LENGTH]


def fingerprint(rule: str, path: str, key: str, occurrence: int = 0) -> str:
    """The first 32 hex digits of SHA-256 over rule (:func:`identity_rule`), path, normalised key and occurrence."""
    return _digest(identity_rule(rule, key), path, key, occurrence)


def next_fingerprint(occurrences: dict[tuple[str, str, str], int], rule: str, path: str, key: str,
                     legacy_key: str = "") -> tuple[str, tuple[str, ...]]:
    """The fingerprint of the next finding of one file in document order, and its aliases.

    ``occurrences`` counts what came before in the file: the n-th repetition of an identical
    (rule identity, path, normalised key) gets occurrence index n.  Aliases (only for secrets
    and problems whose key changed, ``legacy_key``) are the fingerprint an earlier release gave
    (own rule id, former key, occurrence counted among that rule's findings) and, for a repeated
    secret, the first occurrence's.
    """
    secret = is_secret(rule, key)
    own = identity_rule(rule, key)
    occurrence = _count(occurrences, (own, path, normalise_key(key)))
    current = _digest(own, path, key, occurrence)
    if not secret and not legacy_key:
        return current, ()
    former = legacy_key or key
    aliases = [_digest(rule, path, former, _count(occurrences, ("earlier " + rule, path, normalise_key(former))))]
    if secret and occurrence:
        aliases.append(_digest(own, path, key, 0))
    return current, tuple(alias for alias in dict.fromkeys(aliases) if alias != current)


def secret_aliases(rules: Iterable[str], path: str, key: str) -> tuple[str, ...]:
    """What baselines written before one-fingerprint-per-secret hold for the first occurrence of a
    secret at ``path`` reported by any of ``rules`` (``history`` accepts an older ``check`` baseline)."""
    current = fingerprint(SECRET_IDENTITY, path, key)
    return tuple(alias for alias in (_digest(rule, path, key, 0) for rule in rules) if alias != current)


def _count(occurrences: dict[tuple[str, str, str], int], identity: tuple[str, str, str]) -> int:
    index = occurrences.get(identity, 0)
    occurrences[identity] = index + 1
    return index


def assign_fingerprints(items: Iterable[tuple[str, str, str]]) -> list[str]:
    """Fingerprints for ``(rule, path, key)`` triples given in document order.

    The n-th repetition of an identical triple (after key normalisation; for secrets, whichever
    SPK2 rule) gets occurrence index n, so repeated findings stay unique within a file while the
    first one keeps the fingerprint it would have on its own.
    """
    occurrences: dict[tuple[str, str, str], int] = {}
    return [next_fingerprint(occurrences, rule, path, key)[0] for rule, path, key in items]


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
