"""SPK601/SPK602 through the engine: which files are run configs, which schema, what is said."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from spikelint.engine import lint_snippet
from tests.contract.conftest import HF_TOKEN

SELECT = {"select": ["SPK601", "SPK602"]}


def found(filename: str, text: str, config: dict[str, object] | None = None,
          extra: dict[str, str] | None = None) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in lint_snippet(filename, text, {**SELECT, **(config or {})}, extra_files=extra)]


def messages(filename: str, text: str, config: dict[str, object] | None = None) -> list[str]:
    return [f.message for f in lint_snippet(filename, text, {**SELECT, **(config or {})})]


def test_the_catalog_examples_of_the_issue() -> None:
    bad = '{\n  "schema_version": 1,\n  "input": "data/prompts.jsonl",\n  "batch_size": "4",\n  "device": "cuda",\n  "lr": 3e-4\n}\n'
    assert messages("configs/run.json", bad) == [
        "batch_size must be an integer ≥ 1, got '4' (a string)",
        "unknown key 'lr': the contract allows only schema_version, input, batch_size, device",
    ]
    assert found("configs/run.json", bad) == [(4, "SPK601"), (6, "SPK601")]


def test_one_cause_one_finding_for_schema_version() -> None:
    text = 'schema_version: "1"\ninput: a.jsonl\nbatch_size: 4\ndevice: cuda\n'
    assert found("run.yaml", text) == [(1, "SPK602")]
    mapped = "input: a.jsonl\nbatch_size: 4\ndevice: cuda\n"
    config = {"schemas": {"*.yaml": "run-config.v1.schema.json"}}
    assert found("run.yaml", mapped, config) == [(1, "SPK602")]


def test_spk602_message_names_the_fix() -> None:
    [message] = messages("run.yaml", "input: a.jsonl\nbatch_size: 4\n")
    assert "schema_version: 1" in message


@pytest.mark.parametrize("filename, text", [
    ("conf/train.yaml", "batch_size: 32\nlr: 0.1\nepochs: 3\n"),
    # a framework's recipe: the contract's words among many sections of its own
    ("recipes/configs/8B_lora.yaml", "output_dir: /tmp/out\nmodel:\n  _component_: m\ntokenizer:\n  path: t\n"
     "dataset:\n  _component_: d\nseed: null\nshuffle: true\nbatch_size: 4\nepochs: 1\noptimizer:\n  lr: 3e-4\n"
     "loss:\n  _component_: l\ndevice: cuda\ndtype: bf16\nlog_every_n_steps: 1\n"),
    ("conf/train.yaml", "model:\n  input: x\n  batch_size: 3\n  device: cuda\n"),
    ("conf/train.yaml", "schema_version: 1\nname: something else\n"),
    ("conf/train.yaml", "schema_version: 3\nowner: me\n"),
    ("hf/args.json", '{"per_device_train_batch_size": 8, "output_dir": "/ckpt"}'),
    (".spikelint.yaml", "select: [SPK6]\n"),
    ("pyproject.toml", '[tool.x]\ninput = "a"\nbatch_size = 2\ndevice = "cpu"\n'),
    ("package.json", '{"name": "x", "input": "a", "device": "cpu"}'),
    ("schemas/x.schema.json", json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema",
                                          "properties": {"input": {}}, "input": 1, "device": 2})),
    ("k8s/pod.yaml", "apiVersion: v1\nkind: Pod\ninput: a\nbatch_size: 3\ndevice: cuda\n"),
    ("runs/r1/manifest.json", '{"run_id": "r1", "schema_version": 1, "input": {"path": "a", "sha256": "b"}}'),
    ("empty.yaml", ""),
    ("list.json", '[{"input": "a", "batch_size": 1}]'),
    ("scalar.yaml", "just text\n"),
    ("null.yaml", "~\n"),
])
def test_not_run_configs(filename: str, text: str) -> None:
    assert found(filename, text) == []


def test_configured_schemas_map_by_glob_from_the_configuration_root() -> None:
    schema = json.dumps({"type": "object", "required": ["schema_version", "k"], "additionalProperties": False,
                         "properties": {"schema_version": {"const": 1}, "k": {"type": "integer"}}})
    config = {"schemas": {"eval/**/*.yaml": "schemas/eval.schema.json"}}
    extra = {"schemas/eval.schema.json": schema}
    assert found("eval/nightly/a.yaml", "schema_version: 1\nk: x\n", config, extra) == [(2, "SPK601")]
    assert found("train/a.yaml", "schema_version: 1\nk: x\n", config, extra) == []


def test_configured_schema_that_is_not_valid_json_schema() -> None:
    config = {"schemas": {"*.yaml": "bad.schema.json"}}
    findings = lint_snippet("a.yaml", "schema_version: 1\n", {**SELECT, **config},
                            extra_files={"bad.schema.json": '{"type": 5}'})
    assert [(f.line, f.rule) for f in findings] == [(1, "SPK601")]
    assert "cannot be used" in findings[0].message


def test_dollar_schema_relative_to_the_file() -> None:
    schema = json.dumps({"type": "object", "properties": {"k": {"type": "integer"}}})
    text = '{"$schema": "../schemas/k.json", "schema_version": 1, "k": "x"}'
    assert found("configs/a.json", text, extra={"schemas/k.json": schema}) == [(1, "SPK601")]


def test_secrets_are_not_echoed_in_messages() -> None:
    text = f'schema_version: 1\ninput: a.jsonl\nbatch_size: 4\ndevice: "{HF_TOKEN}"\n'
    [message] = messages("run.yaml", text)
    assert HF_TOKEN not in message and "hf_Q…" in message


def test_toml_positions() -> None:
    text = 'schema_version = 1\ninput = "a"\n\nbatch_size = "8"\ndevice = "cpu"\n'
    assert found("run.toml", text) == [(4, "SPK601")]


def test_fingerprints_survive_moved_lines() -> None:
    first = lint_snippet("run.yaml", "schema_version: 1\ninput: a\nbatch_size: 0\ndevice: cpu\n", SELECT)
    moved = lint_snippet("run.yaml", "# moved\n\nschema_version: 1\ninput: a\nbatch_size: 0\ndevice: cpu\n", SELECT)
    assert [f.fingerprint for f in first] == [f.fingerprint for f in moved]


def test_checking_many_configs_is_fast(tmp_path: Path) -> None:
    from spikelint.config import Config
    from spikelint.engine import check_paths

    for number in range(300):
        (tmp_path / f"run{number}.yaml").write_text(
            f"schema_version: 1\ninput: d{number}.jsonl\nbatch_size: {number % 3}\ndevice: cuda\n", encoding="utf-8")
    start = time.perf_counter()
    result = check_paths([str(tmp_path)], Config(select=("SPK601", "SPK602")), cwd=tmp_path, jobs=1)
    elapsed = time.perf_counter() - start
    assert len(result.report.findings) == 100
    assert elapsed < 30, f"{elapsed:.2f}s"  # about 0.3 s; speed is bench/lint_bench.py's: this catches blow-ups


def test_deep_configs_are_reported_not_crashed() -> None:
    text = "schema_version: 1\ninput: a\nbatch_size: 1\ndevice: cpu\nx: " + "[" * 900 + "]" * 900 + "\n"
    findings = lint_snippet("run.yaml", text, SELECT)
    assert [(f.line, f.rule) for f in findings] == [(5, "SPK601")]
    assert "nests deeper than" in findings[0].message


def test_an_unusable_declared_schema_is_not_ours_to_report() -> None:
    text = '{"$schema": "tool.schema.json", "name": "x"}'
    assert found("tool.json", text, extra={"tool.schema.json": '{"type": 12}'}) == []
    assert found("biome.json", '{"$schema": "./node_modules/@biomejs/biome/configuration_schema.json"}') == []


def test_spk602_for_a_file_that_declares_the_run_contract() -> None:
    text = '{"$schema": "https://spikelint.dev/schemas/run-config.v1.schema.json", "input": "a"}'
    assert found("a.json", text) == [(1, "SPK601"), (1, "SPK601"), (1, "SPK602")]


def test_a_team_launch_config_with_a_few_parameters_of_its_own_still_needs_a_version() -> None:
    text = "input: data/prompts.jsonl\nbatch_size: 8\ndevice: cuda\nlr: 0.0003\nepochs: 2\nseed: 7\n"
    assert found("configs/run.yaml", text) == [(1, "SPK602")]
