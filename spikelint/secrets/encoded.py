"""Tokens hidden by an encoding: base64 (standard and URL-safe), hex and percent-encoding, nested.

A token base64-encoded in a ConfigMap, a Helm value, a ``.env`` or a notebook is as leaked as the token itself.
Each encoded-looking value is decoded (strictly: a value that is not valid in the encoding, or that decodes to
something other than text, is left alone), the decoded text is scanned for the typed token shapes only (their
prefixes and lengths make a random decoding a non-finding) and for further encodings, to ``MAX_DEPTH``. The
finding points at the encoded value and says how it was encoded. Bounded: a value longer than
``MAX_VALUE`` characters is not decoded (images in notebooks), nor is more than ``MAX_DECODED`` per text.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Callable
from typing import Iterator
from typing import NamedTuple
from urllib.parse import unquote

from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import typed_token_secrets

MAX_DEPTH = 3  # base64 of base64 of base64
MAX_VALUE = 64 * 1024  # characters of one encoded value
MAX_DECODED = 1 << 20  # characters decoded per text, all depths together
MAX_VALUES = 5_000  # encoded-looking values tried per text
PRINTABLE = 0.9  # a decoding is text when this share of its characters is printable

# One pass finds the values an encoding of text could be, whatever precedes them (``BLOB=aGZf…`` in a ``.env``):
# hex of text is pairs 20–7e (and tab, newline, return), and base64 of text is groups of four whose first two
# characters carry a printable byte's top bits ([CDI-Za-f], then [A-HQ-Xg-nw-z0-3]). The names and paths that fill
# code rarely are either, so they never reach Python; a token of any alphabet is (base64 of ``ACCA…`` has no digit).
CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_-])(?:(?P<hex>(?:[2-7][0-9A-Fa-f]|0[9aAdD]){16,})"
                       r"|(?P<base64>(?:[CDI-Za-f][A-HQ-Xg-nw-z0-3][A-Za-z0-9+/_-]{2}){4,}[A-Za-z0-9+/_-]{0,3}={0,2}))"
                       r"(?![A-Za-z0-9+/_=-])")
# a percent-encoded value is one word holding three %XX or more: only words with one are matched, and only in a
# text that has one (code full of ``%s`` would otherwise send every word through Python)
WORD = re.compile(r"(?<![^\s\"'<>])[^\s\"'<>]*%[0-9A-Fa-f]{2}[^\s\"'<>]*")
ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


class Encoded(NamedTuple):
    """A typed token found inside an encoded value, and where the encoded value is."""

    secret: Secret  # the decoded token (its value is what the finding hashes and shows four characters of)
    start: int
    end: int
    how: str  # "base64-encoded", "hex-encoded", "percent-encoded", "base64-encoded, inside hex-encoded" …


def encoded_secrets(text: str) -> list[Encoded]:
    budget = [MAX_DECODED, MAX_VALUES]
    return list(_scan(text, 0, budget, ()))


def _scan(text: str, depth: int, budget: list[int], outer: tuple[str, ...]) -> list[Encoded]:
    found: list[Encoded] = []
    for how, start, end, decoded in _decodings(text, budget):
        layers = (how, *outer)
        for secret in typed_token_secrets(decoded):
            found.append(Encoded(secret, start, end, ", inside ".join(layers)))
        if depth + 1 < MAX_DEPTH:
            found.extend(Encoded(item.secret, start, end, item.how) for item in _scan(decoded, depth + 1, budget, layers))
    return found


def _decodings(text: str, budget: list[int]) -> Iterator[tuple[str, int, int, str]]:
    """(how, start, end, decoded text) of each encoded-looking value of ``text``, within the budget."""
    for how, start, end, value, decode in _candidates(text):
        if budget[1] <= 0 or budget[0] <= 0:
            return
        if len(value) > MAX_VALUE:
            continue
        budget[1] -= 1
        decoded = decode(value)
        if decoded is None or decoded == value:
            continue
        budget[0] -= len(decoded)
        yield how, start, end, decoded


def _candidates(text: str) -> Iterator[tuple[str, int, int, str, Callable[[str], str | None]]]:
    for match in CANDIDATE.finditer(text):
        if match.group("hex"):
            yield "hex-encoded", match.start(), match.end(), match.group(), _hex
        else:
            yield "base64-encoded", match.start(), match.end(), match.group(), _base64
    if "%" in text and ESCAPE.search(text):
        for match in WORD.finditer(text):
            yield "percent-encoded", match.start(), match.end(), match.group(), _percent


def _text(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for char in decoded if char.isprintable() or char in "\n\r\t")
    return decoded if decoded and printable >= PRINTABLE * len(decoded) else None


def _base64(value: str) -> str | None:
    body = value.rstrip("=")
    altchars = b"-_" if "-" in body or "_" in body else None
    try:
        return _text(base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True))
    except (binascii.Error, ValueError):
        return None


def _hex(value: str) -> str | None:
    try:
        return _text(bytes.fromhex(value))
    except ValueError:
        return None


def _percent(value: str) -> str | None:
    if len(ESCAPE.findall(value)) < 3:
        return None
    try:
        decoded = unquote(value, errors="strict")
    except UnicodeDecodeError:
        return None
    return decoded if decoded != value else None
