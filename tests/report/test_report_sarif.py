from __future__ import annotations

import json
import re

import jsonschema
import pytest
from report_samples import RULES
from report_samples import SECRET
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report.sarif import render_sarif

URI = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]+$")


def sarif(report: Report, **options: object) -> dict:
    return json.loads(render_sarif(report, RenderOptions(**options)))  # type: ignore[arg-type]


@pytest.fixture
def sarif_validator(reference):
    schema = json.loads((reference / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def test_validates_against_the_official_schema(sarif_validator, sample_report, empty_report):
    for report in (sample_report, empty_report):
        errors = list(sarif_validator.iter_errors(sarif(report)))
        assert errors == []


def test_odd_findings_still_validate(sarif_validator):
    findings = [
        make_finding(path="/abs/x.yaml", line=1, column=5, end_line=1, end_column=5),
        make_finding(rule_id="SPK999", name="future-rule", path="y z.yaml", line=2, column=1, end_line=4, end_column=1),
        make_finding(path="C:\\work\\w.yaml", message=""),
    ]
    assert list(sarif_validator.iter_errors(sarif(Report(findings, 3)))) == []


def test_driver_and_rules(sample_report):
    run = sarif(sample_report)["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "spikelint"
    assert driver["version"] == driver["semanticVersion"] == "1.2.3"
    assert driver["informationUri"].startswith("https://")
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == sorted(rule.id for rule in RULES)  # every selected rule, even SPK703 without results
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert "how to fix" in rule["help"]["text"] and "how to fix" in rule["help"]["markdown"]
        assert rule["helpUri"].endswith(rule["id"])
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    secret = next(rule for rule in driver["rules"] if rule["id"] == "SPK202")
    assert "security" in secret["properties"]["tags"]
    assert float(secret["properties"]["security-severity"]) > 9.0
    image = next(rule for rule in driver["rules"] if rule["id"] == "SPK101")
    assert "security" not in image["properties"]["tags"]
    assert "security-severity" not in image["properties"]


def test_results(sample_report):
    run = sarif(sample_report)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == len(sample_report.findings)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"]
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert URI.match(artifact["uri"]) and not artifact["uri"].startswith("/")
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        if "endColumn" in region and region.get("endLine", region["startLine"]) == region["startLine"]:
            assert region["endColumn"] > region["startColumn"]
        assert re.fullmatch(r"[0-9a-f]{32}", result["partialFingerprints"]["spikelint/v1"])
    levels = {result["ruleId"]: result["level"] for result in run["results"]}
    assert levels["SPK702"] == "note" and levels["SPK102"] == "warning" and levels["SPK101"] == "error"


def test_uris_are_encoded_relative_and_prefixed(sample_report):
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif(sample_report)["runs"][0]["results"]}
    assert "deploy/train%20job.yaml" in uris
    assert "donn%C3%A9es/%E4%BD%9C%E4%B8%9A.yaml" in uris
    prefixed = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in sarif(sample_report, path_prefix="sub dir/")["runs"][0]["results"]}
    assert "sub%20dir/deploy/train%20job.yaml" in prefixed
    odd = sarif(Report([make_finding(path="/abs/a#b%c.yaml"), make_finding(path="./x/../y.yaml")], 2))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in odd["runs"][0]["results"]]
    assert sorted(uris) == ["abs/a%23b%25c.yaml", "y.yaml"]


def test_end_column_only_after_start_column():
    findings = [
        make_finding(line=1, column=5, end_line=1, end_column=5),
        make_finding(line=2, column=5, end_line=1, end_column=9),
        make_finding(line=3, column=5, end_line=4, end_column=2),
    ]
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in sarif(Report(findings, 1))["runs"][0]["results"]]
    assert regions[0] == {"startLine": 1, "startColumn": 5}
    assert regions[1] == {"startLine": 2, "startColumn": 5}
    assert regions[2] == {"startLine": 3, "startColumn": 5, "endLine": 4, "endColumn": 2}


def test_rule_outside_the_catalog_gets_a_descriptor():
    run = sarif(Report([make_finding(rule_id="SPK001", name="unparseable-file")], 1))["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["SPK001"]
    assert run["results"][0]["ruleIndex"] == 0


def test_empty_report_keeps_results_array(empty_report):
    run = sarif(empty_report)["runs"][0]
    assert run["results"] == []
    assert len(run["tool"]["driver"]["rules"]) == len(RULES)


def test_secret_never_in_output(sample_report):
    assert SECRET not in render_sarif(sample_report, RenderOptions())


def test_single_run_and_schema_header(sample_report):
    document = sarif(sample_report)
    assert document["version"] == "2.1.0"
    assert document["$schema"].startswith("https://")
    assert len(document["runs"]) == 1
