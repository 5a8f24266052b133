"""Text edits as offsets into the original text, applied by splicing.

Every fixer, whatever the file kind, ends in the same plain data: a few replacements of spans
of the original text.  Splicing them into the original keeps every other byte as it was, which
is what a fix promises; :func:`untouched_lines_kept` checks it again after the fact.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple
from typing import Sequence


class Edit(NamedTuple):
    """Replace ``text[start:end]`` with ``replacement`` (``start == end``: an insertion)."""

    start: int
    end: int
    replacement: str


class Fix(NamedTuple):
    """The edits that make the ``claims`` findings (their fingerprints) go away."""

    rule: str
    claims: tuple[str, ...]  # fingerprints
    edits: tuple[Edit, ...]
    description: str  # what was done, for the summary
    follow_up: str = ""  # what a human must do next (unsafe fixes)
    clears: tuple[str, ...] = ()  # rules whose every finding in the file the edit removes by design


class Refusal(NamedTuple):
    """A finding a fixer cannot fix, and why."""

    fingerprint: str
    rule: str
    reason: str


def newline_of(text: str) -> str:
    """The file's own line break, so inserted lines match the rest."""
    return "\r\n" if "\r\n" in text else "\n"


def line_starts(text: str) -> list[int]:
    """The offset of every line's first character (``splitlines(keepends=True)`` boundaries)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts[:-1] if len(starts) > 1 else starts


def offset(text: str, line: int, column: int, starts: Sequence[int] | None = None) -> int:
    """The offset of the 1-based ``line``/``column``; raises ValueError outside the text."""
    starts = starts if starts is not None else line_starts(text)
    if not 1 <= line <= len(starts):
        raise ValueError(f"line {line} is outside the file")
    position = starts[line - 1] + column - 1
    if position > len(text):
        raise ValueError(f"column {column} is outside line {line}")
    return position


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with ``edits`` spliced in; identical edits count once, overlapping ones are an error."""
    unique = sorted(set(edits), key=lambda edit: (edit.start, edit.end))
    for before, after in zip(unique, unique[1:]):
        if after.start < before.end or (after.start == before.start and after.end == before.end):
            raise ValueError("two fixes edit the same text")
    pieces: list[str] = []
    position = 0
    for edit in unique:
        pieces.append(text[position:edit.start])
        pieces.append(edit.replacement)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def untouched_lines_kept(original: str, edited: str, edits: Sequence[Edit]) -> bool:
    """Whether every line of ``original`` that no edit touches is still in ``edited``, byte for byte
    and in order (the promise of a fix; a whole-file rewrite, such as a notebook's, is exempt)."""
    starts = line_starts(original)
    touched: set[int] = set()
    for edit in edits:
        first = _line_index(starts, edit.start)
        last = _line_index(starts, max(edit.end - 1, edit.start))
        touched.update(range(first, last + 1))
    old_lines = original.splitlines(keepends=True)
    new_lines = edited.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, first, last, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete") and not set(range(first, last)) <= touched:
            return False
    return True


def _line_index(starts: Sequence[int], position: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= position:
            low = middle
        else:
            high = middle - 1
    return low
