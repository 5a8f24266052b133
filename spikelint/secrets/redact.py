"""Show a secret without revealing it: the first few characters, ``…`` and its type."""

from __future__ import annotations

import hashlib

SHOWN = 4
SECRET_KEY_PREFIX = "sha256:"  # what a secret finding's key starts with (fingerprints know a secret by it)


def redact(value: str, type_: str) -> str:
    """``hf_a… (Hugging Face token)``; shorter secrets show fewer characters (never more than a quarter)."""
    shown = min(SHOWN, len(value) // 4)
    return f"{value[:shown]}… ({type_})"


def secret_key(value: str) -> str:
    """What fingerprints hash for a secret finding: a SHA-256 of the secret, never the secret."""
    return SECRET_KEY_PREFIX + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
