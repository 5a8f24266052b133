"""Jupyter notebooks (nbformat 4) -> cells with every source and output line positioned.

A finding in a notebook points at the line of the ``.ipynb`` file (where the JSON string
holding that text is) and names the cell index.  Image, HTML and widget payloads are not
text a person wrote and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field

from spikelint.model import Located
from spikelint.model import Node

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
TEXT_MIME_TYPES = ("text/plain", "application/json", "text/markdown", "text/latex")


@dataclass
class Output:
    index: int
    output_type: str
    node: Node
    texts: list[Located] = field(default_factory=list)  # one per line of text, ANSI stripped


@dataclass
class Cell:
    index: int
    cell_type: str
    node: Node
    source: list[Located] = field(default_factory=list)  # one per source line
    outputs: list[Output] = field(default_factory=list)


@dataclass
class Notebook:
    cells: list[Cell]
    nbformat: int | None = None


class NotebookError(ValueError):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def text_lines(node: Node | None, strip_ansi: bool = False) -> list[Located]:
    """A multiline notebook string (a list of strings or one string) as positioned lines."""
    if node is None:
        return []
    pieces = node.value if node.kind == "seq" else [node]
    lines: list[Located] = []
    for piece in pieces:
        if piece.kind != "scalar" or not isinstance(piece.value, str):
            continue
        text = ANSI_ESCAPE.sub("", piece.value) if strip_ansi else piece.value
        for part in text.split("\n"):
            if part or len(pieces) == 1:
                lines.append(Located(part, piece.line, piece.column + 1, piece.end_line, piece.end_column))
    return [line for line in lines if line.value != ""]


def read_notebook(root: Node) -> Notebook:
    if root.kind != "map":
        raise NotebookError("a notebook must be a JSON object with 'cells'", root.line, root.column)
    cells_node = root.get("cells")
    if cells_node is None or cells_node.kind != "seq":
        raise NotebookError("not an nbformat 4 notebook: no 'cells' list", root.line, root.column)
    version = root.scalar("nbformat")
    cells = []
    for index, cell_node in enumerate(cells_node.value):
        if cell_node.kind != "map":
            continue
        cell = Cell(index, str(cell_node.scalar("cell_type") or "code"), cell_node,
                    source=text_lines(cell_node.get("source")))
        outputs = cell_node.get("outputs")
        for output_index, output_node in enumerate(outputs.value if outputs is not None and outputs.kind == "seq" else []):
            if output_node.kind != "map":
                continue
            output_type = str(output_node.scalar("output_type") or "")
            output = Output(output_index, output_type, output_node)
            if output_type == "stream":
                output.texts = text_lines(output_node.get("text"), strip_ansi=True)
            elif output_type in ("execute_result", "display_data"):
                data = output_node.get("data")
                for mime in TEXT_MIME_TYPES:
                    output.texts.extend(text_lines(data.get(mime) if data else None, strip_ansi=True))
            elif output_type == "error":
                evalue = output_node.get("evalue")
                output.texts = text_lines(evalue, strip_ansi=True) + text_lines(output_node.get("traceback"), strip_ansi=True)
            cell.outputs.append(output)
        cells.append(cell)
    return Notebook(cells, version if isinstance(version, int) else None)
