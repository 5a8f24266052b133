"""Showing configuration values in messages without ever showing a secret.

Messages name the offending value so the fix is obvious, but a value can be a token pasted
into the wrong key.  A value that looks like a secret (by its key's name or its own shape)
is shown as its first four characters, ``…`` and the kind of secret.
"""

from __future__ import annotations

import math
import re
from typing import Any

from spikelint.util.lazyre import lazy_regex

MAX_SHOWN = 60
SECRET_KEY = lazy_regex(
    r"(?i)(pass(word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"credential|auth|(^|[_-])key$|cookie|session)")
SECRET_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (lazy_regex(r"^hf_[A-Za-z0-9]{20,}"), "a Hugging Face token"),
    (lazy_regex(r"^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|^github_pat_"), "a GitHub token"),
    (lazy_regex(r"^glpat-"), "a GitLab token"),
    (lazy_regex(r"^(AKIA|ASIA)[A-Z0-9]{16}"), "an AWS access key id"),
    (lazy_regex(r"^sk-[A-Za-z0-9_-]{16,}"), "an API secret key"),
    (lazy_regex(r"^xox[abprs]-"), "a Slack token"),
    (lazy_regex(r"^AIza[0-9A-Za-z_-]{30,}"), "a Google API key"),
    (lazy_regex(r"-----BEGIN [A-Z ]*PRIVATE KEY"), "a private key"),
    (lazy_regex(r"^eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\."), "a JSON Web Token"),
    (lazy_regex(r"://[^/\s:@]+:[^/\s@]+@"), "a URL with a password"),
)
HIGH_ENTROPY_CANDIDATE = lazy_regex(r"^[A-Za-z0-9+/=_\-]{24,}$")
MIN_ENTROPY_BITS = 4.0


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def secret_kind(value: str, key: str | None = None) -> str | None:
    """What kind of secret ``value`` looks like (``None`` when it looks like an ordinary value)."""
    for pattern, kind in SECRET_SHAPES:
        if pattern.search(value):
            return kind
    if key is not None and SECRET_KEY.search(key) and value.strip():
        return "a value of a secret-named key"
    if HIGH_ENTROPY_CANDIDATE.match(value) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value) \
            and _entropy(value) >= MIN_ENTROPY_BITS:
        return "a high-entropy string"
    return None


def hidden(value: str, kind: str) -> str:
    return f"'{value[:4]}…' ({kind}; not shown)"


def shown(value: Any, key: str | None = None) -> str:
    """A value as a message shows it: quoted, typed, shortened, secrets hidden."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int):
        return f"{value} (an integer)"
    if isinstance(value, float):
        return f"{value!r} (a number)"
    if isinstance(value, str):
        kind = secret_kind(value, key)
        if kind is not None:
            return hidden(value, kind)
        text = value if len(value) <= MAX_SHOWN else value[: MAX_SHOWN - 1] + "…"
        return f"{text!r} (a string)"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def redact_parameters(values: Any, key: str | None = None) -> Any:
    """A copy of ``values`` with secret-looking strings replaced (for manifests)."""
    if isinstance(values, dict):
        return {name: redact_parameters(item, str(name)) for name, item in values.items()}
    if isinstance(values, list):
        return [redact_parameters(item, key) for item in values]
    if isinstance(values, str):
        kind = secret_kind(values, key)
        return f"[redacted: {kind}]" if kind is not None else values
    return values
