"""What checking one file produced, as it crosses process boundaries and the result cache."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from spikelint.model import Finding

@dataclass(slots=True)
class FileResult:
    """What checking one file produced (picklable: it crosses process boundaries; slotted: a run
    keeps one per file until the report)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0
    sources: dict[str, list[str]] = field(default_factory=dict)  # lines of the files its findings are in
    internal_errors: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)  # other files its checks read
    looked_up: list[str] = field(default_factory=list)  # file names its checks searched the project for
    dependent: bool = False  # not given, checked because it references a given file


def result_to_data(result: FileResult) -> dict[str, Any]:
    from spikelint.pipeline.cache import findings_to_data

    return {"findings": findings_to_data(result.findings), "suppressed": result.suppressed, "sources": result.sources}


def result_from_data(path: str, data: dict[str, Any]) -> FileResult:
    from spikelint.pipeline.cache import findings_from_data

    return FileResult(path, findings_from_data(data["findings"]), data["suppressed"], dict(data["sources"]))
