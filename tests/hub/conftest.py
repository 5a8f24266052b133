"""Helpers for the hub-reference tests: lint a snippet with only SPK105–SPK107 selected."""

from __future__ import annotations

from spikelint.engine import lint_snippet
from spikelint.model import Finding

HUB_RULES = ["SPK105", "SPK106", "SPK107"]
SHA = "7231864981174d9bee8c7687c24c8344414eae6b"


def lint(filename: str, text: str, extra: dict[str, str] | None = None) -> list[Finding]:
    return lint_snippet(filename, text, {"select": HUB_RULES}, extra_files=extra)


def found(filename: str, text: str, extra: dict[str, str] | None = None) -> set[tuple[int, str]]:
    """(line, rule) of every finding."""
    return {(finding.line, finding.rule) for finding in lint(filename, text, extra)}
