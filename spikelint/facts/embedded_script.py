"""Scripts embedded in a string (``sh -c '…'`` in YAML or JSON), parsed with their words placed in the file.

The shell parser numbers a string's words from its own start; findings must point at the file,
so each line of the script is found in the holder's lines, or else each word is searched for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spikelint.model import Located

if TYPE_CHECKING:
    from spikelint.documents.shell import Script
    from spikelint.documents.shell import Word


class _Finder:
    """Places words of an embedded script at their line and column in the file, by searching.

    Used when the script's lines cannot be found verbatim (folded YAML, escapes in a quoted
    string): each word is searched in order from the holder; a word inside an earlier one
    (an assignment's value) is placed by its offset in that word.
    """

    def __init__(self, lines: list[str], holder: Located) -> None:
        self.lines = lines
        self.holder = holder
        self.line = holder.line
        self.column = holder.column
        self.last = max(holder.end_line or holder.line, holder.line)
        self.previous: tuple[Word, int, int] | None = None  # original word, new line, new column

    def place(self, word: Word) -> tuple[int, int]:
        if self.previous is not None:
            outer, line, column = self.previous
            if word.line == outer.line == outer.end_line and outer.column <= word.column < outer.end_column:
                return line, column + word.column - outer.column
        for needle in (word.raw, word.text):
            if not needle or "\n" in needle:
                continue
            for number in range(self.line, min(self.last, len(self.lines)) + 1):
                source = self.lines[number - 1]
                offset = source.find(needle, self.column - 1 if number == self.line else 0)
                if offset >= 0:
                    self.line, self.column = number, offset + 1 + len(needle)
                    self.previous = (word, number, offset + 1)
                    return number, offset + 1
        return self.holder.line, self.holder.column


def script_segments(text: str, holder: Located, lines: list[str]) -> list[tuple[int, int, int]] | None:
    """Where each line of an embedded script sits in the file: ``(offset, line, column)`` runs.

    Every non-blank line must be found verbatim, in order, within the holder's lines (a YAML
    literal block, a one-line quoted or plain string, a JSON string with ``\\n`` escapes);
    otherwise ``None``.
    """
    segments: list[tuple[int, int, int]] = []
    line, column = holder.line, holder.column
    last = min(max(holder.end_line or holder.line, holder.line), len(lines))
    offset = 0
    for part in text.split("\n"):
        if part.strip():
            found = None
            for number in range(line, last + 1):
                position = lines[number - 1].find(part, column - 1 if number == line else 0)
                if position >= 0:
                    found = (number, position + 1)
                    break
            if found is None:
                return None
            segments.append((offset, found[0], found[1]))
            line, column = found[0], found[1] + len(part)
        else:
            segments.append((offset, line, column))
        offset += len(part) + 1
    return segments


def parse_script(text: str, holder: Located, lines: list[str] | None) -> Script | None:
    """Parse an embedded script with its words placed in the file (when ``lines`` are given)."""
    try:
        from spikelint.documents.shell import parse_shell
        from spikelint.documents.shell import parse_shell_segments
    except ImportError:  # pragma: no cover - the shell parser ships with the package
        return None
    try:
        if lines is None:
            return parse_shell(text, holder.line, holder.column)
        segments = script_segments(text, holder, lines)
        if segments is not None:
            return parse_shell_segments(text, segments)
        return _relocate(parse_shell(text, 1, 1), _Finder(lines, holder))
    except Exception:  # noqa: BLE001 - an unparseable embedded script is skipped, never fatal
        return None


def _relocate(script: Script, finder: _Finder) -> Script:
    """The same script with every word placed in the file by searching (see :class:`_Finder`)."""
    from dataclasses import replace as copy

    every: dict[tuple[int, int], Word] = {}
    for pipeline in script.pipelines:
        for command in pipeline.commands:
            for word in [*command.assignments, *command.words]:
                every.setdefault((word.line, word.column), word)
            for redirect in command.redirects:
                if redirect.target is not None:
                    every.setdefault((redirect.target.line, redirect.target.column), redirect.target)
    for words in script.assignments.values():
        for word in words:
            every.setdefault((word.line, word.column), word)
    moved: dict[tuple[int, int], Word] = {}
    for position in sorted(every):
        word = every[position]
        line, column = finder.place(word)
        end_column = column + (word.end_column - word.column if word.end_line == word.line else len(word.raw))
        moved[position] = copy(word, line=line, column=column, end_line=line, end_column=end_column)
    return _rebuild(script, moved)


def _rebuild(script: Script, moved: dict[tuple[int, int], Word]) -> Script:
    from dataclasses import replace as copy

    def word(item: Word) -> Word:
        return moved.get((item.line, item.column), item)

    pipelines = []
    for pipeline in script.pipelines:
        commands = []
        for command in pipeline.commands:
            redirects = [copy(r, target=word(r.target)) if r.target is not None else r for r in command.redirects]
            commands.append(copy(command, words=[word(w) for w in command.words],
                                 assignments=[word(w) for w in command.assignments], redirects=redirects))
        pipelines.append(copy(pipeline, commands=commands))
    assignments = {name: [word(w) for w in words] for name, words in script.assignments.items()}
    return copy(script, pipelines=pipelines, assignments=assignments)
