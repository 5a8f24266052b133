"""Schemas are read only from the project tree or the shipped schemas; anything else is a finding."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spikelint.config import config_from_mapping
from spikelint.engine import check_paths
from spikelint.schemas import load_schema
from spikelint.schemas import outside_reason

RUN = {"input": "a.jsonl", "batch_size": 4, "device": "cuda", "schema_version": 1}
SECRET_CONST = "outside-value-9f3c"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    schema = tmp_path / "outside" / "schema.json"
    schema.parent.mkdir()
    schema.write_text(json.dumps({"type": "object", "properties": {"batch_size": {"const": SECRET_CONST}}}),
                      encoding="utf-8")
    return schema


def _check(project: Path, config: dict[str, object] | None = None) -> list[tuple[str, int, str, str, str]]:
    settings = config_from_mapping({"select": ["SPK601"], **(config or {})}, source="test", root=str(project))
    result = check_paths([str(project)], settings, cwd=project, jobs=1)
    assert not result.internal_errors
    return [(Path(f.path).name, f.line, f.rule, f.severity, f.message) for f in result.report.findings]


def test_dollar_schema_outside_the_tree_is_reported_not_read(tmp_path: Path, outside: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "run.json").write_text(json.dumps({"$schema": str(outside), **RUN}), encoding="utf-8")
    (project / "up.json").write_text(json.dumps({"$schema": "../outside/schema.json", **RUN}), encoding="utf-8")
    findings = _check(project)
    assert [(name, line, rule, severity) for name, line, rule, severity, _ in findings] == [
        ("run.json", 1, "SPK601", "warning"), ("up.json", 1, "SPK601", "warning")]
    assert "absolute path outside the project" in findings[0][4]
    assert "resolves outside the project" in findings[1][4]
    assert all(SECRET_CONST not in message for *_, message in findings)


def test_modeline_and_configured_schemas_outside_the_tree(tmp_path: Path, outside: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "run.yaml").write_text("# yaml-language-server: $schema=/proc/self/environ\n"
                                      "input: a\nbatch_size: 4\ndevice: cuda\nschema_version: 1\n", encoding="utf-8")
    (project / "mapped.yaml").write_text("input: a\nbatch_size: 4\n", encoding="utf-8")
    findings = _check(project, {"schemas": {"mapped.yaml": str(outside)}})
    assert [(name, rule, severity) for name, _, rule, severity, _ in findings] == [
        ("mapped.yaml", "SPK601", "error"), ("run.yaml", "SPK601", "warning")]
    assert all("schemas are read only from inside the project" in message for *_, message in findings)


@pytest.mark.skipif(os.name == "nt", reason="symbolic links")
def test_a_link_out_of_the_tree_is_not_followed(tmp_path: Path, outside: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "schema.json").symlink_to(outside)
    (project / "run.json").write_text(json.dumps({"$schema": "./schema.json", **RUN}), encoding="utf-8")
    findings = _check(project)
    assert SECRET_CONST not in repr(findings)


def test_schemas_inside_the_tree_are_still_used(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "schemas").mkdir(parents=True)
    (project / "schemas" / "run.schema.json").write_text(json.dumps(
        {"type": "object", "properties": {"batch_size": {"type": "integer", "maximum": 2}}}), encoding="utf-8")
    (project / "conf").mkdir()
    (project / "conf" / "run.json").write_text(json.dumps({"$schema": "../schemas/run.schema.json", **RUN}),
                                               encoding="utf-8")
    findings = _check(project)
    assert [(name, rule) for name, _, rule, *_ in findings] == [("run.json", "SPK601")]
    assert "batch_size" in findings[0][4]


def test_an_unusable_schema_of_a_run_config_is_reported(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "broken.schema.json").write_text("{not json", encoding="utf-8")
    (project / "run.json").write_text(json.dumps({"$schema": "./broken.schema.json", **RUN}), encoding="utf-8")
    findings = _check(project)
    assert [(name, rule, severity) for name, _, rule, severity, _ in findings] == [("run.json", "SPK601", "warning")]


def test_shipped_names_never_leave_the_shipped_folder(tmp_path: Path) -> None:
    from spikelint.schemas import SchemaError

    with pytest.raises(SchemaError):
        load_schema("../../../../../../etc/hostname-not-a-schema")
    assert outside_reason("a.json", str(tmp_path / "a.json"), str(tmp_path)) is None
    assert outside_reason("/etc/passwd", "/etc/passwd", str(tmp_path)) is not None
