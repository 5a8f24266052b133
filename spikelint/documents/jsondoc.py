"""JSON -> a positioned :class:`Node` tree.

The standard library's decoder does not keep positions, so this is a small iterative
parser on top of its C string scanner (``json.decoder.scanstring``).  Iterative, so deeply
nested input cannot exhaust the recursion limit; strict JSON (RFC 8259) plus the
``NaN``/``Infinity`` literals Python writes.  ``comments=True`` reads JSON with comments
(``//``, ``/* */``) and trailing commas, the dialect of VS Code and dev-container files.
"""

from __future__ import annotations

import bisect
import json.decoder
import re
from typing import Any

from spikelint.documents.numbers import BAD_NUMBER
from spikelint.documents.numbers import number_problem
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node

MAX_DEPTH = 1_000
_WHITESPACE = lazy_regex(r"[ \t\n\r]*")
_WHITESPACE_AND_COMMENTS = lazy_regex(r"(?:[ \t\n\r]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_BLANKS = frozenset(" \t\n\r")
_NUMBER = lazy_regex(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None, "NaN": float("nan"),
             "Infinity": float("inf"), "-Infinity": float("-inf")}
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # public in CPython, missing from the stubs


class JsonError(ValueError):
    """Malformed JSON; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class _Positions:
    """Offset -> (line, column), by binary search over line starts."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [match.end() for match in re.finditer(r"\n", text)]

    def __call__(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


def parse_json(text: str, comments: bool = False) -> Node:
    """The positioned tree of ``text``; JSON with comments and trailing commas when ``comments``."""
    return _parse(text, comments, stream=False)[0]


def parse_json_values(text: str) -> list[Node]:
    """Every top-level value of a concatenated JSON stream (JSON Lines, ``jq -c`` output) in one pass."""
    return _parse(text, False, stream=True)


def _parse(text: str, comments: bool, stream: bool) -> list[Node]:
    position = _Positions(text)
    blank = _WHITESPACE_AND_COMMENTS if comments else _WHITESPACE
    starts_blank = _BLANKS | {"/"} if comments else _BLANKS  # '/' opens a comment (or is an error anyway)

    def fail(message: str, offset: int) -> JsonError:
        line, column = position(min(offset, max(len(text) - 1, 0)))
        return JsonError(f"invalid JSON: {message}", line, column)

    def node_at(kind: str, value: Any, start: int, end: int, quoted: bool = False) -> Node:
        line, column = position(start)  # a token never spans lines (JSON strings hold no raw newline)
        return Node(kind, value, line, column, line, column + end - start, keys={} if kind == "map" else None,
                    quoted=quoted)

    # stack entries: [container node, pending key (Located | None), state]; states:
    # "key?" (after '{'), "key" (after ',' in a map), "value?" (after '['), "value", "after"
    stack: list[list[Any]] = []
    root: Node | None = None
    roots: list[Node] = []
    index = 1 if text.startswith("\ufeff") else 0
    length = len(text)

    def add(value_node: Node) -> None:
        nonlocal root
        if not stack:
            root = value_node
            return
        frame = stack[-1]
        container = frame[0]
        if container.kind == "seq":
            container.value.append(value_node)
        else:
            key = frame[1]
            container.value[key.value] = value_node
            container.keys[key.value] = key
            frame[1] = None
        frame[2] = "after"

    while True:
        if index < length and text[index] in starts_blank:
            index = blank.match(text, index).end()  # type: ignore[union-attr]
        if root is not None and not stack:
            roots.append(root)
            if index != length:
                if stream:
                    root = None
                    continue
                raise fail("extra data after the top-level value", index)
            return roots
        if index >= length:
            raise fail("unexpected end of file", length)
        char = text[index]
        frame = stack[-1] if stack else None
        state = frame[2] if frame is not None else "value"
        if state == "after":
            assert frame is not None
            closing = "}" if frame[0].kind == "map" else "]"
            if char == ",":
                frame[2] = "key" if closing == "}" else "value"
                index += 1
                continue
            if char != closing:
                raise fail(f"expected ',' or {closing!r}", index)
        if char in "]}" and comments and frame is not None and state in ("key", "value"):
            state = "after"  # a trailing comma
        if char in "]}":
            if frame is None or state not in ("after", "key?", "value?"):
                raise fail(f"unexpected {char!r}" + (" (trailing comma?)" if state in ("key", "value") else ""), index)
            if (char == "]") != (frame[0].kind == "seq"):
                raise fail(f"unexpected {char!r}", index)
            stack.pop()
            container = frame[0]
            container.end_line, container.end_column = position(index + 1)
            index += 1
            add(container)
            continue
        if state in ("key", "key?"):
            assert frame is not None
            if char != '"':
                raise fail("expected a quoted property name", index)
            try:
                key, end = _scanstring(text, index + 1, True)
            except ValueError as error:
                raise fail(str(error).split(":")[0], index) from None
            line, column = position(index)
            frame[1] = Located(key, line, column, line, column + end - index)
            index = blank.match(text, end).end() if end < length and text[end] in starts_blank else end  # type: ignore[union-attr]
            if index >= length or text[index] != ":":
                raise fail("expected ':' after a property name", index)
            index += 1
            frame[2] = "value"
            continue
        if char in "[{":
            if len(stack) >= MAX_DEPTH:
                raise fail(f"nesting deeper than {MAX_DEPTH} levels exceeds the safety limit", index)
            container = node_at("map" if char == "{" else "seq", {} if char == "{" else [], index, index + 1)
            stack.append([container, None, "key?" if char == "{" else "value?"])
            index += 1
            continue
        if char == '"':
            try:
                value, end = _scanstring(text, index + 1, True)
            except ValueError as error:
                raise fail(str(error).split(":")[0], index) from None
            add(node_at("scalar", value, index, end, quoted=True))
            index = end
            continue
        match = _NUMBER.match(text, index)
        if match:
            literal = match.group()
            try:
                number: Any = float(literal) if match.group(1) or match.group(2) else int(literal)
            except ValueError:  # more digits than int() converts
                number = None
            bad = number is None or number_problem(number) is not None
            node = node_at("scalar", literal if bad else number, index, match.end())
            if bad:
                node.tag = BAD_NUMBER  # kept as written; a check reports it
            add(node)
            index = match.end()
            continue
        for literal, value in _LITERALS.items():
            if text.startswith(literal, index):
                node = node_at("scalar", literal if number_problem(value) else value, index, index + len(literal))
                if number_problem(value):
                    node.tag = BAD_NUMBER
                add(node)
                index += len(literal)
                break
        else:
            raise fail("expected a value", index)
