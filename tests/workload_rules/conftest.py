"""Helpers for the workload-rule tests: lint a snippet with only these rules selected."""

from __future__ import annotations

from typing import Any

from spikelint.engine import lint_snippet
from spikelint.model import Finding

WORKLOAD_RULES = ["SPK301", "SPK302", "SPK303", "SPK401", "SPK402", "SPK403", "SPK404", "SPK405", "SPK406",
                  "SPK407", "SPK503", "SPK504", "SPK603"]


def lint(filename: str, text: str, extra: dict[str, str] | None = None, **config: Any) -> list[Finding]:
    settings: dict[str, Any] = {"select": WORKLOAD_RULES}
    settings.update(config)
    return lint_snippet(filename, text, settings, extra_files=extra)


def pairs(findings: list[Finding]) -> set[tuple[int, str]]:
    return {(finding.line, finding.rule) for finding in findings}


def rules(findings: list[Finding]) -> list[str]:
    return sorted(finding.rule for finding in findings)
