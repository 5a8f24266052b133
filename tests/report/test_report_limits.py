"""Report limits and gate agreement: SARIF's 25,000-result cap, JUnit failures at --fail-on, GitHub summary."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report import rule_statistics
from spikelint.report.github import render_github_summary
from spikelint.report.junit import render_junit
from spikelint.report.sarif import MAX_RESULTS
from spikelint.report.sarif import render_sarif


def _many(count: int, severity: str, rule: str = "SPK101") -> list:
    return [make_finding(rule_id=rule, path=f"{severity}/f{n // 100}.yaml", line=n % 100 + 1, severity=severity,
                         key=f"{severity}{n}") for n in range(count)]


def test_sarif_is_capped_keeping_the_most_severe_with_a_notification(reference) -> None:
    findings = _many(MAX_RESULTS - 10, "info", "SPK104") + _many(20, "warning", "SPK102") + _many(5, "error")
    document = json.loads(render_sarif(Report(findings, 1), RenderOptions()))
    schema = json.loads((reference / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert list(jsonschema.Draft4Validator(schema).iter_errors(document)) == []
    run = document["runs"][0]
    results = run["results"]
    assert len(results) == MAX_RESULTS
    levels = [result["level"] for result in results]
    assert levels.count("error") == 5 and levels.count("warning") == 20 and levels.count("note") == MAX_RESULTS - 25
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["level"] == "warning" and "15 of 25015 results left out" in notification["message"]["text"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris == sorted(uris)  # still in path order


def test_sarif_below_the_cap_has_no_notification_and_names_its_root() -> None:
    document = json.loads(render_sarif(Report(_many(3, "error"), 1), RenderOptions(root_uri="file:///work/repo/")))
    run = document["runs"][0]
    assert run["invocations"] == [{"executionSuccessful": True}]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///work/repo/"
    assert run["automationDetails"]["id"] == "spikelint/"


def _junit(report: Report, fail_on: str) -> ElementTree.Element:
    return ElementTree.fromstring(render_junit(report, RenderOptions(fail_on=fail_on)).encode("utf-8"))


@pytest.mark.parametrize(("fail_on", "failing"), [("info", 3), ("warning", 2), ("error", 1), ("never", 0)])
def test_junit_failures_only_at_or_above_fail_on(fail_on: str, failing: int) -> None:
    report = Report([make_finding(path="a.yaml", severity="error"),
                     make_finding(rule_id="SPK102", path="a.yaml", severity="warning"),
                     make_finding(rule_id="SPK104", path="b.yaml", severity="info")], 2)
    root = _junit(report, fail_on)
    assert int(root.get("failures")) == failing
    assert len(root.findall(".//failure")) == failing
    assert len(root.findall(".//system-out")) == 3 - failing  # still listed, as output
    assert sum(int(suite.get("failures")) for suite in root.findall("testsuite")) == failing


def test_rule_statistics_sorted_by_count() -> None:
    findings = _many(3, "warning", "SPK102") + _many(1, "error") + _many(3, "info", "SPK104")
    assert [(item.rule, item.count) for item in rule_statistics(findings)] == [
        ("SPK102", 3), ("SPK104", 3), ("SPK101", 1)]


def test_github_summary_notice_and_markdown() -> None:
    notice, markdown = render_github_summary(Report(_many(2, "error"), 4))
    assert notice == "::notice title=spikelint::2 errors, 0 warnings, 0 info in 1 file (4 files checked)"
    assert "| SPK101 |" in markdown and "--ignore" in markdown


def test_github_format_appends_the_step_summary(tmp_path: Path, monkeypatch, capsys) -> None:
    from spikelint.cli import main

    (tmp_path / "values.yaml").write_text("image: busybox:latest\n", encoding="utf-8")
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "--format", "github", "values.yaml"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("::error file=values.yaml,") and out[-1].startswith("::notice title=spikelint::1 error")
    assert "| SPK101 |" in summary.read_text(encoding="utf-8")
