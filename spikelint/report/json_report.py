"""The machine format: a public, versioned shape described by ``schemas/report.v1.schema.json``.

Scripts and dashboards depend on this shape, so it is built field by field here (not by
dumping dataclasses) and any change to it is a new ``version``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from typing import Any

from spikelint.report import ordered
from spikelint.report import severity_counts
from spikelint.report import tool_version

if TYPE_CHECKING:
    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.report import RenderOptions

FORMAT_VERSION = 1


def render_json(report: Report, options: RenderOptions) -> str:
    """The report as version-1 JSON; ``summary.files`` is the number of files checked."""
    counts = severity_counts(report.findings)
    document = {
        "version": FORMAT_VERSION,
        "tool": {"name": "spikelint", "version": tool_version(report)},
        "findings": [_finding(finding) for finding in ordered(report.findings)],
        "summary": {
            "files": report.files_checked,
            "errors": counts["error"],
            "warnings": counts["warning"],
            "info": counts["info"],
            "suppressed": report.suppressed,
            "baselined": report.baselined,
        },
    }
    # ASCII-only output: no encoding trouble on any console or CI log, whatever the paths hold.
    return json.dumps(document, indent=2) + "\n"


def _finding(finding: Finding) -> dict[str, Any]:
    data = _fields(finding)
    if finding.commit is not None:  # ``history``: where in Git it was added
        data.update(commit=finding.commit, date=finding.date)
    return data


def _fields(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "name": finding.name,
        "severity": finding.severity,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "message": finding.message,
        "fingerprint": finding.fingerprint,
    }
