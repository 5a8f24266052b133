"""The human format: ``path:line:col: SPK101 [error] what`` plus the offending source line and the fix.

The first line of each finding is the grep- and editor-friendly form (editors jump to
``path:line:col``); the snippet underneath shows what to change.  Secret rules never show
their source line, since it holds the secret.  A message reads "what — fix (because: why)":
the fix and the reason go on lines of their own (``= fix:``, ``= because:``), and every line is
wrapped at spaces to ``RenderOptions.width``, so that no finding runs to hundreds of columns (a
token never contains a space, so wrapping never cuts one for the final mask).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING
from typing import Sequence

from spikelint.util.escape import printable
from spikelint.util.escape import shell_inert_path
from spikelint.documents.bounded import is_scanned_binary
from spikelint.report import is_secret_rule
from spikelint.report import ordered

if TYPE_CHECKING:
    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.report import RenderOptions

MAX_WIDTH = 120  # display cells of source shown; longer lines are cut around the column
LEFT_CONTEXT = 40  # cells kept before the column when a long line is cut
TAB_WIDTH = 4
ELLIPSIS = "…"

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
BLUE = "\x1b[34m"
SEVERITY_COLOR = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}


def render_text(report: Report, options: RenderOptions) -> str:
    """Each finding's header, code frame, fix and reason, sorted; the summary line is the caller's (stderr)."""
    lines: list[str] = []
    for finding in ordered(report.findings):
        message = _printable(finding.message)
        if not options.show_source:  # --concise: one line a finding, for grep and editors
            lines.extend(_header(finding, message, options.color, 0))
            continue
        what, fix, because = message_parts(message)
        lines.extend(_header(finding, what, options.color, options.width))
        if not is_secret_rule(finding.rule) and not is_scanned_binary(finding.path):  # a pickle's bytes show nothing
            lines.extend(_snippet(finding, report.sources.get(finding.path), options.color))
        for label, text in (("fix", fix), ("because", because)):
            if text:
                lines.extend(_note(label, text, options.color, options.width))
    return "".join(line + "\n" for line in lines)


FIX_SEPARATOR = " — "
ORPHAN = 16  # a wrapped message's last line shorter than this is spread over the lines above it
BECAUSE = " (because: "


def message_parts(message: str) -> tuple[str, str, str]:
    """A message's what, fix and because: ``"what — fix (because: why)"``; missing parts are empty."""
    because = ""
    if message.endswith(")") and BECAUSE in message:
        message, _, because = message.rpartition(BECAUSE)
        because = because[:-1]
    what, _, fix = message.partition(FIX_SEPARATOR)
    return what, fix, because


def _wrap(text: str, width: int, first: int, indent: str) -> list[str]:
    """``text`` cut at spaces into lines of ``width`` columns, the first ``first`` columns shorter."""
    if width <= 0 or len(text) + first <= width:
        return [text]
    if first > width - 2 * ORPHAN:  # a long path leaves no room on the first line: the text starts below it
        return ["", *(line if line.startswith(indent) else indent + line
                      for line in _wrap(text, width, len(indent), indent))]
    lines = _wrapped(text, width, first, indent)
    if len(lines) > 1 and len(lines[-1].strip()) < ORPHAN:  # no line holds a lone word or two: spread them out
        for narrower in range(width - 4, width - ORPHAN - 1, -4):  # as little narrower as that takes
            shorter = _wrapped(text, narrower, first, indent)
            if len(shorter) != len(lines):
                break
            if len(shorter[-1].strip()) >= ORPHAN:
                return shorter
    return lines or [text]


def _wrapped(text: str, width: int, first: int, indent: str) -> list[str]:
    lines = textwrap.wrap(" " * first + text, width, subsequent_indent=indent, break_long_words=False,
                          break_on_hyphens=False)
    if lines:
        lines[0] = lines[0][first:] if lines[0].startswith(" " * first) else lines[0].lstrip()
    return lines


def _note(label: str, text: str, color: bool, width: int) -> list[str]:
    lead = f"  = {label}: "
    wrapped = _wrap(text, width, len(lead), " " * len(lead))
    return [_paint(lead, DIM, color) + wrapped[0], *wrapped[1:]]


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color and text else text


