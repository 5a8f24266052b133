"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Written to validate against the OASIS schema and to pass GitHub's upload checks: relative
URIs under ``%SRCROOT%``, ``startLine`` >= 1, ``endColumn`` only when it is after
``startColumn``, an always-present ``results`` array, a rule descriptor for every selected
rule (``ruleIndex`` points into it) and our own ``partialFingerprints`` so alerts are not
duplicated when lines move.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from typing import Any
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.report import family_concern
from spikelint.report import is_secret_rule
from spikelint.report import on_repository_file
from spikelint.report import ordered
from spikelint.report import repo_path
from spikelint.report import tool_version

if TYPE_CHECKING:
    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.model import Rule
    from spikelint.report import RenderOptions

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://spikelint.dev"
FINGERPRINT_KEY = "spikelint/v1"
SRCROOT = "%SRCROOT%"
SEMVER = lazy_regex(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
MAX_RESULTS = 25_000  # GitHub code scanning rejects a run with more results than this
AUTOMATION_ID = "spikelint/"  # the code scanning category, so other SARIF tools' alerts stay apart
# GitHub ranks security alerts by this score: > 9.0 critical, 7.0-8.9 high, 4.0-6.9 medium.
SECURITY_SEVERITY = {"error": "9.5", "warning": "5.5", "info": "2.0"}


def render_sarif(report: Report, options: RenderOptions) -> str:
    """One run whose ``tool.driver.rules`` lists every selected rule, results in path order.

    Above :data:`MAX_RESULTS` findings the most severe are kept (errors first) and the run
    carries a tool notification saying how many were left out, so the upload is not rejected
    and nobody mistakes a capped report for the whole one.
    """
    findings, omitted = capped(report.findings, MAX_RESULTS)
    descriptors, index = _rule_descriptors(report.rules, findings)
    version = tool_version(report)
    driver: dict[str, Any] = {"name": "spikelint", "version": version}
    if SEMVER.fullmatch(version):
        driver["semanticVersion"] = version
    driver["informationUri"] = INFORMATION_URI
    driver["rules"] = descriptors
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if omitted:
        invocation["toolExecutionNotifications"] = [{
            "level": "warning",
            "descriptor": {"id": "results-capped"},
            "message": {"text": f"{omitted} of {len(report.findings)} results left out: code scanning accepts at "
                                f"most {MAX_RESULTS:,} per run, so the most severe {MAX_RESULTS:,} are kept "
                                f"(errors first); --format json lists them all"},
        }]
    root: dict[str, Any] = {"description": {"text": "The folder result paths are relative to (in Git, the repository root)"}}
    if options.root_uri:
        root = {"uri": options.root_uri, **root}
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "automationDetails": {"id": AUTOMATION_ID},
            "invocations": [invocation],
            "originalUriBaseIds": {SRCROOT: root},
            "columnKind": "unicodeCodePoints",
            "results": [_result(on_repository_file(finding), index[finding.rule], options.path_prefix)
                        for finding in findings],
        }],
    }
    return json.dumps(document, indent=2) + "\n"


def capped(findings: Sequence[Finding], limit: int) -> tuple[list[Finding], int]:
    """At most ``limit`` findings, the most severe first, back in path order; and how many were cut."""
    if len(findings) <= limit:
        return ordered(findings), 0
    rank = {"error": 0, "warning": 1, "info": 2}
    kept = sorted(findings, key=lambda finding: (rank.get(finding.severity, 1), finding.sort_key()))[:limit]
    return ordered(kept), len(findings) - limit


def help_uri(rule_id: str) -> str:
    return f"{INFORMATION_URI}/rules/{rule_id}"


def _rule_descriptors(rules: Sequence[Rule], findings: Sequence[Finding]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Descriptors sorted by id; a finding whose rule is not in the catalog still gets one."""
    by_id: dict[str, dict[str, Any]] = {}
    for rule in rules:
        by_id[rule.id] = _descriptor(rule.id, rule.name, rule.severity, rule.summary, rule.rationale,
                                     rule.remediation, rule.concern)
    for finding in findings:
        if finding.rule not in by_id:
            by_id[finding.rule] = _descriptor(finding.rule, finding.name, finding.severity, "", "", "", "")
    ordered_ids = sorted(by_id)
    return [by_id[rule_id] for rule_id in ordered_ids], {rule_id: n for n, rule_id in enumerate(ordered_ids)}


def _descriptor(rule_id: str, name: str, severity: str, summary: str, rationale: str,
                remediation: str, concern: str) -> dict[str, Any]:
    short = summary.strip() or name or rule_id
    full = rationale.strip() or short
    uri = help_uri(rule_id) if rule_id.startswith("SPK") else None  # a team's rule has no page of ours
    text_parts = [short]
    markdown_parts = [f"**{rule_id} {name}**: {short}"]
    if rationale.strip():
        text_parts.append(rationale.strip())
        markdown_parts.append(rationale.strip())
    if remediation.strip():
        text_parts.append(f"Fix: {remediation.strip()}")
        markdown_parts.append(f"**Fix:** {remediation.strip()}")
    text_parts.append(f"Details: spikelint explain {rule_id}" + (f" or {uri}" if uri else ""))
    markdown_parts.append(f"Details: `spikelint explain {rule_id}`" + (f" or [{uri}]({uri})" if uri else ""))
    tags = ["spikelint", concern or family_concern(rule_id)]
    properties: dict[str, Any] = {"tags": tags}
    if is_secret_rule(rule_id):
        tags.append("security")
        properties["security-severity"] = SECURITY_SEVERITY.get(severity, "5.5")
    else:
        tags.append("reliability")
    descriptor = {
        "id": rule_id,
        "name": name or rule_id,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": "\n\n".join(text_parts), "markdown": "\n\n".join(markdown_parts)},
        "helpUri": uri,
        "defaultConfiguration": {"level": LEVELS.get(severity, "warning")},
        "properties": properties,
    }
    if uri is None:
        del descriptor["helpUri"]
    return descriptor


def _result(finding: Finding, rule_index: int, prefix: str) -> dict[str, Any]:
    from urllib.parse import quote

    line = max(finding.line, 1)
    column = max(finding.column, 1)
    region: dict[str, Any] = {"startLine": line, "startColumn": column}
    end_line = finding.end_line
    if end_line is not None and end_line >= line:
        end_column = finding.end_column
        if end_line > line:
            region["endLine"] = end_line
            if end_column is not None and end_column >= 1:
                region["endColumn"] = end_column
        elif end_column is not None and end_column > column:
            region["endLine"] = end_line
            region["endColumn"] = end_column
    uri = quote(repo_path(finding.path, prefix), safe="/")
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS.get(finding.severity, "warning"),
        "message": {"text": finding.message or finding.name or finding.rule},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": uri, "uriBaseId": SRCROOT},
                "region": region,
            },
        }],
    }
    if finding.fingerprint:
        result["partialFingerprints"] = {FINGERPRINT_KEY: finding.fingerprint}
    if finding.commit is not None:  # ``history``: the file as that commit has it
        result["properties"] = {"commit": finding.commit, "date": finding.date}
        result["locations"][0]["physicalLocation"]["artifactLocation"]["properties"] = {"commit": finding.commit}
    return result
