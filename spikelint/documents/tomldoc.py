"""TOML -> a positioned :class:`Node` tree.

``tomllib`` gives values but no positions, so positions come from a light scan of table
headers and ``key =`` lines; a value is placed at its key's line (good enough for
findings, which point at the key/value line).
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node

_HEADER = lazy_regex(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = lazy_regex(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")


class TomlError(ValueError):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def load_toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"invalid TOML: {error}") from None


def _split_dotted(key: str) -> list[str]:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', key)
    return [next(part for part in groups if part != "" ) if any(groups) else "" for groups in parts]


def key_positions(text: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """Dotted key path -> (line, column) of where the key (or table header) is written."""
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    table: tuple[str, ...] = ()
    array_counts: dict[tuple[str, ...], int] = {}
    in_multiline = False
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline:
            if line.count('"""') % 2 == 1 or line.count("'''") % 2 == 1:
                in_multiline = False
            continue
        header = _HEADER.match(line)
        if header and "=" not in line.split("#")[0].split("]")[0]:
            path = tuple(_split_dotted(header.group(2)))
            if header.group(1) == "[[":
                index = array_counts.get(path, 0)
                array_counts[path] = index + 1
                table = path + (str(index),)
            else:
                table = path
            positions.setdefault(table, (number, line.index("[") + 1))
            positions.setdefault(path, (number, line.index("[") + 1))
            continue
        key = _KEY.match(line)
        if key:
            path = table + tuple(_split_dotted(key.group(1)))
            positions.setdefault(path, (number, len(line) - len(line.lstrip()) + 1))
            rest = line[key.end():]
            if rest.count('"""') == 1 or rest.count("'''") == 1:
                in_multiline = True
    return positions


def parse_toml(text: str) -> Node:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+), column (\d+)", str(error))
        line, column = (int(match.group(1)), int(match.group(2))) if match else (1, 1)
        raise TomlError(f"invalid TOML: {str(error).split(' (at line')[0]}", line, column) from None
    positions = key_positions(text)

    def build(value: Any, path: tuple[str, ...], fallback: tuple[int, int]) -> Node:
        line, column = positions.get(path, fallback)
        if isinstance(value, dict):
            node = Node("map", {}, line, column, line, column, keys={})
            for key, child in value.items():
                child_path = path + (key,)
                key_line, key_column = positions.get(child_path, (line, column))
                node.keys[key] = Located(key, key_line, key_column)  # type: ignore[index]
                node.value[key] = build(child, child_path, (key_line, key_column))
            return node
        if isinstance(value, list):
            items = [build(child, path + (str(index),), (line, column)) for index, child in enumerate(value)]
            return Node("seq", items, line, column, line, column)
        if not isinstance(value, (str, int, float, bool)):
            value = str(value)  # dates and times
        return Node("scalar", value, line, column, line, column, quoted=isinstance(value, str))

    return build(data, (), (1, 1))
