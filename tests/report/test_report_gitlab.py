from __future__ import annotations

import json
from dataclasses import replace

import jsonschema
from report_samples import SECRET
from report_samples import SPACED
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report.gitlab import render_gitlab


def issues(report: Report, **options: object) -> list[dict]:
    return json.loads(render_gitlab(report, RenderOptions(**options)))  # type: ignore[arg-type]


def test_validates_against_the_reference_schema(reference, sample_report, empty_report):
    schema = json.loads((reference / "gitlab-codequality.schema.json").read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    for report in (sample_report, empty_report):
        assert list(validator_class(schema).iter_errors(issues(report))) == []


def test_severity_mapping(sample_report):
    by_rule = {issue["check_name"]: issue["severity"] for issue in issues(sample_report)}
    assert by_rule == {
        "SPK101": "critical",
        "SPK102": "major",
        "SPK202": "blocker",
        "SPK303": "major",
        "SPK501": "critical",
        "SPK702": "info",
    }


def test_fields(sample_report):
    first = issues(sample_report)[0]
    assert first["location"] == {"path": SPACED, "lines": {"begin": 3}}
    assert first["description"].startswith("SPK102 unpinned-image: ")
    assert first["type"] == "issue"
    prefixed = issues(sample_report, path_prefix="ml/")[0]
    assert prefixed["location"]["path"] == f"ml/{SPACED}"


def test_fingerprints_unique_even_for_repeats(sample_report):
    prints = [issue["fingerprint"] for issue in issues(sample_report)]
    assert len(prints) == len(set(prints)) == len(sample_report.findings)
    twin = make_finding(message="same")
    repeated = Report([twin, twin, replace(twin, fingerprint="")], 1)
    prints = [issue["fingerprint"] for issue in issues(repeated)]
    assert len(set(prints)) == 3 and all(prints)
    assert prints[0] == twin.fingerprint or prints[1] == twin.fingerprint


def test_fingerprints_survive_line_moves(sample_report):
    moved = Report([replace(f, line=f.line + 10) for f in sample_report.findings], 5)
    assert sorted(i["fingerprint"] for i in issues(moved)) == sorted(i["fingerprint"] for i in issues(sample_report))


def test_paths_never_absolute():
    paths = [issue["location"]["path"] for issue in issues(Report([make_finding(path="/tmp/x.yaml")], 1))]
    assert paths == ["tmp/x.yaml"]


def test_secret_never_in_output(sample_report):
    assert SECRET not in render_gitlab(sample_report, RenderOptions())


def test_empty_report_is_an_empty_array(empty_report):
    assert issues(empty_report) == []
