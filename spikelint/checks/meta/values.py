"""SPK001 at a value no consumer can hold (``.inf``, ``NaN``, ``1e400``, a 400-digit integer).

The readers keep such a value as its text (tagged, see :mod:`spikelint.documents.numbers`),
so the workload rules still run on the file; this check says where the value is in an API
object (``apiVersion`` and ``kind``), whose server rejects it.  Python writes ``Infinity``
into data files and Hugging Face tokenizer configs hold ``1000000000000000019884624838656``:
for Python those are valid values, so other files are not reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Iterator

from spikelint.checks.registry import check
from spikelint.documents.numbers import beyond_int64
from spikelint.documents.numbers import describe
from spikelint.documents.numbers import is_bad_number
from spikelint.model import Problem
from spikelint.model import walk

if TYPE_CHECKING:
    from spikelint.checks.registry import CheckContext
    from spikelint.model import Document

FIX = "write a finite number within range (the value was read as text, so the file's other rules still ran)"


@check("SPK001", scope="document")
def unrepresentable_numbers(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    for root in document.trees:
        if root.kind != "map" or "apiVersion" not in root.value or "kind" not in root.value:
            continue
        for _, node in walk(root):
            if is_bad_number(node) or beyond_int64(node):
                reason = describe(node) if is_bad_number(node) else f"{node.value} is beyond a 64-bit integer"
                message = f"invalid number: {reason}: {FIX}"
                yield Problem("SPK001", node.line, node.column, message, end_line=node.end_line,
                              end_column=node.end_column, key=f"number:{str(node.value)[:40]}")
