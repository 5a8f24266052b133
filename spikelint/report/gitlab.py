"""GitLab Code Quality JSON (the Code Climate subset GitLab reads) for merge-request widgets.

GitLab matches findings between pipelines by ``fingerprint`` and collapses entries that
share one, so every entry gets a distinct fingerprint even if the engine handed over a
duplicate or an empty one.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from typing import Any

from spikelint.report import is_secret_rule
from spikelint.report import on_repository_file
from spikelint.report import ordered
from spikelint.report import repo_path

if TYPE_CHECKING:
    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.report import RenderOptions

SEVERITIES = {"error": "critical", "warning": "major", "info": "info"}
SECRET_ERROR = "blocker"  # a committed credential is the one thing that must block a merge


def render_gitlab(report: Report, options: RenderOptions) -> str:
    """A JSON array of Code Quality issues, one per finding, in path order."""
    issues: list[dict[str, Any]] = []
    used: set[str] = set()
    for finding in map(on_repository_file, ordered(report.findings)):
        issues.append(_issue(finding, _unique_fingerprint(finding, used), options.path_prefix))
    return json.dumps(issues, indent=2) + "\n"


def code_quality_severity(finding: Finding) -> str:
    if finding.severity == "error" and is_secret_rule(finding.rule):
        return SECRET_ERROR
    return SEVERITIES.get(finding.severity, "major")


def _unique_fingerprint(finding: Finding, used: set[str]) -> str:
    """The finding's own fingerprint, or a derived one when it is empty or already taken."""
    import hashlib

    candidate = finding.fingerprint
    salt = 0
    while not candidate or candidate in used:
        salt += 1
        material = "\0".join((finding.fingerprint, finding.rule, finding.path, finding.message, str(salt)))
        candidate = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    used.add(candidate)
    return candidate


def _issue(finding: Finding, fingerprint: str, prefix: str) -> dict[str, Any]:
    lines: dict[str, int] = {"begin": max(finding.line, 1)}
    if finding.end_line is not None and finding.end_line > lines["begin"]:
        lines["end"] = finding.end_line
    return {
        "type": "issue",
        "description": f"{finding.rule} {finding.name}: {finding.message}",
        "check_name": finding.rule,
        "fingerprint": fingerprint,
        "severity": code_quality_severity(finding),
        "categories": ["Security"] if is_secret_rule(finding.rule) else ["Bug Risk"],
        "location": {"path": repo_path(finding.path, prefix) or finding.path, "lines": lines},
    }
