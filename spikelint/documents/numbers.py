"""Numbers no consumer can hold: ``.inf``, ``NaN``, ``1e400``, a 400-digit integer.

Kubernetes, Run:ai and the training programs read numbers as 64-bit integers or finite
floats; such a value is rejected by them and, read as a Python number, makes arithmetic on
it fail (``int(float('inf'))``).  The readers keep the value as the text it was written as,
with :data:`BAD_NUMBER` as its tag, so a check reports it at the value and every other rule
still runs on the file.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from spikelint.model import Node

BAD_NUMBER = "tag:spikelint,2026:unrepresentable-number"
INT64 = 2**63  # the widest integer a Kubernetes field holds (checked in API objects only)
LIMIT = 10**100  # far beyond any real setting, far below where float conversion overflows (~1e308)
FLOAT_LIMIT = 1e100


def number_problem(value: Any) -> str | None:
    """Why ``value`` (a parsed number) cannot be used, or ``None`` for an ordinary number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return "is not a finite number"
        return "is out of range (no setting needs a number this large)" if abs(value) >= FLOAT_LIMIT else None
    if abs(value) >= LIMIT:
        return "is out of range"
    return None


def is_bad_number(node: Node) -> bool:
    return node.kind == "scalar" and node.tag == BAD_NUMBER


def beyond_int64(node: Node) -> bool:
    """An integer no Kubernetes field can hold (the API server rejects the object)."""
    value = node.value
    return node.kind == "scalar" and isinstance(value, int) and not isinstance(value, bool) and abs(value) >= INT64


def describe(node: Node) -> str:
    """``'.inf' is not a finite number`` for a node tagged :data:`BAD_NUMBER`."""
    text = str(node.value)
    shown = text if len(text) <= 24 else f"{text[:12]}…{text[-4:]} ({len(text)} characters)"
    digits = text.lstrip("+-").replace("_", "")
    if digits.isdigit() or digits.lower().startswith("0x"):
        return f"{shown!r} is out of range"
    return f"{shown!r} is not a finite number" if _non_finite(text) else f"{shown!r} is out of range"


def _non_finite(text: str) -> bool:
    try:
        return not math.isfinite(float(text.replace("_", "").lstrip(".").replace("Infinity", "inf")))
    except ValueError:
        return True
