"""SPK207: a notebook's outputs and execution counts cleared, read and written with nbformat
(in the notebook's own indentation, so the cell sources' lines stay as they were).

Clearing the outputs also clears the secrets they showed (SPK204): that is the point of the fix,
not a side effect the proof should refuse — but the secret is still in the Git history, so the
fix says, per secret, that it must be rotated."""

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
from spikelint.util.lazyre import lazy_regex

INDENT = re.compile(r"^\{\r?\n( +)\"", re.MULTILINE)
# SPK204's message: "notebook output of cell 3 (stream) shows ghp_… (GitHub token): rotate it, …"
SHOWN_SECRET = lazy_regex(r"^notebook output(?P<where> of cell \d+ \([\w-]+\))? shows (?P<shown>.+?)(?::| —) rotate it")


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
              (Edit(0, len(context.text), written),), "cleared the outputs and execution counts of every code cell",
              clears=("SPK204",))


def exposed_secret_note(path: str, finding: Finding) -> str:
    """What to do about a secret an output showed, with its type and at most its first four
    characters (the finding's own redaction): clearing the output does not unpublish it."""
    found = SHOWN_SECRET.match(finding.message)
    shown = f"output{found.group('where') or ''} showed {found.group('shown')}" if found else "output held a secret"
    return (f"{path}:{finding.line}: {finding.rule}: the cleared {shown}: rotate it — it stays in the Git history "
            f"and in every clone")
