"""ruamel.yaml's round-trip tree, read for positions: where each value of each document of a
stream starts (1-based), and whether a collection is written in flow style.  The fixers splice
their text at these positions into the original, so nothing else of the file is re-emitted."""

from __future__ import annotations

from typing import Any
from typing import Iterator
from typing import NamedTuple


class YamlError(ValueError):
    """The text is not YAML that ruamel.yaml reads back."""


class Placed(NamedTuple):
    """One value of the tree and where it starts (1-based)."""

    path: tuple[str | int, ...]
    parent: Any  # the CommentedMap / CommentedSeq holding it
    key: str | int
    value: Any
    line: int
    column: int


def load_stream(text: str) -> list[Any]:
    """Every document of ``text`` in round-trip mode (comments, quotes and styles kept)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    try:
        return list(yaml.load_all(text))
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise YamlError(f"not valid YAML{where}: {getattr(error, 'problem', None) or error}") from None
    except Exception as error:  # noqa: BLE001 - ruamel raises plain exceptions for some inputs
        raise YamlError(f"not valid YAML: {error}") from None


def is_map(node: Any) -> bool:
    from ruamel.yaml.comments import CommentedMap

    return isinstance(node, CommentedMap)


def is_seq(node: Any) -> bool:
    from ruamel.yaml.comments import CommentedSeq

    return isinstance(node, CommentedSeq)


def is_flow(node: Any) -> bool:
    return bool(node.fa.flow_style()) if is_map(node) or is_seq(node) else False


def key_position(mapping: Any, key: str) -> tuple[int, int]:
    line, column = mapping.lc.key(key)
    return line + 1, column + 1


def walk(document: Any) -> Iterator[Placed]:
    """Every value under ``document`` in document order; a node shared through an alias once."""
    seen: set[int] = set()

    def visit(node: Any, path: tuple[str | int, ...]) -> Iterator[Placed]:
        if id(node) in seen:
            return
        seen.add(id(node))
        if is_map(node):
            for key in node:
                if key not in node.lc.data:  # merged in by `<<: *anchor`: walked where the anchor is written
                    continue
                child = node[key]
                line, column = node.lc.value(key)
                yield Placed((*path, str(key)), node, key, child, line + 1, column + 1)
                yield from visit(child, (*path, str(key)))
        elif is_seq(node):
            for index, child in enumerate(node):
                line, column = node.lc.item(index)
                yield Placed((*path, index), node, index, child, line + 1, column + 1)
                yield from visit(child, (*path, index))

    yield from visit(document, ())


def document_at(documents: list[Any], line: int) -> Any | None:
    """The document whose top-level keys begin at or before ``line`` and last (the stream's order)."""
    found = None
    for document in documents:
        if is_map(document) and document:
            first = next(iter(document))
            if key_position(document, first)[0] <= line:
                found = document
    return found
