"""YAML -> positioned :class:`Node` trees, built from libyaml's event stream.

We build nodes from events rather than calling ``compose_all`` because the event loop is
iterative (a 100,000-level nesting cannot overflow the C stack), lets us bound alias
expansion (billion laughs) while sharing aliased nodes instead of copying them, and never
constructs Python objects from tags.
"""

from __future__ import annotations

from typing import Any

import yaml

from spikelint.documents.numbers import BAD_NUMBER
from spikelint.documents.numbers import number_problem
from spikelint.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node

PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = 1_000
MAX_EXPANDED_NODES = 2_000_000

_INT = lazy_regex(r"^[-+]?(0|[1-9][0-9_]*)$")
_HEX = lazy_regex(r"^0x[0-9a-fA-F_]+$")
_OCT = lazy_regex(r"^0o?[0-7_]+$")
_FLOAT = lazy_regex(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_NULLS = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_PLAIN_TEXT_STARTS = frozenset("abcdeghijklmopqrsuvwxyzABCDEGHIJKLMOPQRSUVWXYZ/_$")
_FALSE = {"false", "False", "FALSE"}


class YamlError(ValueError):
    """A YAML document could not be read; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def resolve_plain(value: str) -> Any:
    """Type of a plain (unquoted) scalar, the way Kubernetes' YAML 1.2 reader sees it."""
    if value[:1] in _PLAIN_TEXT_STARTS:
        return value  # most scalars (names, images, paths) start with a letter no literal starts with
    if value in _NULLS:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.match(value):
        try:
            return int(value.replace("_", ""))
        except ValueError:
            return value
    if _HEX.match(value):
        return int(value.replace("_", ""), 16)
    if _FLOAT.match(value) and any(ch.isdigit() for ch in value):
        try:
            return float(value.replace("_", ""))
        except ValueError:
            return value
    if value in (".inf", ".Inf", "+.inf", "-.inf", ".nan", ".NaN"):
        return float(value.replace(".", "").replace("Inf", "inf").replace("NaN", "nan"))
    return value


def _key_text(node: Node) -> str:
    if node.kind == "scalar":
        value = node.value
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        return str(value)
    return f"<{node.kind}>"


class _Frame:
    """An open map or sequence while its events arrive."""

    __slots__ = ("node", "pending_key", "size", "anchor")

    def __init__(self, node: Node, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.pending_key: Node | None = None
        self.size = 1


def parse_yaml(text: str) -> list[Node]:
    """Every document of ``text`` as a Node tree (empty documents are skipped).

    Raises :class:`YamlError` with the parser's position on malformed input or when a
    safety limit (nesting depth, alias expansion) is exceeded.
    """
    documents: list[Node] = []
    anchors: dict[str, tuple[Node, int]] = {}
    open_containers: set[int] = set()  # anchored containers still being read: an alias to one is a cycle
    stack: list[_Frame] = []
    expanded = 0
    try:
        events = yaml.parse(text, Loader=PARSER)
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent or kind is yaml.AliasEvent:
                if kind is yaml.AliasEvent:
                    anchored = anchors.get(event.anchor)
                    if anchored is None:
                        mark = event.start_mark
                        raise YamlError(f"found undefined alias {event.anchor!r}", mark.line + 1, mark.column + 1)
                    if id(anchored[0]) in open_containers:
                        mark = event.start_mark
                        raise YamlError(f"alias {event.anchor!r} refers to the node that contains it "
                                        f"(recursive alias)", mark.line + 1, mark.column + 1)
                    node, size = anchored
                    expanded += size
                    if expanded > MAX_EXPANDED_NODES:
                        mark = event.start_mark
                        raise YamlError(
                            "alias expansion exceeds the safety limit (possible alias bomb)",
                            mark.line + 1, mark.column + 1)
                else:
                    start, end = event.start_mark, event.end_mark
                    plain = not event.style and event.implicit[0]
                    value = resolve_plain(event.value) if plain else event.value
                    if event.tag in ("tag:yaml.org,2002:int", "!!int") and not plain:
                        value = resolve_plain(event.value)
                    tag = event.tag
                    if not isinstance(value, str) and number_problem(value):
                        value, tag = event.value, BAD_NUMBER  # kept as written; a check reports it
                    elif plain and isinstance(value, str) and _INT.match(value):
                        tag = BAD_NUMBER  # more digits than int() converts
                    node = Node("scalar", value, start.line + 1, start.column + 1, end.line + 1,
                                end.column + 1, tag=tag, quoted=not plain)
                    size = 1
                    if event.anchor:
                        anchors[event.anchor] = (node, 1)
                if not stack:
                    documents.append(node)
                    continue
                _attach(stack[-1], node, size)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if len(stack) >= MAX_DEPTH:
                    mark = event.start_mark
                    raise YamlError(f"nesting deeper than {MAX_DEPTH} levels exceeds the safety limit",
                                    mark.line + 1, mark.column + 1)
                start = event.start_mark
                is_map = kind is yaml.MappingStartEvent
                node = Node("map" if is_map else "seq", {} if is_map else [], start.line + 1,
                            start.column + 1, start.line + 1, start.column + 1,
                            keys={} if is_map else None, tag=event.tag)
                frame = _Frame(node, event.anchor)
                if event.anchor:
                    anchors[event.anchor] = (node, 1)
                    open_containers.add(id(node))
                stack.append(frame)
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                frame = stack.pop()
                end = event.end_mark
                frame.node.end_line = end.line + 1
                frame.node.end_column = end.column + 1
                if frame.anchor:
                    open_containers.discard(id(frame.node))
                    if anchors.get(frame.anchor, (None, 0))[0] is frame.node:  # not redefined inside
                        anchors[frame.anchor] = (frame.node, frame.size)
                if stack:
                    _attach(stack[-1], frame.node, frame.size)
                else:
                    documents.append(frame.node)
            elif kind is yaml.DocumentStartEvent:
                anchors.clear()
                open_containers.clear()
            elif kind is yaml.DocumentEndEvent:
                pass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 1
        column = mark.column + 1 if mark is not None else 1
        reason = (error.problem or error.context or "invalid YAML").split("\n")[0]
        raise YamlError(f"invalid YAML: {reason}", line, column) from None
    except yaml.YAMLError as error:
        raise YamlError(f"invalid YAML: {error}", 1, 1) from None
    return [document for document in documents if not (document.kind == "scalar" and document.value is None)]


def _attach(frame: _Frame, child: Node, size: int) -> None:
    """Add ``child`` to the open container ``frame``."""
    frame.size += size
    parent = frame.node
    if parent.kind == "seq":
        parent.value.append(child)
        return
    if frame.pending_key is None:
        frame.pending_key = child
        return
    key_node = frame.pending_key
    frame.pending_key = None
    if key_node.kind == "scalar" and key_node.value == "<<" and not key_node.quoted:
        _merge(parent, child)
        return
    key = _key_text(key_node)
    parent.value[key] = child
    assert parent.keys is not None
    parent.keys[key] = Located(key, key_node.line, key_node.column, key_node.end_line, key_node.end_column)


def _merge(parent: Node, merged: Node) -> None:
    """YAML merge key ``<<: *base`` (or a list of them): earlier keys win."""
    sources = merged.value if merged.kind == "seq" else [merged]
    for source in sources:
        if source.kind != "map":
            continue
        for key, value in source.value.items():
            if key not in parent.value:
                parent.value[key] = value
                assert parent.keys is not None and source.keys is not None
                parent.keys[key] = source.keys[key]
