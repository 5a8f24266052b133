"""Helpers the workload adapters share: safe tree access, numbers and durations, command
tokens with positions and annotation suppressions.

Every helper tolerates documents of the wrong shape (a list where a map belongs, a number
where a list belongs, nulls): it returns ``None`` or an empty list instead of raising.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import Suppression

# A restart policy (``OnFailure``/``Always``/``ExitCode``) restarts without a count.
UNBOUNDED_RETRIES = 2**31 - 1

RESTARTING_POLICIES = frozenset(("onfailure", "always", "exitcode"))
DISABLE_ANNOTATION = "spikelint.io/disable"
RULE_ID = lazy_regex(r"\b(?:SPK\d{1,3}|[A-Z][A-Z0-9]{1,9}\d{3})\b")  # SPK101, SPK1, a team's ACME001

_DURATION_PART = lazy_regex(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w)", re.IGNORECASE)
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
                   "d": 86400.0, "w": 604800.0}

# --------------------------------------------------------------------------- tree access


def as_map(node: Node | None) -> Node | None:
    return node if node is not None and node.kind == "map" else None


def as_seq(node: Node | None) -> list[Node]:
    return list(node.value) if node is not None and node.kind == "seq" else []


def child(node: Node | None, *path: str | int) -> Node | None:
    """``node.get(*path)`` that also accepts ``None`` and nodes of the wrong kind."""
    if node is None:
        return None
    return node.get(*path)


def map_entries(node: Node | None) -> list[tuple[Located, Node]]:
    """``(key located, value node)`` for each entry of a map (nothing for other kinds)."""
    if node is None or node.kind != "map":
        return []
    keys = node.keys or {}
    return [(keys.get(key) or Located(key, node.line, node.column), value) for key, value in node.value.items()]


def scalar_text(node: Node | None) -> str | None:
    """A scalar as text (``None`` for nulls, maps and sequences); booleans as ``true``/``false``."""
    if node is None or node.kind != "scalar" or node.value is None:
        return None
    value = node.value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def located_text(node: Node | None) -> Located | None:
    """A non-null scalar as text, where its value was written."""
    text = scalar_text(node)
    if text is None or node is None:
        return None
    return Located(text, node.line, node.column, node.end_line, node.end_column)


def to_number(value: Any) -> float | None:
    """``4``, ``"4"``, ``"0.5"`` -> float; anything else (``"500m"``, booleans, maps) -> ``None``."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip().strip("'\""))
        except ValueError:
            return None
        if number != number or number in (float("inf"), float("-inf")):
            return None
        return number
    return None


def as_int(number: float | None) -> int | float | None:
    if number is None:
        return None
    return int(number) if float(number).is_integer() else number


def located_number(node: Node | None) -> Located | None:
    """A numeric scalar (also a quoted number) located at its value."""
    if node is None or node.kind != "scalar":
        return None
    number = as_int(to_number(node.value))
    if number is None:
        return None
    return Located(number, node.line, node.column, node.end_line, node.end_column)


def truthy(node: Node | None) -> bool | None:
    """YAML/JSON booleans, also written as strings; ``None`` when not a boolean."""
    if node is None or node.kind != "scalar":
        return None
    value = node.value
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "0", "off"):
        return False
    return None


def parse_duration(text: Any) -> float | None:
    """Seconds in ``300``, ``"300"``, ``"5m"``, ``"1h30m"``, ``"72h"``; ``None`` when unreadable."""
    number = to_number(text)
    if number is not None:
        return number
    if not isinstance(text, str):
        return None
    compact = text.strip().replace(" ", "")
    if not compact:
        return None
    total = 0.0
    position = 0
    for match in _DURATION_PART.finditer(compact):
        if match.start() != position:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2).lower()]
        position = match.end()
    return total if position == len(compact) else None


def located_duration(where: Located | None) -> Located | None:
    """The same position with the value in seconds (ints where whole)."""
    if where is None:
        return None
    seconds = parse_duration(where.value)
    if seconds is None:
        return None
    return where._replace(value=as_int(seconds))


def document_range(root: Node) -> tuple[int, int]:
    """First and last line of a document (a block's end mark sits at the next line's start)."""
    last = root.end_line
    if root.end_column <= 1 and last > root.line:
        last -= 1
    return root.line, max(root.line, last)


# --------------------------------------------------------------------------- labels, annotations


def string_map(node: Node | None) -> dict[str, Located]:
    """A ``labels``/``annotations`` map: key -> value located at the value (key position when empty)."""
    found: dict[str, Located] = {}
    for key, value in map_entries(node):
        text = scalar_text(value)
        if text is None:
            found[str(key.value)] = Located("", key.line, key.column, key.end_line, key.end_column)
        else:
            found[str(key.value)] = Located(text, value.line, value.column, value.end_line, value.end_column)
    return found


def key_positions(node: Node | None) -> dict[str, Located]:
    return {str(key.value): key for key, _ in map_entries(node)}


