"""What ``verify-run`` reports: issues at a file and line, collected in file order and capped per file.

Also what was read, for the report: each file's display path and the lines that carry issues
(JSON Lines files are streamed, so only those lines are kept).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable
from typing import NamedTuple
from typing import Sequence

from spikelint.model import Located
from spikelint.model import Node

MAX_ISSUES_PER_FILE = 1000
RULE = "SPK601"


class Issue(NamedTuple):
    path: str
    line: int
    column: int
    message: str
    key: str = ""
    end_line: int | None = None
    end_column: int | None = None
    rule: str = RULE


class SparseLines(Sequence[str]):
    """A file's lines as far as messages need them: the lines that carry findings, others blank."""

    def __init__(self, lines: dict[int, str], length: int) -> None:
        self._lines = lines
        self._length = max(length, max(lines, default=0))

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._lines.get(index + 1, "")

    def present(self) -> list[str]:
        """The lines actually kept (the others are blank)."""
        return list(self._lines.values())

    def mapped(self, function: Callable[[str], str]) -> SparseLines:
        """The same sparse lines with ``function`` applied to each kept line."""
        return SparseLines({number: function(line) for number, line in self._lines.items()}, self._length)


@dataclass
class RunFiles:
    """What was read, for the report: display paths, the manifest's text, source lines."""

    folder: Path
    manifest_path: str
    manifest_text: str | None = None
    files_read: int = 0
    sources: dict[str, Sequence[str]] = field(default_factory=dict)


class Collector:
    """Issues in file order, at most :data:`MAX_ISSUES_PER_FILE` listed per file."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.per_file: dict[str, int] = {}
        self.hidden: dict[str, int] = {}
        self.lines: dict[str, dict[int, str]] = {}
        self.lengths: dict[str, int] = {}

    def add(self, path: str, line: int, column: int, message: str, *, key: str = "", source: str | None = None,
            end: tuple[int | None, int | None] = (None, None)) -> None:
        listed = self.per_file.get(path, 0)
        if listed >= MAX_ISSUES_PER_FILE:
            self.hidden[path] = self.hidden.get(path, 0) + 1
            return
        self.per_file[path] = listed + 1
        self.issues.append(Issue(path, max(line, 1), max(column, 1), message, key or message, end[0], end[1]))
        if source is not None:
            self.lines.setdefault(path, {})[line] = source

    def at(self, path: str, place: Located | Node | None, message: str, key: str = "") -> None:
        if place is None:
            self.add(path, 1, 1, message, key=key)
        else:
            self.add(path, place.line, place.column, message, key=key, end=(place.end_line, place.end_column))

    def finish(self) -> list[Issue]:
        for path, count in self.hidden.items():
            self.issues.append(Issue(path, 1, 1, f"{count} more problem{'s' if count != 1 else ''} in this file "
                                     f"not listed (only the first {MAX_ISSUES_PER_FILE} are)"))
        return self.issues


def display(path: Path, cwd: Path) -> str:
    from spikelint.files import display_path

    absolute = Path(os.path.abspath(path))
    return display_path(absolute, Path(os.path.abspath(cwd)))
