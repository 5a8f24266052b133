"""Jupyter notebooks (nbformat 4, and the older 3) -> cells with every source and output line positioned.

A finding in a notebook points at the line of the ``.ipynb`` file (where the JSON string
holding that text is) and names the cell index.  Image, HTML and widget payloads are not
text a person wrote and are skipped.  An nbformat 3 notebook keeps its cells under
``worksheets``, its code under ``input`` and each output's mime data at the output's top
level (``text``, ``json``…); its ``pyout``/``pyerr`` outputs are read as
``execute_result``/``error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import walk

ANSI_ESCAPE = lazy_regex(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
TEXT_MIME_TYPES = ("text/plain", "application/json", "text/markdown", "text/latex")
V3_TEXT_KEYS = ("text", "json", "markdown", "latex")  # nbformat 3: mime data sit on the output itself
V3_OUTPUT_TYPES = {"pyout": "execute_result", "pyerr": "error"}


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
    # (message, line, column) of what nbformat refuses but the rest of the notebook can still be read around
    malformed: list[tuple[str, int, int]] = field(default_factory=list)


class NotebookError(ValueError):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def text_lines(node: Node | None, strip_ansi: bool = False) -> list[Located]:
    """A multiline notebook string (a list of strings or one string) as positioned lines.

    Structured data (an ``application/json`` output holds any JSON value) gives the lines
    of every string inside it.
    """
    if node is None:
        return []
    if node.kind == "map" or (node.kind == "seq" and any(piece.kind != "scalar" for piece in node.value)):
        return [line for _, inner in walk(node) if inner.kind == "scalar" and isinstance(inner.value, str)
                for line in text_lines(inner, strip_ansi)]
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


def cell_nodes(root: Node) -> list[Node] | None:
    """The cells of an nbformat 4 notebook, or of every worksheet of an nbformat 3 one."""
    cells = root.get("cells")
    if cells is not None and cells.kind == "seq":
        return list(cells.value)
    worksheets = root.get("worksheets")
    if worksheets is None or worksheets.kind != "seq":
        return None
    found: list[Node] = []
    for worksheet in worksheets.value:
        inner = worksheet.get("cells") if worksheet.kind == "map" else None
        if inner is not None and inner.kind == "seq":
            found.extend(inner.value)
    return found


def read_output(index: int, node: Node) -> Output:
    output_type = str(node.scalar("output_type") or "")
    output_type = V3_OUTPUT_TYPES.get(output_type, output_type)
    output = Output(index, output_type, node)
    if output_type == "stream":
        output.texts = text_lines(node.get("text"), strip_ansi=True)
    elif output_type in ("execute_result", "display_data"):
        data = node.get("data")
        if data is not None and data.kind == "map":
            for mime in TEXT_MIME_TYPES:
                output.texts.extend(text_lines(data.get(mime), strip_ansi=True))
        elif data is None:
            for key in V3_TEXT_KEYS:
                output.texts.extend(text_lines(node.get(key), strip_ansi=True))
    elif output_type == "error":
        output.texts = text_lines(node.get("evalue"), strip_ansi=True) + text_lines(node.get("traceback"),
                                                                                   strip_ansi=True)
    return output


def read_notebook(root: Node) -> Notebook:
    if root.kind != "map":
        raise NotebookError("a notebook must be a JSON object with 'cells'", root.line, root.column)
    nodes = cell_nodes(root)
    if nodes is None:
        raise NotebookError("not a notebook: no 'cells' list (nbformat 4) and no 'worksheets' (nbformat 3)",
                            root.line, root.column)
    version = root.scalar("nbformat")
    cells = []
    malformed = []
    for index, cell_node in enumerate(nodes):
        if cell_node.kind != "map":
            continue
        source = cell_node.get("source") if cell_node.get("source") is not None else cell_node.get("input")
        wrong = _not_text(source)
        if wrong is not None:
            malformed.append((f"cell {index + 1}'s source holds {_described(wrong)}, not text: Jupyter will not open "
                              "this notebook (a source is a string or a list of strings)", wrong.line, wrong.column))
        cell = Cell(index, str(cell_node.scalar("cell_type") or "code"), cell_node, source=text_lines(source))
        outputs = cell_node.get("outputs")
        for output_index, output_node in enumerate(outputs.value if outputs is not None and outputs.kind == "seq" else []):
            if output_node.kind == "map":
                cell.outputs.append(read_output(output_index, output_node))
        cells.append(cell)
    return Notebook(cells, version if isinstance(version, int) else None, malformed)


def _described(piece: Node) -> str:
    """What a node holds, in a message's words (``a number``, ``a mapping``)."""
    if piece.kind == "map":
        return "a mapping"
    if piece.kind == "seq":
        return "a list inside the list"
    if isinstance(piece.value, bool):
        return "true or false"
    return "a number" if isinstance(piece.value, (int, float)) else "null" if piece.value is None else "a value"


def _not_text(source: Node | None) -> Node | None:
    """The part of a cell's source that is not a string (the source itself, or an element of its list)."""
    if source is None:
        return None
    if source.kind == "seq":
        return next((piece for piece in source.value if piece.kind != "scalar" or not isinstance(piece.value, str)),
                    None)
    return None if source.kind == "scalar" and isinstance(source.value, str) else source