def disable_suppressions(annotations: dict[str, Located], keys: dict[str, Located]) -> list[Suppression]:
    """``spikelint.io/disable: "SPK101,SPK702"`` -> one object-wide suppression at the annotation."""
    where = annotations.get(DISABLE_ANNOTATION)
    if where is None:
        return []
    rules = tuple(RULE_ID.findall(str(where.value)))
    if not rules:
        return []
    at = keys.get(DISABLE_ANNOTATION) or where
    return [Suppression(rules, at.line, (), column=at.column)]


def merge_missing(target: dict[str, Located], extra: dict[str, Located]) -> None:
    """Add the entries of ``extra`` whose key ``target`` lacks (the object's own values win)."""
    for key, value in extra.items():
        target.setdefault(key, value)


def preemptible_priority(name: str | None, words: tuple[str, ...]) -> bool:
    """A priority class whose name contains a configured word (``preemptible``, ``low``, ``spot`` …)."""
    if not name:
        return False
    lowered = name.lower()
    return any(word.lower() in lowered for word in words if word)


# --------------------------------------------------------------------------- storage


@dataclass(frozen=True)
class StorageField:
    """A Run:ai storage entry kind: its volume source, whether it persists, where the mount path is."""

    source: str
    persistent: bool
    path_keys: tuple[str, ...]
    claim_keys: tuple[str, ...] = ()


# --------------------------------------------------------------------------- command strings


@dataclass(frozen=True)
class Span:
    """One shell word of a command string: unquoted text and its raw offsets in the string."""

    text: str
    start: int
    end: int


def split_words(text: str) -> list[Span]:
    """Split a command string the way a POSIX shell splits words (quotes removed, no expansion).

    Unbalanced quotes end the word at the end of the string instead of failing.
    """
    spans: list[Span] = []
    index = 0
    length = len(text)
    while index < length:
        while index < length and text[index] in " \t\r\n":
            index += 1
        if index >= length:
            break
        start = index
        parts: list[str] = []
        while index < length and text[index] not in " \t\r\n":
            char = text[index]
            if char == "'":
                close = text.find("'", index + 1)
                close = length if close < 0 else close
                parts.append(text[index + 1:close])
                index = close + 1
            elif char == '"':
                index += 1
                while index < length and text[index] != '"':
                    if text[index] == "\\" and index + 1 < length and text[index + 1] in '"\\$`':
                        index += 1
                    parts.append(text[index])
                    index += 1
                index += 1
            elif char == "\\" and index + 1 < length:
                if text[index + 1] != "\n":
                    parts.append(text[index + 1])
                index += 2
            else:
                parts.append(char)
                index += 1
        spans.append(Span("".join(parts), start, min(index, length)))
    return spans


class SourceLines:
    """The document's lines, split once, for finding where a token of a string value sits."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def locate_words(self, node: Node, text: str) -> list[Located]:
        """Words of the string ``text`` held by ``node``, each at its position in the file.

        A word is searched in the source from the node's start onwards; when it cannot be
        found (escapes in a quoted scalar), its position is estimated from the string offset.
        """
        words: list[Located] = []
        line, column = node.line, node.column
        quote = 1 if node.quoted else 0
        for span in split_words(text):
            raw = text[span.start:span.end]
            found = self._find(raw, line, column, node.end_line)
            if found is None:
                estimate = Located(span.text, node.line, node.column + quote + span.start,
                                   node.line, node.column + quote + span.end)
                words.append(estimate)
                continue
            found_line, found_column = found
            words.append(Located(span.text, found_line, found_column, found_line, found_column + len(raw)))
            line, column = found_line, found_column + len(raw)
        return words

    def located(self, node: Node | None) -> Located | None:
        """``located_text``, but a block scalar (``|``/``>``) is located at its first content line,
        where its text starts (so an embedded script's positions can be computed from it)."""
        where = located_text(node)
        if where is None or node is None or not node.quoted or not 0 < node.line <= len(self.lines):
            return where
        source = self.lines[node.line - 1]
        if source[node.column - 1:node.column] not in ("|", ">"):
            return where
        for number in range(node.line + 1, min(node.end_line, len(self.lines)) + 1):
            content = self.lines[number - 1]
            if content.strip():
                return where._replace(line=number, column=len(content) - len(content.lstrip()) + 1)
        return where

    def _find(self, raw: str, line: int, column: int, last_line: int) -> tuple[int, int] | None:
        if not raw or "\n" in raw:
            return None
        for number in range(line, min(max(last_line, line), len(self.lines)) + 1):
            source = self.lines[number - 1]
            offset = source.find(raw, column - 1 if number == line else 0)
            if offset >= 0:
                return number, offset + 1
        return None


def words_of(node: Node | None, lines: SourceLines) -> list[Located]:
    """A command field as words: a list of strings (Kubernetes) or one string (Run:ai)."""
    if node is None:
        return []
    if node.kind == "seq":
        return [where for where in (lines.located(item) for item in node.value) if where is not None]
    text = scalar_text(node)
    if text is None:
        return []
    return lines.locate_words(node, text)

