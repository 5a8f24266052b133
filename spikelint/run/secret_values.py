"""The secrets a run's files and options hold, so precheck and verify-run never echo them.

``precheck`` quotes configuration values in its messages and records ``--model`` and
``--image`` in the manifest; ``verify-run`` shows source lines under its findings.  The
same detectors ``check`` runs find the secrets in those texts, and :func:`masker` hides
every occurrence in whatever is printed or written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterable

from spikelint.pipeline.masking import masker

MAX_SCANNED = 8 * 1024 * 1024  # a config larger than this is refused by the reader anyway


def values_in_text(text: str) -> list[str]:
    """Every secret value the text detectors report in ``text``."""
    from spikelint.secrets.text import find_in_text

    try:
        return [secret.value for secret in find_in_text(text)]
    except Exception:  # noqa: BLE001 - masking is a safety net; it must not stop the command
        return []


def values_in_file(path: Path) -> list[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SCANNED)
    except OSError:
        return []
    return values_in_text(data.decode("utf-8", "replace"))


def values_in_options(options: Iterable[str | None]) -> list[str]:
    """Option values that are secrets by shape (a token passed as ``--model``)."""
    from spikelint.secrets.shown_values import secret_kind

    found: list[str] = []
    for value in options:
        if not value:
            continue
        found.extend(values_in_text(value))
        if secret_kind(value) is not None and secret_kind(value) != "a high-entropy string":
            found.append(value)
    return found


def masked_data(data: Any, hide: Callable[[str], str]) -> Any:
    """A copy of a JSON-like value with every string masked."""
    if isinstance(data, dict):
        return {key: masked_data(value, hide) for key, value in data.items()}
    if isinstance(data, list):
        return [masked_data(value, hide) for value in data]
    if isinstance(data, str):
        return hide(data)
    return data


__all__ = ["masked_data", "masker", "values_in_file", "values_in_options", "values_in_text"]
