"""Every catalog example is a test: the bad one produces its rule and only it, the good one not.

Each example is linted with only its own rule selected (plus any rule its ``config`` selects:
an unused-suppression example needs the suppressed rule to run).  A failure prints what was
expected, what was found, and the example with the findings marked on its lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spikelint.catalog import load_catalog
from spikelint.engine import lint_snippet
from spikelint.model import Finding
from spikelint.model import Rule

CATALOG = load_catalog()
TESTABLE = [rule for rule in CATALOG.values() if rule.examples and rule.examples.get("testable", True)]


@pytest.fixture(autouse=True)
def _team_rules_of_the_example(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An example with ``team_rules`` runs from a folder whose .spikelint/rules holds that rule file."""
    rule = request.node.callspec.params.get("rule") if hasattr(request.node, "callspec") else None
    if rule is not None and rule.examples.get("team_rules"):
        (tmp_path / ".spikelint" / "rules").mkdir(parents=True)
        (tmp_path / ".spikelint" / "rules" / "team.yaml").write_text(rule.examples["team_rules"], encoding="utf-8")
        monkeypatch.chdir(tmp_path)


def example_config(rule: Rule) -> dict[str, Any]:
    """The example's configuration with the rule itself selected."""
    config = dict(rule.examples.get("config") or {})
    also = [selector for selector in config.get("select", []) if selector != rule.id]
    config["select"] = [rule.id, *also]
    return config


def report(rule: Rule, which: str, filename: str, text: str, expectation: str, findings: list[Finding]) -> str:
    """Expected vs found, then the example with each finding marked at its line."""
    found = "\n".join(f"    {f.line}:{f.column} {f.rule} [{f.severity}] {f.message}" for f in findings) or "    (nothing)"
    by_line: dict[int, list[str]] = {}
    for finding in findings:
        by_line.setdefault(finding.line, []).append(finding.rule)
    lines = text.splitlines()
    width = len(str(len(lines)))
    listing = "\n".join(
        f"    {number:>{width}} | {line}" + (f"    <-- {', '.join(by_line[number])}" if number in by_line else "")
        for number, line in enumerate(lines, start=1)
    )
    return (f"{rule.id} {rule.name}: {which} example ({filename})\n"
            f"  expected: {expectation}\n"
            f"  found:\n{found}\n"
            f"  example:\n{listing}")


@pytest.mark.parametrize("rule", TESTABLE, ids=lambda rule: rule.id)
def test_bad_example_produces_only_its_rule(rule: Rule) -> None:
    filename = rule.examples["filename"]
    text = rule.examples["bad"]
    findings = lint_snippet(filename, text, example_config(rule))
    ok = bool(findings) and all(finding.rule == rule.id for finding in findings)
    assert ok, report(rule, "bad", filename, text, f"one or more {rule.id} findings and no other rule", findings)


@pytest.mark.parametrize("rule", TESTABLE, ids=lambda rule: rule.id)
def test_good_example_does_not_produce_its_rule(rule: Rule) -> None:
    filename = rule.examples.get("good_filename", rule.examples["filename"])
    text = rule.examples["good"]
    findings = lint_snippet(filename, text, example_config(rule))
    own = [finding for finding in findings if finding.rule == rule.id]
    assert not own, report(rule, "good", filename, text, f"no {rule.id} finding", findings)
