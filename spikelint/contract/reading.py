"""Reading the files of the run contract (configs, manifests, summaries) with positions.

Every way a file can be wrong — missing, a folder, too large, not UTF-8, invalid syntax,
empty — becomes a :class:`ReadProblem` with a 1-based line and column, never a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from spikelint.model import Node

MAX_CONFIG_BYTES = 5 * 1024 * 1024
MAX_NESTING = 100  # far beyond any real config; keeps every later step safe from deep recursion
JSON = "json"
YAML = "yaml"
TOML = "toml"
SUFFIX_FORMATS = {".json": JSON, ".yaml": YAML, ".yml": YAML, ".toml": TOML}


class ReadProblem(Exception):
    """A file cannot be used; ``line``/``column`` are where, when the parser knows."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def regular_file_problem(path: Path) -> str | None:
    """Why ``path`` is not a readable regular file, or ``None``."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "does not exist" if not os.path.lexists(path) else "is a broken symbolic link"
    except OSError as error:
        return f"cannot be read: {error.strerror or error}"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if not os.access(path, os.R_OK):
        return "cannot be read: permission denied"
    return None


def read_text(path: Path, limit: int = MAX_CONFIG_BYTES) -> tuple[bytes, str]:
    """The bytes (for hashing) and the decoded text of a small structured file."""
    from spikelint.documents import decode

    problem = regular_file_problem(path)
    if problem is not None:
        raise ReadProblem(problem)
    try:
        size = path.stat().st_size
        if size > limit:
            raise ReadProblem(f"is {size:,} bytes, more than the {limit:,} bytes this file may have")
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise ReadProblem(f"cannot be read: {error.strerror or error}") from None
    if len(data) > limit:
        raise ReadProblem(f"is more than the {limit:,} bytes this file may have")
    text, failure = decode(data)
    if text is None:
        raise ReadProblem(failure.message if failure else "is not UTF-8 text", failure.line if failure else 1,
                          failure.column if failure else 1)
    return data, text


def format_of(path: Path, text: str) -> str:
    """JSON, YAML or TOML by suffix; a file without a known suffix is JSON when it starts with ``{``."""
    known = SUFFIX_FORMATS.get(path.suffix.lower())
    if known is not None:
        return known
    return JSON if text.lstrip().startswith("{") else YAML


def parse_one(text: str, fmt: str) -> Node | None:
    """The single document of ``text`` (``None`` when it holds none); raises :class:`ReadProblem`."""
    try:
        if fmt == JSON:
            if not text.strip():
                return None
            from spikelint.documents.jsondoc import parse_json

            return parse_json(text)
        if fmt == TOML:
            from spikelint.documents.tomldoc import parse_toml

            root = parse_toml(text)
            return root if root.value else None
        from spikelint.documents.yamldoc import parse_yaml

        documents = parse_yaml(text)
    except RecursionError:
        raise ReadProblem("nests deeper than the parser's safety limit") from None
    except ValueError as error:
        raise ReadProblem(str(error), getattr(error, "line", 1) or 1, getattr(error, "column", 1) or 1) from None
    if not documents:
        return None
    if len(documents) > 1:
        raise ReadProblem(f"holds {len(documents)} YAML documents; a run config is exactly one",
                          documents[1].line, documents[1].column)
    return documents[0]


def kind_of(node: Node) -> str:
    """``a mapping`` / ``a list`` / ``a string`` …, for messages about the wrong shape."""
    if node.kind == "map":
        return "a mapping"
    if node.kind == "seq":
        return "a list"
    from spikelint.secrets.shown_values import shown

    return shown(node.value)


def too_deep(root: Node, limit: int = MAX_NESTING) -> Node | None:
    """The first node nested deeper than ``limit`` levels, found without recursion."""
    stack = [(root, 0)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend((child, depth + 1) for child in node.children())
    return None


def plain(root: Node, limit: int = MAX_NESTING) -> object:
    """``root`` as plain Python data; raises :class:`ReadProblem` for data nested past ``limit``."""
    deep = too_deep(root, limit)
    if deep is not None:
        raise ReadProblem(f"nests deeper than {limit} levels", deep.line, deep.column)
    try:
        return root.to_python()
    except (ValueError, RecursionError) as error:
        raise ReadProblem(f"cannot be converted: {error}", root.line, root.column) from None


def plain_mapping(root: Node, limit: int = MAX_NESTING) -> dict[str, Any]:
    """A mapping node as a plain ``dict`` (callers check ``root.kind == "map"`` first).

    A number no program can hold (``.inf``, ``NaN``, ``1e400``) is a problem at the value.
    """
    from spikelint.documents.numbers import describe
    from spikelint.documents.numbers import is_bad_number
    from spikelint.model import walk

    data = plain(root, limit)
    for _, node in walk(root):
        if is_bad_number(node):
            raise ReadProblem(f"has an invalid number: {describe(node)}; write a finite number within range",
                              node.line, node.column)
    if not isinstance(data, dict):
        raise ReadProblem(f"must be a mapping, got {kind_of(root)}", root.line, root.column)
    return data
