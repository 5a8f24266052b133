"""The team's lock file for ``--pins``: ``reference: pin`` lines, written with its own registry
and hub tools (spikelint never contacts a registry or hub).

Example::

    # image references (as written in the files) -> the digest they resolve to today
    nvcr.io/nvidia/pytorch:24.01-py3: sha256:3f0c…(64 hex digits)
    python:3.11-slim: sha256:9e1f…
    # model / dataset hub ids -> the commit to pin (40 hex digits)
    meta-llama/Llama-3.1-8B: 0e9e39f249a16976918f6564b8830bc894c89659

A reference never holds ": " (a space after a colon), so each line splits at its first one.  The
kind of pin follows from its form: ``sha256:`` and 64 hex digits is an image digest, 40 hex
digits a hub revision; the image fixes read the first kind, a hub-revision fix the second.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
REVISION = re.compile(r"^[0-9a-f]{40}$")


class PinsError(Exception):
    """The lock file is unreadable or a line is malformed; the message names file and line."""


class Pins(NamedTuple):
    images: dict[str, str]  # image reference as written -> sha256:…
    revisions: dict[str, str]  # hub id -> 40-hex commit


def parse_pins(text: str, name: str = "<pins>") -> Pins:
    images: dict[str, str] = {}
    revisions: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        reference, separator, pin = line.partition(": ")
        reference, pin = reference.strip(), pin.split(" #", 1)[0].strip()
        if not separator or not reference or not pin:
            raise PinsError(f"{name}:{number}: expected 'reference: pin' (e.g. 'python:3.11-slim: sha256:…'), "
                            f"got {raw.strip()[:80]!r}")
        if DIGEST.match(pin):
            table = images
        elif REVISION.match(pin):
            table = revisions
        else:
            raise PinsError(f"{name}:{number}: the pin of {reference!r} is neither an image digest "
                            f"(sha256: and 64 hex digits) nor a hub revision (40 hex digits)")
        if table.get(reference, pin) != pin:
            raise PinsError(f"{name}:{number}: {reference!r} is pinned twice, to different values")
        table[reference] = pin
    return Pins(images, revisions)


def read_pins(path: Path) -> Pins:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PinsError(f"cannot read pins file {path}: {getattr(error, 'strerror', None) or error}") from None
    return parse_pins(text, str(path))


NO_PINS = Pins({}, {})
