"""YAML -> positioned :class:`Node` trees, built from libyaml's event stream.

We build nodes from events rather than calling ``compose_all`` because the event loop is
iterative (a 100,000-level nesting cannot overflow the C stack), lets us bound alias
expansion (billion laughs) while sharing aliased nodes instead of copying them, and never
constructs Python objects from tags.
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

import yaml

from spikelint.documents.numbers import BAD_NUMBER
from spikelint.documents.numbers import number_problem
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node

try:
    from yaml.cyaml import CParser as PARSER  # libyaml's event parser alone: no constructor, no resolver
except ImportError:  # PyYAML built without libyaml
    PARSER = yaml.SafeLoader

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

    __slots__ = ("node", "pending_key", "size", "anchor", "is_map")

    def __init__(self, node: Node, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.pending_key: Node | None = None
        self.size = 1
        self.is_map = node.kind == "map"


_INT_TAGS = frozenset(("tag:yaml.org,2002:int", "!!int"))


def _plain_value(raw: str, tag: str | None) -> tuple[Any, str | None]:
    """A plain scalar that may be a literal: its value, and :data:`BAD_NUMBER` where no consumer can hold it."""
    value = resolve_plain(raw)
    if isinstance(value, str):
        return value, BAD_NUMBER if _INT.match(value) else tag  # more digits than int() converts
    if number_problem(value):
        return raw, BAD_NUMBER  # kept as written; a check reports it
    return value, tag


def _quoted_value(raw: str, tag: str | None) -> tuple[Any, str | None]:
    """A quoted scalar is text unless tagged ``!!int``."""
    if tag not in _INT_TAGS:
        return raw, tag
    value = resolve_plain(raw)
    if not isinstance(value, str) and number_problem(value):
        return raw, BAD_NUMBER
    return value, tag


class DuplicateKey(NamedTuple):
    """A key written twice in one mapping: where the second is, and the line of the first."""

    key: str
    line: int
    column: int
    first_line: int
    same_value: bool = False  # both values are equal: redundant, not a silent change of value


class _Keys:
    """What key assignments note while a text is read: repeated keys, and the keys a merge (``<<``) brought."""

    __slots__ = ("duplicates", "merged")

    def __init__(self, duplicates: list[DuplicateKey] | None) -> None:
        self.duplicates = duplicates
        self.merged: set[tuple[int, str]] = set()


def parse_yaml(text: str, duplicates: list[DuplicateKey] | None = None) -> list[Node]:
    """Every document of ``text`` as a Node tree (empty documents are skipped).

    A key written twice in one mapping keeps its last value (as PyYAML reads it); ``duplicates``,
    when given, receives each repetition (YAML requires unique keys: kubectl, Helm and OmegaConf
    reject such a file).

    Raises :class:`YamlError` with the parser's position on malformed input or when a
    safety limit (nesting depth, alias expansion) is exceeded.  One pass over the events with
    the common case (a text scalar into an open container) inline: this loop is most of the
    time spent reading YAML.
    """
    documents: list[Node] = []
    anchors: dict[str, tuple[Node, int]] = {}
    open_containers: set[int] = set()  # anchored containers still being read: an alias to one is a cycle
    stack: list[_Frame] = []
    expanded = 0
    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    map_start, seq_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    map_end, seq_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    text_starts = _PLAIN_TEXT_STARTS
    keys = _Keys(duplicates)
    parser = PARSER(text)
    get_event = parser.get_event  # not yaml.parse(): its generator costs a Python frame per event
    try:
        while True:
            event = get_event()
            if event is None:
                break
            kind = type(event)
            if kind is scalar_event:
                raw, tag = event.value, event.tag
                if not event.style and event.implicit[0]:
                    quoted = False
                    if raw[:1] in text_starts:
                        value = raw  # most scalars (names, images, paths): no literal starts so
                    else:
                        value, tag = _plain_value(raw, tag)
                else:
                    quoted = True
                    value, tag = _quoted_value(raw, tag)
                start, end = event.start_mark, event.end_mark
                line = start.line + 1
                end_line = line if end.line == start.line else end.line + 1  # one int object, not two
                node = Node("scalar", value, line, start.column + 1, end_line, end.column + 1, None, tag, quoted)
                size = 1
                if event.anchor:
                    anchors[event.anchor] = (node, 1)
            elif kind is map_start or kind is seq_start:
                start = event.start_mark
                if len(stack) >= MAX_DEPTH:
                    raise YamlError(f"nesting deeper than {MAX_DEPTH} levels exceeds the safety limit",
                                    start.line + 1, start.column + 1)
                is_map = kind is map_start
                line, column = start.line + 1, start.column + 1
                container = Node("map", {}, line, column, line, column, {}, event.tag) if is_map \
                    else Node("seq", [], line, column, line, column, None, event.tag)
                if event.anchor:
                    anchors[event.anchor] = (container, 1)
                    open_containers.add(id(container))
                stack.append(_Frame(container, event.anchor))
                continue
            elif kind is map_end or kind is seq_end:
                frame = stack.pop()
                node, size = frame.node, frame.size
                end = event.end_mark
                node.end_line = end.line + 1
                node.end_column = end.column + 1
                if frame.anchor:
                    open_containers.discard(id(node))
                    if anchors.get(frame.anchor, (None, 0))[0] is node:  # not redefined inside
                        anchors[frame.anchor] = (node, size)
            elif kind is alias_event:
                node, size = _aliased(event, anchors, open_containers)
                expanded += size
                if expanded > MAX_EXPANDED_NODES:
                    mark = event.start_mark
                    raise YamlError("alias expansion exceeds the safety limit (possible alias bomb)",
                                    mark.line + 1, mark.column + 1)
            else:
                if kind is yaml.DocumentStartEvent:
                    anchors.clear()
                    open_containers.clear()
                continue
            if not stack:
                documents.append(node)
                continue
            frame = stack[-1]
            frame.size += size
            if not frame.is_map:
                frame.node.value.append(node)
            elif frame.pending_key is None:
                frame.pending_key = node
            else:
                _set_key(frame.node, frame.pending_key, node, keys)
                frame.pending_key = None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 1
        column = mark.column + 1 if mark is not None else 1
        reason = (error.problem or error.context or "invalid YAML").split("\n")[0]
        if "cannot start any token" in reason and _tab_at(text, line, column):
            reason = "a tab character where YAML allows only spaces (indent with spaces)"
        raise YamlError(f"invalid YAML: {reason}", line, column) from None
    except yaml.YAMLError as error:
        raise YamlError(f"invalid YAML: {error}", 1, 1) from None
    finally:
        parser.dispose()
    return [document for document in documents if not (document.kind == "scalar" and document.value is None)]


def _tab_at(text: str, line: int, column: int) -> bool:
    """Whether the 1-based ``line``/``column`` of ``text`` holds a tab (libyaml names no character)."""
    lines = text.split("\n", line)
    return len(lines) >= line and lines[line - 1][column - 1:column] == "\t"


def _aliased(event: Any, anchors: dict[str, tuple[Node, int]], open_containers: set[int]) -> tuple[Node, int]:
    """The anchored node an alias shares, and how many nodes it stands for."""
    anchored = anchors.get(event.anchor)
    mark = event.start_mark
    if anchored is None:
        raise YamlError(f"found undefined alias {event.anchor!r}", mark.line + 1, mark.column + 1)
    if id(anchored[0]) in open_containers:
        raise YamlError(f"alias {event.anchor!r} refers to the node that contains it (recursive alias)",
                        mark.line + 1, mark.column + 1)
    return anchored


def _set_key(parent: Node, key_node: Node, child: Node, keys: _Keys) -> None:
    """``key: child`` in the open map ``parent`` (a merge key ``<<`` merges instead)."""
    if key_node.kind == "scalar" and key_node.value == "<<" and not key_node.quoted:
        _merge(parent, child, keys)
        return
    key = _key_text(key_node)
    assert parent.keys is not None
    if key in parent.value and keys.duplicates is not None:
        if (id(parent), key) in keys.merged:
            keys.merged.discard((id(parent), key))  # written after the merge: overrides the merged value
        else:
            first = parent.value[key]
            same = first.kind == child.kind and (first.value == child.value if first.kind == "scalar"
                                                 else first.to_python() == child.to_python())
            keys.duplicates.append(DuplicateKey(key, key_node.line, key_node.column, parent.keys[key].line, same))
    parent.value[key] = child
    parent.keys[key] = Located(key, key_node.line, key_node.column, key_node.end_line, key_node.end_column)


def _merge(parent: Node, merged: Node, keys: _Keys) -> None:
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
                keys.merged.add((id(parent), key))  # a key written after the merge overrides it: no repetition
