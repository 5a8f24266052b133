"""Secret collectors of notebooks: code cells as Python or shell, markdown as prose, outputs (SPK204).

A cell's magics decide how its source is read; outputs are what a reader of the committed
notebook sees, so their secrets are SPK204's.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING
from typing import Iterator
from typing import Sequence

from spikelint.model import Document
from spikelint.model import Located
from spikelint.secrets.cmdline import ArgWord
from spikelint.secrets.python import magic_free_source
from spikelint.secrets.python import python_secrets
from spikelint.secrets.text import CONFIG
from spikelint.secrets.text import PROSE
from spikelint.secrets.text import find_in_text
from spikelint.checks.secrets.commands import command_found
from spikelint.checks.secrets.commands import script_secrets
from spikelint.checks.secrets.found import Found
from spikelint.checks.secrets.found import found_at
from spikelint.checks.secrets.found import quoted_key

if TYPE_CHECKING:
    from spikelint.documents.notebook import Cell


# --------------------------------------------------------------------------- notebooks


def notebook_findings(document: Document) -> Iterator[Found]:
    notebook = document.parsed
    if notebook is None:
        return
    lines = document.lines
    for cell in notebook.cells:
        yield from _cell_source_findings(cell, lines)
        if cell.cell_type == "code":
            yield from _cell_output_findings(cell, lines)


SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script bash", "%%script sh", "%%zsh")
PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%debug")


def _cell_source_findings(cell: Cell, lines: list[str]) -> Iterator[Found]:
    """Code cells: Python via ``ast``, ``!`` lines and ``%%bash`` cells as shell; other cells as text."""
    source = cell.source
    index = cell.index
    where = f" in cell {index}"
    texts = [str(line.value).rstrip("\n") for line in source]
    first = texts[0].strip() if texts else ""
    text_lines: Sequence[int] = range(len(texts))
    if cell.cell_type == "code" and first.startswith(SHELL_CELL_MAGICS):
        body = "\n".join(texts[1:])
        items = script_secrets(body, source[1].line if len(source) > 1 else source[0].line, source[-1].line)
        yield from (found._replace(context=f"{found.context} (cell {index})") for found in command_found(lines, items))
    elif cell.cell_type == "code" and (not first.startswith("%%") or first.startswith(PYTHON_CELL_MAGICS)):
        for position, text in enumerate(texts):
            stripped = text.lstrip()
            if stripped.startswith("!"):
                at = source[position]
                line_items = [*script_secrets(stripped[1:], at.line, at.line),
                              *((ArgWord(stripped, at.line, at.column, at.line), secret, "on a ! shell line")
                                for secret in find_in_text(stripped[1:]))]
                yield from (found._replace(context=f"{found.context} (cell {index})")
                            for found in command_found(lines, line_items))
        python = ["" if first.startswith("%%") and position == 0 else text for position, text in enumerate(texts)]
        yield from _cell_python(python, source, lines, where)
        text_lines = [position for position, text in enumerate(texts) if text.lstrip().startswith(("!", "%"))]
    mode = CONFIG if cell.cell_type == "code" else PROSE  # markdown cells are documentation
    for position in text_lines:
        at = source[position]
        for secret in find_in_text(texts[position], mode=mode):
            yield found_at("SPK201", lines, secret, at.line, at.line, (at.line, at.column), where)


def _cell_python(texts: list[str], source: list[Located], lines: list[str], where: str) -> Iterator[Found]:
    try:
        tree = ast.parse(magic_free_source(texts))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        for position, text in enumerate(texts):
            if not text.lstrip().startswith(("!", "%")):
                at = source[position]
                for secret in find_in_text(text):
                    yield found_at("SPK201", lines, secret, at.line, at.line, (at.line, at.column), where)
        return
    for literal, secret in python_secrets(tree):
        first = source[min(literal.line, len(source)) - 1]
        last = source[min(literal.end_line, len(source)) - 1]
        yield found_at("SPK201", lines, secret, first.line, last.line, (first.line, first.column),
                     quoted_key(literal.key, secret.value) + where)


OUTPUT_TEXT_MIMES = ("text/html",)


def _cell_output_findings(cell: Cell, lines: list[str]) -> Iterator[Found]:
    index = cell.index
    for output in cell.outputs:
        where = f" of cell {index} ({output.output_type})"
        texts: list[Located] = list(output.texts)
        data = output.node.get("data")
        for mime in OUTPUT_TEXT_MIMES:
            from spikelint.documents.notebook import text_lines

            texts.extend(text_lines(data.get(mime) if data is not None else None, strip_ansi=True))
        for text in texts:
            for secret in find_in_text(str(text.value)):
                yield found_at("SPK204", lines, secret, text.line, text.end_line or text.line, (text.line, text.column),
                             where)


