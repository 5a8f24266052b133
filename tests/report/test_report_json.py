from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from report_samples import REPO
from report_samples import SPACED
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report.json_report import render_json

SCHEMA = json.loads((REPO / "schemas" / "report.v1.schema.json").read_text(encoding="utf-8"))


def validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def test_validates_against_the_shipped_schema(sample_report, empty_report):
    for report in (sample_report, empty_report):
        validator().validate(json.loads(render_json(report, RenderOptions())))


def test_public_shape(sample_report):
    document = json.loads(render_json(sample_report, RenderOptions()))
    assert list(document) == ["version", "tool", "findings", "summary"]
    assert document["version"] == 1
    assert document["tool"] == {"name": "spikelint", "version": "1.2.3"}
    assert document["summary"] == {"files": 5, "errors": 3, "warnings": 3, "info": 1, "suppressed": 2, "baselined": 1}
    first = document["findings"][0]
    assert list(first) == ["rule", "name", "severity", "path", "line", "column", "end_line", "end_column", "message", "fingerprint"]
    assert (first["path"], first["line"], first["column"]) == (SPACED, 3, 14)
    positions = [(f["path"], f["line"], f["column"]) for f in document["findings"]]
    assert positions == sorted(positions)


def test_unknown_end_is_null(sample_report):
    document = json.loads(render_json(sample_report, RenderOptions()))
    ttl = next(f for f in document["findings"] if f["rule"] == "SPK702")
    assert ttl["end_line"] is None and ttl["end_column"] is None


def test_output_is_ascii_and_round_trips_unicode():
    finding = make_finding(path="données/作业.yaml", message="naïve ✓")
    text = render_json(Report([finding], 1), RenderOptions())
    assert text.isascii()
    assert json.loads(text)["findings"][0]["path"] == "données/作业.yaml"


def test_tool_version_defaults_to_the_package():
    from spikelint import __version__

    assert json.loads(render_json(Report([], 0), RenderOptions()))["tool"]["version"] == __version__


@pytest.mark.parametrize("path, value", [
    (("findings", 0, "severity"), "fatal"),
    (("findings", 0, "rule"), "SPK10"),
    (("findings", 0, "line"), 0),
    (("findings", 0, "fingerprint"), "not-hex"),
    (("summary", "files"), -1),
    (("version",), 2),
])
def test_schema_is_precise(sample_report, path, value):
    document = json.loads(render_json(sample_report, RenderOptions()))
    broken = copy.deepcopy(document)
    target = broken
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    assert not validator().is_valid(broken)


def test_schema_requires_every_key(sample_report):
    document = json.loads(render_json(sample_report, RenderOptions()))
    for key in list(document["findings"][0]):
        broken = copy.deepcopy(document)
        del broken["findings"][0][key]
        assert not validator().is_valid(broken), key
    extra = copy.deepcopy(document)
    extra["findings"][0]["snippet"] = "x"
    assert not validator().is_valid(extra)


def test_schema_is_shipped_in_schemas_folder():
    assert Path(REPO / "schemas" / "report.v1.schema.json").is_file()
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
