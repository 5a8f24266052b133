"""Offsets in the text being lexed -> (line, column) in the file, also across joined continuation lines."""

from __future__ import annotations

from bisect import bisect_right
from typing import Sequence

from spikelint.util.lazyre import lazy_regex

_NEWLINES = lazy_regex(r"\n")


class Locator:
    """Maps offsets in the text being lexed to 1-based (line, column) in the file.

    ``segments`` are (offset, line, column) at the start of each run of characters that sits
    on one physical line; a sub-range of the same text shares them through ``base``.
    """

    __slots__ = ("starts", "lines", "columns", "base")

    def __init__(self, segments: Sequence[tuple[int, int, int]], base: int = 0) -> None:
        self.starts = [segment[0] for segment in segments] or [0]
        self.lines = [segment[1] for segment in segments] or [1]
        self.columns = [segment[2] for segment in segments] or [1]
        self.base = base

    @classmethod
    def for_text(cls, text: str, first_line: int = 1, first_column: int = 1, indent: int = 0) -> Locator:
        segments = [(0, first_line, first_column)]
        line = first_line
        for match in _NEWLINES.finditer(text):
            line += 1
            segments.append((match.end(), line, indent + 1))
        return cls(segments)

    def segments(self) -> list[tuple[int, int, int]]:
        return list(zip(self.starts, self.lines, self.columns))

    def locate(self, offset: int) -> tuple[int, int]:
        absolute = offset + self.base
        index = bisect_right(self.starts, absolute) - 1
        if index < 0:
            index = 0
        return self.lines[index], self.columns[index] + absolute - self.starts[index]

    def span(self, start: int, end: int) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of ``[start, end)``, one search when it sits on one run."""
        absolute = start + self.base
        starts = self.starts
        index = bisect_right(starts, absolute) - 1
        if index < 0:
            index = 0
        line, column = self.lines[index], self.columns[index] + absolute - starts[index]
        if index + 1 >= len(starts) or end + self.base < starts[index + 1]:
            return line, column, line, column + end - start
        end_line, end_column = self.locate(end)
        return line, column, end_line, end_column
