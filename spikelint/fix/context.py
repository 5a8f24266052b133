"""What a fixer is given: the file's text and kind, the findings to fix, the options."""

from __future__ import annotations

from typing import Callable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence
from typing import Union

from spikelint.fix.edits import Fix
from spikelint.fix.edits import Refusal
from spikelint.fix.pins import Pins
from spikelint.model import Finding


class FixContext(NamedTuple):
    path: str
    kind: str  # a FileKind value
    text: str
    pins: Pins


Outcome = Union[Fix, Refusal]
Fixer = Callable[[FixContext, Sequence[Finding]], Iterator[Outcome]]


def refuse(finding: Finding, reason: str) -> Refusal:
    return Refusal(finding.fingerprint, finding.rule, reason)
