"""SPK207: a notebook's outputs and execution counts cleared, read and written with nbformat
(in the notebook's own indentation, so the cell sources' lines stay as they were)."""

from __future__ import annotations

import re
from typing import Iterator
from typing import Sequence

from spikelint.fix.context import FixContext
from spikelint.fix.context import Outcome
from spikelint.fix.context import refuse
from spikelint.fix.edits import Edit
from spikelint.fix.edits import Fix
from spikelint.model import Finding

INDENT = re.compile(r"^\{\r?\n( +)\"", re.MULTILINE)


def cleared_notebook(text: str) -> str:
    """``text`` with every code cell's outputs and execution count cleared; raises ValueError when
    nbformat cannot read or validate it.  nbformat reads and validates; the JSON is written back
    in the notebook's own key order and indentation (nbformat's writer would re-indent it)."""
    import json
    import warnings

    import nbformat

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's notes on old notebooks are not the user's problem here
            nbformat.validate(nbformat.reads(text, as_version=nbformat.NO_CONVERT))
        data = json.loads(text)
    except Exception as error:  # noqa: BLE001 - nbformat raises many kinds for bad input
        raise ValueError(f"nbformat cannot read it: {error}") from None
    for cell in data.get("cells", []):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    found = INDENT.match(text)
    escaped = text.isascii() and "\\u" in text  # written with \u escapes: keep them
    written = json.dumps(data, indent=len(found.group(1)) if found else 1, ensure_ascii=escaped)
    if "\r\n" in text:
        written = written.replace("\n", "\r\n")
    return written + text[len(text.rstrip()):]


def notebook_outputs(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    if not findings:
        return
    try:
        written = cleared_notebook(context.text)
    except ValueError as error:
        for finding in findings:
            yield refuse(finding, str(error))
        return
    yield Fix("SPK207", tuple(finding.fingerprint for finding in findings),
              (Edit(0, len(context.text), written),), "cleared the outputs and execution counts of every code cell")
