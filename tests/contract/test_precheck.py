"""``spikelint precheck``: the steps of run-contract.md, from both sides."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from typing import Callable

import pytest

from tests.contract.conftest import HF_TOKEN
from tests.contract.conftest import Outcome
from tests.contract.conftest import contract_config
from tests.contract.conftest import inputs
from tests.contract.conftest import write_json

Run = Callable[..., Outcome]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return inputs(tmp_path, ["a", "b"])


def errors_of(outcome: Outcome) -> list[dict[str, Any]]:
    document = outcome.json()
    assert document["status"] == "configuration_invalid"
    return document["errors"]


# --------------------------------------------------------------------------- success


def test_valid_config_prints_the_validated_object(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "runs" / "r1"))
    assert outcome.code == 0, outcome.err
    assert outcome.json() == {
        "status": "configuration_validated",
        "input": str(data),
        "run_dir": str(tmp_path / "runs" / "r1"),
        "device_requested": "cuda",
        "batch_size": 4,
        "schema_version": 1,
    }
    assert outcome.err == ""
    assert not (tmp_path / "runs").exists(), "without --init nothing is created"


def test_yaml_config_and_relative_paths_resolve_from_the_config_folder(run_precheck: Run, tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "data").mkdir()
    source = inputs(tmp_path / "data", ["x"])
    (tmp_path / "configs" / "run.yaml").write_text(
        "schema_version: 1\ninput: ../data/prompts.jsonl\nbatch_size: 1\ndevice: cpu\n", encoding="utf-8")
    outcome = run_precheck("--config", "configs/run.yaml", "--run-dir", "runs/a", "--format", "json")
    assert outcome.code == 0, outcome.out + outcome.err
    result = outcome.json()
    assert result["input"] == str(source)
    assert result["device_requested"] == "cpu"
    assert result["run_dir"] == str(tmp_path / "runs" / "a")


def test_absolute_input_path(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    config = contract_config(tmp_path / "elsewhere", input=str(data))
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 0
    assert outcome.json()["input"] == str(data)


# --------------------------------------------------------------------------- the seed contract's rejections


@pytest.mark.parametrize("overrides, parameter, fragment", [
    ({"lr": 0.1}, "lr", "unknown key 'lr'"),
    ({"model": "llama", "seed": 3}, "model", "unknown key 'model'"),
    ({"device": ...}, "device", "missing required key 'device'"),
    ({"input": ...}, "input", "missing required key 'input'"),
    ({"batch_size": ...}, "batch_size", "missing required key 'batch_size'"),
    ({"schema_version": ...}, "schema_version", "missing required key 'schema_version'"),
    ({"schema_version": "1"}, "schema_version", "schema_version must be the integer 1, got '1' (a string)"),
    ({"schema_version": 1.0}, "schema_version", "schema_version must be the integer 1"),
    ({"schema_version": True}, "schema_version", "schema_version must be the integer 1, got true"),
    ({"schema_version": 0}, "schema_version", "known contract version (1), got 0"),
    ({"batch_size": 0}, "batch_size", "batch_size must be an integer ≥ 1, got 0"),
    ({"batch_size": -3}, "batch_size", "batch_size must be an integer ≥ 1, got -3"),
    ({"batch_size": "4"}, "batch_size", "batch_size must be an integer ≥ 1, got '4' (a string)"),
    ({"batch_size": 4.0}, "batch_size", "batch_size must be an integer ≥ 1, got 4.0"),
    ({"batch_size": 2.5}, "batch_size", "batch_size must be an integer ≥ 1"),
    ({"batch_size": True}, "batch_size", "batch_size must be an integer ≥ 1, got true (a boolean)"),
    ({"batch_size": None}, "batch_size", "batch_size must be an integer ≥ 1, got null"),
    ({"device": "gpu"}, "device", "device must be cpu or cuda, got 'gpu'"),
    ({"device": "CUDA"}, "device", "device must be cpu or cuda"),
    ({"device": "cuda:0"}, "device", "device must be cpu or cuda"),
    ({"device": ["cuda"]}, "device", "device must be cpu or cuda, got a list"),
    ({"input": ""}, "input", "input must be a non-empty string"),
    ({"input": "   "}, "input", "input must be a non-empty string"),
    ({"input": 7}, "input", "input must be a non-empty string, got 7"),
])
def test_schema_rejections_name_the_parameter(run_precheck: Run, tmp_path: Path, data: Path,
                                              overrides: dict[str, Any], parameter: str, fragment: str) -> None:
    config = contract_config(tmp_path, **overrides)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    errors = errors_of(outcome)
    assert any(error["parameter"] == parameter and fragment in error["message"] for error in errors), errors
    assert outcome.json()["step"] == "schema"
    assert not (tmp_path / "r").exists()


def test_every_violation_is_listed_with_its_line(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text('# launch\nschema_version: "1"\ninput: ""\nbatch_size: "4"\ndevice: gpu\nlr: 0.1\n',
                      encoding="utf-8")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    found = [(error["line"], error["parameter"]) for error in errors_of(outcome)]
    assert found == [(2, "schema_version"), (3, "input"), (4, "batch_size"), (5, "device"), (6, "lr")]


def test_text_failures_go_to_stderr_with_file_and_line(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path, batch_size=0, device="tpu")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert outcome.out == ""
    assert f"{config}:4:3: batch_size must be an integer ≥ 1, got 0" in outcome.err
    assert f"{config}:5:3: device must be cpu or cuda, got 'tpu'" in outcome.err
    assert "nothing was launched" in outcome.err


def test_missing_input_file(run_precheck: Run, tmp_path: Path) -> None:
    config = contract_config(tmp_path, input="data/missing.jsonl")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    [error] = errors_of(outcome)
    assert error["parameter"] == "input"
    assert "does not exist" in error["message"] and "missing.jsonl" in error["message"]
    assert str(tmp_path / "data" / "missing.jsonl") in error["message"]
    assert outcome.json()["step"] == "input"


def test_input_that_is_a_folder(run_precheck: Run, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    config = contract_config(tmp_path, input="data")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    assert "is a folder" in errors_of(outcome)[0]["message"]


def test_input_is_resolved_from_the_config_folder_not_the_current_one(run_precheck: Run, tmp_path: Path) -> None:
    inputs(tmp_path, ["a"])  # ./prompts.jsonl exists in the current folder only
    (tmp_path / "configs").mkdir()
    config = contract_config(tmp_path / "configs")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "does not exist" in outcome.err


@pytest.mark.parametrize("existing", ["folder", "file", "empty-folder"])
def test_existing_run_folder_is_rejected_for_a_fresh_launch(run_precheck: Run, tmp_path: Path, data: Path,
                                                            existing: str) -> None:
    target = tmp_path / "r"
    if existing == "file":
        target.write_text("x", encoding="utf-8")
    else:
        target.mkdir()
        if existing == "folder":
            (target / "results.jsonl").write_text("", encoding="utf-8")
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(target), "--format", "json")
    assert outcome.code == 1
    [error] = errors_of(outcome)
    assert error["parameter"] == "--run-dir"
    assert "already exists" in error["message"] and "--resume" in error["message"]


def test_steps_stop_at_the_first_failing_class(run_precheck: Run, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    config = contract_config(tmp_path, input="missing.jsonl", batch_size=0)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    assert outcome.json()["step"] == "schema"
    assert [error["parameter"] for error in errors_of(outcome)] == ["batch_size"]


# --------------------------------------------------------------------------- step 1: unreadable input


@pytest.mark.parametrize("name, text, fragment, line", [
    ("run.json", '{"schema_version": 1,\n "input": "prompts.jsonl",\n "batch_size": 4\n "device": "cpu"}',
     "invalid JSON", 4),
    ("run.json", '{"schema_version": 1, "input": "prompts.jsonl", "batch_size": 4, "device": "cpu"',
     "invalid JSON", 1),
    ("run.yaml", "schema_version: 1\ninput: [prompts.jsonl\nbatch_size: 4\n", "invalid YAML", 3),
    ("run.yaml", "schema_version: 1\n\tinput: x\n", "invalid YAML", 2),
    ("run.json", "", "empty", 1),
    ("run.yaml", "# only a comment\n", "empty", 1),
    ("run.json", "   \n\n", "empty", 1),
    ("run.json", "[1, 2]", "must be a mapping of parameters, got a list", 1),
    ("run.yaml", "just a string\n", "must be a mapping of parameters", 1),
    ("run.yaml", "42\n", "must be a mapping of parameters", 1),
    ("run.yaml", "schema_version: 1\n---\nschema_version: 1\n", "2 YAML documents", 3),
])
def test_unreadable_configs_name_file_line_and_column(run_precheck: Run, tmp_path: Path, data: Path, name: str,
                                                      text: str, fragment: str, line: int) -> None:
    config = tmp_path / name
    config.write_text(text, encoding="utf-8")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1, outcome
    [error] = errors_of(outcome)
    assert fragment in error["message"]
    assert error["path"] == str(config)
    assert error["line"] == line
    assert outcome.json()["step"] == "read"


def test_missing_config(run_precheck: Run, tmp_path: Path) -> None:
    outcome = run_precheck("--config", str(tmp_path / "nope.json"), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "does not exist" in outcome.err and "nope.json" in outcome.err
    assert "Traceback" not in outcome.err


def test_config_that_is_a_folder(run_precheck: Run, tmp_path: Path) -> None:
    outcome = run_precheck("--config", str(tmp_path), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "is a folder" in outcome.err


def test_binary_and_non_utf8_configs(run_precheck: Run, tmp_path: Path) -> None:
    config = tmp_path / "run.json"
    config.write_bytes(b'{"schema_version": 1, "input": "\xff\xfe"}')
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "UTF-8" in outcome.err


def test_huge_config_is_refused_without_reading_it_all(run_precheck: Run, tmp_path: Path) -> None:
    config = tmp_path / "run.json"
    with config.open("w", encoding="utf-8") as handle:
        handle.write('{"schema_version": 1, "pad": "')
        handle.write("x" * (6 * 1024 * 1024))
        handle.write('"}')
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "bytes" in outcome.err


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root can read anything")
def test_unreadable_config(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path)
    config.chmod(0)
    try:
        outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    finally:
        config.chmod(0o644)
    assert outcome.code == 1
    assert "cannot be read" in outcome.err


def test_deeply_nested_config_does_not_crash(run_precheck: Run, tmp_path: Path) -> None:
    config = tmp_path / "run.json"
    config.write_text('{"schema_version": 1, "x": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "Traceback" not in outcome.err


# --------------------------------------------------------------------------- secrets


def test_secrets_in_the_config_are_never_echoed(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path, device=HF_TOKEN, hf_token=HF_TOKEN, api_key=12345678901234)
    for fmt in ("text", "json"):
        outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", fmt)
        assert outcome.code == 1
        assert HF_TOKEN not in outcome.out + outcome.err
        assert HF_TOKEN[4:] not in outcome.out + outcome.err
        assert "12345678901234" not in outcome.out + outcome.err
    assert "hf_Q…" in outcome.out


def test_manifest_redacts_secret_parameters_of_a_custom_schema(run_precheck: Run, tmp_path: Path,
                                                               data: Path) -> None:
    schema = write_json(tmp_path / "loose.schema.json", {"type": "object"})
    config = contract_config(tmp_path, wandb_api_key=HF_TOKEN)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--init",
                           "--schema", str(schema))
    assert outcome.code == 0, outcome.err
    text = (tmp_path / "r" / "manifest.json").read_text(encoding="utf-8")
    assert HF_TOKEN not in text and HF_TOKEN not in outcome.out
    assert json.loads(text)["parameters"]["wandb_api_key"].startswith("[redacted")


# --------------------------------------------------------------------------- choosing the schema


def test_schema_option_with_a_custom_schema(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    schema = write_json(tmp_path / "eval.schema.json", {
        "type": "object", "required": ["input", "k"], "additionalProperties": False,
        "properties": {"input": {"type": "string"}, "k": {"type": "integer", "minimum": 1}}})
    good = write_json(tmp_path / "good.json", {"input": "prompts.jsonl", "k": 3})
    bad = write_json(tmp_path / "bad.json", {"input": "prompts.jsonl", "k": 0, "extra": 1})
    ok = run_precheck("--config", str(good), "--run-dir", str(tmp_path / "r"), "--schema", str(schema))
    assert ok.code == 0, ok.err
    assert ok.json()["schema_version"] is None
    failed = run_precheck("--config", str(bad), "--run-dir", str(tmp_path / "r"), "--schema", str(schema),
                          "--format", "json")
    assert failed.code == 1
    messages = [error["message"] for error in errors_of(failed)]
    assert messages == ["k must be an integer ≥ 1, got 0 (an integer)",
                        "unknown key 'extra': the schema allows only input, k"]


def test_schema_option_by_shipped_name(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--schema",
                           "run-config.v1.schema.json")
    assert outcome.code == 0, outcome.err


@pytest.mark.parametrize(("schema_text", "reason"), [
    (None, "no such schema file"),
    ("not json", "cannot load schema"),
    ('{"type": 12}', "not a valid JSON Schema (type: 12"),
])
def test_unusable_schema_option_is_a_usage_error(run_precheck: Run, tmp_path: Path, data: Path,
                                                 schema_text: str | None, reason: str) -> None:
    schema = tmp_path / "custom.schema.json"
    if schema_text is not None:
        schema.write_text(schema_text, encoding="utf-8")
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--schema", str(schema))
    assert outcome.code == 2
    assert outcome.err.startswith("spikelint precheck: error: ")  # the command, the file and why
    assert str(schema) in outcome.err and reason in outcome.err
    assert "Traceback" not in outcome.err


def test_dollar_schema_key_selects_the_schema_and_is_not_a_parameter(run_precheck: Run, tmp_path: Path,
                                                                     data: Path) -> None:
    config = contract_config(tmp_path, **{"$schema": "https://spikelint.dev/schemas/run-config.v1.schema.json"})
    assert run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r")).code == 0
    unknown = contract_config(tmp_path, **{"$schema": "https://example.org/other.schema.json"})
    outcome = run_precheck("--config", str(unknown), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    assert errors_of(outcome)[0]["parameter"] == "$schema"


def test_unknown_schema_version(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path, schema_version=2, extra=1)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", "json")
    assert outcome.code == 1
    [error] = errors_of(outcome)
    assert error["parameter"] == "schema_version"
    assert "known contract version (1)" in error["message"] and "got 2" in error["message"]


# --------------------------------------------------------------------------- --resume


def test_resume_is_explicit_and_checks_the_config_hash(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path)
    run_dir = str(tmp_path / "r")
    assert run_precheck("--config", str(config), "--run-dir", run_dir, "--init").code == 0
    assert run_precheck("--config", str(config), "--run-dir", run_dir).code == 1  # present files imply nothing
    resumed = run_precheck("--config", str(config), "--run-dir", run_dir, "--resume")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "configuration_validated"
    contract_config(tmp_path, batch_size=8)  # the config changes under the run
    changed = run_precheck("--config", str(config), "--run-dir", run_dir, "--resume", "--format", "json")
    assert changed.code == 1
    [error] = errors_of(changed)
    assert "SHA-256" in error["message"] and "changed" in error["message"]


def test_resume_needs_an_existing_folder(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--resume")
    assert outcome.code == 1
    assert "does not exist" in outcome.err


@pytest.mark.parametrize("manifest, fragment", [
    (None, "manifest.json is missing"),
    ("", "must be a JSON object, got empty"),
    ("{not json", "invalid JSON"),
    ("[1, 2]", "must be a JSON object, got a list"),
    ('"text"', "must be a JSON object"),
    ('{"run_id": "x"}', "records no config SHA-256"),
    ('{"config": {"sha256": 5}}', "records no config SHA-256"),
    ('{"config": "run.json"}', "records no config SHA-256"),
])
def test_resume_needs_a_manifest_with_the_config_hash(run_precheck: Run, tmp_path: Path, data: Path,
                                                      manifest: str | None, fragment: str) -> None:
    config = contract_config(tmp_path)
    (tmp_path / "r").mkdir()
    if manifest is not None:
        (tmp_path / "r" / "manifest.json").write_text(manifest, encoding="utf-8")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--resume")
    assert outcome.code == 1
    assert fragment in outcome.err


def test_resume_of_a_file_is_rejected(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    (tmp_path / "r").write_text("x", encoding="utf-8")
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--resume")
    assert outcome.code == 1
    assert "not a folder" in outcome.err


def test_resume_still_validates_the_config_first(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path, device="gpu")
    (tmp_path / "r").mkdir()
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--resume", "--format", "json")
    assert outcome.code == 1
    assert outcome.json()["step"] == "schema"


# --------------------------------------------------------------------------- --init


def _git(folder: Path, *arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=folder, check=True, capture_output=True, text=True).stdout


def test_init_writes_a_valid_manifest_with_the_identity_of_the_run(run_precheck: Run, tmp_path: Path,
                                                                   data: Path) -> None:
    from spikelint.contract.violations import violations
    from spikelint.schemas import load_schema

    _git(tmp_path, "init", "-q")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "--allow-empty", "-m", "x")
    head = _git(tmp_path, "rev-parse", "HEAD").strip()
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "runs" / "r1"), "--init",
                           "--seed", "17", "--model", "llama-3-8b", "--image", "registry.example.org/infer@sha256:" + "a" * 64)
    assert outcome.code == 0, outcome.err
    result = outcome.json()
    manifest_path = tmp_path / "runs" / "r1" / "manifest.json"
    assert result["manifest"] == str(manifest_path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert violations(load_schema("run-manifest.v1.schema.json"), manifest) == []
    assert manifest["run_id"] == result["run_id"]
    assert manifest["created"].endswith("Z")
    assert manifest["code"]["revision"] == head
    assert manifest["code"]["dirty"] is False
    import hashlib

    assert manifest["config"]["sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    assert manifest["input"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert manifest["input"]["path"] == str(data)
    assert manifest["parameters"] == {"schema_version": 1, "input": str(data), "batch_size": 4, "device": "cuda"}
    assert manifest["schema_version"] == 1
    assert (manifest["seed"], manifest["model"]) == (17, "llama-3-8b")
    assert manifest["image"].startswith("registry.example.org/infer@sha256:")
    assert {"spikelint", "python"} <= set(manifest["versions"])
    assert sorted(path.name for path in (tmp_path / "runs" / "r1").iterdir()) == ["manifest.json"]


def test_init_records_a_dirty_work_tree(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "train.py").write_text("print(1)\n", encoding="utf-8")
    _git(tmp_path, "add", "train.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x")
    (tmp_path / "train.py").write_text("print(2)\n", encoding="utf-8")
    config = contract_config(tmp_path)
    assert run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--init").code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["code"]["dirty"] is True


def test_init_outside_git_records_no_revision(run_precheck: Run, tmp_path: Path, data: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    config = contract_config(tmp_path)
    assert run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--init").code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["code"] == {"revision": None, "dirty": None, "repository": None}


def test_init_refuses_an_existing_folder_and_writes_nothing(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    (tmp_path / "r").mkdir()
    config = contract_config(tmp_path)
    assert run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--init").code == 1
    assert list((tmp_path / "r").iterdir()) == []


def test_init_with_resume_is_a_usage_error(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--init", "--resume")
    assert outcome.code == 2
    assert "--init" in outcome.err


def test_init_into_an_unwritable_place_is_a_setup_error(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    config = contract_config(tmp_path)
    outcome = run_precheck("--config", str(config), "--run-dir", str(blocker / "r"), "--init")
    assert outcome.code == 2
    assert "cannot create the run folder" in outcome.err


def test_invalid_config_with_init_creates_nothing(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = contract_config(tmp_path, batch_size=0)
    assert run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"), "--init").code == 1
    assert not (tmp_path / "r").exists()


# --------------------------------------------------------------------------- usage


@pytest.mark.parametrize("argv", [
    [],
    ["--config", "run.json"],
    ["--run-dir", "r"],
    ["--config", "run.json", "--run-dir", "r", "--format", "xml"],
    ["--config", "run.json", "--run-dir", "r", "--bogus"],
    ["--config", "run.json", "--run-dir", "r", "--seed", "abc"],
])
def test_usage_errors_exit_2(run_precheck: Run, argv: list[str]) -> None:
    outcome = run_precheck(*argv)
    assert outcome.code == 2
    assert "usage" in outcome.err


def test_help_exits_0(run_precheck: Run) -> None:
    outcome = run_precheck("--help")
    assert outcome.code == 0
    assert "--run-dir" in outcome.out


def test_the_cli_delegates(tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.cli import main

    monkeypatch.chdir(tmp_path)
    config = contract_config(tmp_path)
    assert main(["precheck", "--config", str(config), "--run-dir", "r"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "configuration_validated"


def test_config_nested_too_deeply(run_precheck: Run, tmp_path: Path, data: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("schema_version: 1\nx: " + "[" * 900 + "]" * 900 + "\n", encoding="utf-8")
    outcome = run_precheck("--config", str(config), "--run-dir", str(tmp_path / "r"))
    assert outcome.code == 1
    assert "nests deeper than" in outcome.err