def _header(finding: Finding, what: str, color: bool, width: int) -> list[str]:
    """``path:line:col: RULE [severity] what``, the ``what`` wrapped under a four-space indent."""
    where = f"{shell_inert_path(finding.path)}:{finding.line}:{finding.column}:"
    severity_color = SEVERITY_COLOR.get(finding.severity, BOLD)
    prefix = " ".join((where, finding.rule, f"[{finding.severity}]")) + " "
    wrapped = _wrap(what, width, len(prefix), "    ")
    painted = " ".join((
        _paint(where, BOLD, color),
        _paint(finding.rule, BOLD + severity_color, color),
        _paint(f"[{finding.severity}]", severity_color, color),
    )) + " "
    if not wrapped[0]:
        return [painted.rstrip(), *wrapped[1:]]
    return [painted + wrapped[0], *wrapped[1:]]


def _printable(text: str) -> str:
    """Control characters escaped, so a crafted file cannot drive the terminal."""
    return printable(text)


def _cell_width(char: str) -> int:
    """Display cells: 2 for East Asian wide characters, 0 for combining marks."""
    if char.isascii():
        return 1
    import unicodedata

    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cells(line: str) -> list[tuple[str, int]]:
    """Each source character as (display text, width); tabs expanded, controls replaced."""
    if line.isascii() and line.isprintable():  # most source lines: one cell per character
        return [(char, 1) for char in line]
    cells: list[tuple[str, int]] = []
    position = 0
    for char in line:
        if char == "\t":
            text = " " * (TAB_WIDTH - position % TAB_WIDTH)
            cells.append((text, len(text)))
        elif not char.isprintable() and char != " ":
            cells.append(("?", 1))
        else:
            cells.append((char, _cell_width(char)))
        position += cells[-1][1]
    return cells


def _snippet(finding: Finding, source: Sequence[str] | None, color: bool) -> list[str]:
    """The source line with a caret under column..end_column (to the line's end if it spans)."""
    if source is None or not 1 <= finding.line <= len(source):
        return []
    line = source[finding.line - 1].rstrip("\r\n")
    start = min(max(finding.column, 1), len(line) + 1) - 1  # 0-based character index
    if finding.end_line == finding.line and finding.end_column is not None and finding.end_column > finding.column:
        stop = min(finding.end_column - 1, len(line))
    elif finding.end_line is not None and finding.end_line > finding.line:
        stop = len(line)
    else:
        stop = start + 1
    stop = max(stop, start + 1)
    # Only look at the characters that can be shown: a minified file may be one huge line.
    cut_left = max(0, start - 2 * MAX_WIDTH)
    cut_right = min(len(line), start + 2 * MAX_WIDTH)
    cells = _cells(line[cut_left:cut_right])
    start -= cut_left
    stop = min(stop - cut_left, len(cells) + 1)

    if all(width == 1 for _, width in cells):
        offsets = list(range(len(cells) + 1))
    else:
        offsets = [0]
        for _, width in cells:
            offsets.append(offsets[-1] + width)
    total = offsets[-1]
    caret_from = offsets[start]
    caret_to = offsets[min(stop, len(cells))] if stop <= len(cells) else total + (stop - len(cells))
    caret_to = max(caret_to, caret_from + 1)

    window_from = 0
    window_to = total
    if total > MAX_WIDTH:
        window_from = max(0, min(caret_from - LEFT_CONTEXT, total - MAX_WIDTH))
        window_to = window_from + MAX_WIDTH
    shown = [(char, offset) for (char, width), offset in zip(cells, offsets)
             if offset >= window_from and offset + width <= window_to]
    text = "".join(char for char, _ in shown)
    base = shown[0][1] if shown else window_from  # a wide character may straddle the cut
    lead = ELLIPSIS if base > 0 or cut_left else ""
    tail = ELLIPSIS if window_to < total or cut_right < len(line) else ""
    caret_from = max(caret_from, base) - base
    caret_to = min(caret_to, window_to + 1) - base
    caret = " " * (len(lead) + caret_from) + "^" * max(1, caret_to - caret_from)

    number = str(finding.line)
    gutter = " " * len(number)
    severity_color = SEVERITY_COLOR.get(finding.severity, BOLD)
    return [
        f"{_paint(f'  {number} |', BLUE, color)} {lead}{text}{tail}".rstrip(),
        f"{_paint(f'  {gutter} |', BLUE, color)} {_paint(caret, severity_color, color)}",
    ]
