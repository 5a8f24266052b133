"""Showing configuration values in messages without ever showing a secret.

Messages name the offending value so the fix is obvious, but a value can be a token pasted
into the wrong key.  A value that looks like a secret (by its key's name or its own shape)
is shown as its first four characters, ``…`` and the kind of secret.
"""

from __future__ import annotations

from typing import Any

from spikelint.util.lazyre import lazy_regex

MAX_SHOWN = 60
# The detectors, key vocabulary and randomness test are the secret rules' own
# (spikelint.secrets), so precheck hides exactly what ``check`` would report and more:
# any value under a secret-named key, and a private key's header line on its own.
# One word of 24+ token characters (no dots or slashes: file names and paths are not tokens)
HIGH_ENTROPY_CANDIDATE = lazy_regex(r"^[A-Za-z0-9+=_\-]{24,}$")
UUID = lazy_regex(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def secret_kind(value: str, key: str | None = None) -> str | None:
    """What kind of secret ``value`` looks like (``None`` when it looks like an ordinary value)."""
    from spikelint.secrets.context import classify_key
    from spikelint.secrets.context import looks_random
    from spikelint.secrets.detectors import PRIVATE_KEY
    from spikelint.secrets.detectors import find_secrets

    found = find_secrets(value, key or "")
    if found:
        return ("an " if found[0].type[:1] in "AEIOU" else "a ") + found[0].type
    if PRIVATE_KEY.search(value):
        return "a private key"
    if key is not None and classify_key(key).secret and value.strip():
        return "a value of a secret-named key"
    if HIGH_ENTROPY_CANDIDATE.match(value) and not UUID.match(value) and looks_random(value, 24):
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
