"""Schema violations become messages that name the parameter, what it accepts, and where it is."""

from __future__ import annotations

from typing import Any

import pytest

from spikelint.documents.jsondoc import parse_json
from spikelint.documents.yamldoc import parse_yaml
from spikelint.secrets.shown_values import redact_parameters
from spikelint.secrets.shown_values import secret_kind
from spikelint.secrets.shown_values import shown
from spikelint.contract.violations import SchemaUnusable
from spikelint.contract.violations import expected
from spikelint.contract.violations import locate
from spikelint.contract.violations import parameter_name
from spikelint.contract.violations import violations
from spikelint.schemas import load_schema

CONTRACT = load_schema("run-config.v1.schema.json")
VALID = {"schema_version": 1, "input": "a.jsonl", "batch_size": 4, "device": "cpu"}


def messages(data: Any, schema: Any = CONTRACT) -> list[str]:
    return sorted(v.message for v in violations(schema, data, subject="the contract"))


def test_the_valid_contract_has_no_violations() -> None:
    assert violations(CONTRACT, VALID) == []


@pytest.mark.parametrize("change, message", [
    ({"batch_size": "4"}, "batch_size must be an integer ≥ 1, got '4' (a string)"),
    ({"batch_size": True}, "batch_size must be an integer ≥ 1, got true (a boolean)"),
    ({"batch_size": 4.0}, "batch_size must be an integer ≥ 1, got 4.0 (a number)"),
    ({"batch_size": 0}, "batch_size must be an integer ≥ 1, got 0 (an integer)"),
    ({"device": "gpu"}, "device must be cpu or cuda, got 'gpu' (a string)"),
    ({"device": None}, "device must be cpu or cuda, got null"),
    ({"schema_version": "1"}, "schema_version must be the integer 1, got '1' (a string)"),
    ({"schema_version": 2}, "schema_version must be the integer 1, got 2 (an integer)"),
    ({"input": ""}, "input must be a non-empty string, got '' (a string)"),
    ({"input": {"path": "a"}}, "input must be a non-empty string, got a mapping"),
    ({"lr": 0.1}, "unknown key 'lr': the contract allows only schema_version, input, batch_size, device"),
])
def test_one_message_per_violation(change: dict[str, Any], message: str) -> None:
    assert messages({**VALID, **change}) == [message]


def test_missing_keys_each_get_a_message_with_the_accepted_values() -> None:
    assert messages({}) == [
        "missing required key 'batch_size' (an integer ≥ 1)",
        "missing required key 'device' (cpu or cuda)",
        "missing required key 'input' (a non-empty string)",
        "missing required key 'schema_version' (the integer 1)",
    ]


def test_the_whole_document_of_the_wrong_shape() -> None:
    assert messages([1, 2]) == ["the config must be a mapping, got a list of 2 items"]
    assert messages(None) == ["the config must be a mapping, got null"]


def test_positions_key_value_and_object() -> None:
    text = "# c\nschema_version: 1\nbatch_size:\n  - 4\ndevice: cpu\nlr: 3\n"
    root = parse_yaml(text)[0]
    found = {v.parameter: locate(root, v) for v in violations(CONTRACT, root.to_python())}
    assert (found["batch_size"].line, found["batch_size"].column) == (3, 1)  # the key, not the list item
    assert found["lr"].line == 6
    assert found["input"].line == 2  # a missing key: the object's first line


def test_nested_positions() -> None:
    schema = {"type": "object", "properties": {"optimizer": {
        "type": "object", "required": ["lr"], "additionalProperties": False,
        "properties": {"lr": {"type": "number", "exclusiveMinimum": 0}, "betas": {"type": "array", "items": {"type": "number"}}}}}}
    text = '{\n  "optimizer": {\n    "betas": [0.9, "x"],\n    "momentum": 0.9\n  }\n}'
    root = parse_json(text)
    found = {v.message: locate(root, v).line for v in violations(schema, root.to_python())}
    assert found == {
        "missing required key 'lr' in 'optimizer' (a number > 0)": 2,
        "optimizer.betas[1] must be a number, got 'x' (a string)": 3,
        "unknown key 'momentum': 'optimizer' allows only lr, betas": 4,
    }


@pytest.mark.parametrize("schema, words", [
    ({"type": "integer", "minimum": 1, "maximum": 8}, "an integer between 1 and 8"),
    ({"type": "number", "exclusiveMinimum": 0}, "a number > 0"),
    ({"type": ["string", "null"]}, "a string or null"),
    ({"enum": ["a", "b", "c"]}, "one of a, b, c"),
    ({"const": "v1"}, "v1"),
    ({"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer"}]}, "a non-empty string or an integer"),
    ({"type": "array", "items": {"type": "string"}}, "a list of strings"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "a string matching ^[a-z]+$"),
    ({"type": "boolean"}, "true or false"),
    ({}, "any value"),
    ({"minimum": 3}, "a number ≥ 3"),
])
def test_expected_in_words(schema: dict[str, Any], words: str) -> None:
    assert expected(schema) == words


def test_parameter_names() -> None:
    assert parameter_name(("optimizer", "lr")) == "optimizer.lr"
    assert parameter_name(("layers", 2, "size")) == "layers[2].size"
    assert parameter_name(()) == "the config"


def test_unusable_schemas() -> None:
    with pytest.raises(SchemaUnusable):
        violations({"type": 12}, {})
    with pytest.raises(SchemaUnusable):
        violations({"$ref": "other.json#/x"}, {})
    with pytest.raises(SchemaUnusable):
        violations([1], {})


def test_other_keywords_have_messages() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "minItems": 1, "uniqueItems": True},
        "meta": {"type": "object", "maxProperties": 1},
        "mode": {"not": {"const": "debug"}}},
        "propertyNames": {"pattern": "^[a-z_]+$"},
        "dependentRequired": {"resume": ["checkpoint"]}}
    found = messages({"tags": [], "meta": {"a": 1, "b": 2}, "mode": "debug", "Bad-Key": 1, "resume": True}, schema)
    assert "tags must have at least 1 item, it has 0" in found
    assert "meta must have at most 1 key, it has 2" in found
    assert any(message.startswith("mode has a value that the contract forbids") for message in found)
    assert any(message.startswith("key 'Bad-Key' is not allowed") for message in found)
    assert "missing key 'checkpoint': it is required when 'resume' is set" in found


def test_false_schemas_forbid_keys() -> None:
    schema = {"type": "object", "properties": {"password": False}}
    assert messages({"password": "x"}, schema) == ["key 'password' is not allowed"]


# --------------------------------------------------------------------------- redaction


@pytest.mark.parametrize("value, key", [
    ("hf_QwErTyUiOpAsDfGhJkLzXcVbNm13572468", None),
    ("ghp_QwErTyUiOpAsDfGhJkLzXcVbNm1357246809", None),
    ("AKIA" + "".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[(i * 11) % 32] for i in range(16)), None),
    ("-----BEGIN RSA PRIVATE KEY-----", None),
    ("https://user:hunter22@example.org/x", None),
    ("correct-horse", "password"),
    ("9f8e7d6c5b4a39281706f5e4d3c2b1a0", None),
])
def test_secrets_are_shown_as_their_first_characters(value: str, key: str | None) -> None:
    assert secret_kind(value, key) is not None
    text = shown(value, key)
    assert value not in text and text.startswith(f"'{value[:4]}…'")


@pytest.mark.parametrize("value", ["data/prompts.jsonl", "cuda", "gpu", "/mnt/data/eval-2024-05-01.jsonl", ""])
def test_ordinary_values_are_shown(value: str) -> None:
    assert secret_kind(value) is None
    assert shown(value) == f"{value!r} (a string)"


def test_long_values_are_shortened() -> None:
    assert len(shown("word " * 100)) < 80


def test_redact_parameters() -> None:
    data = {"input": "a.jsonl", "auth": {"token": "abc"}, "list": ["hf_QwErTyUiOpAsDfGhJkLzXcVbNm13572468"]}
    redacted = redact_parameters(data)
    assert redacted["input"] == "a.jsonl"
    assert redacted["auth"]["token"].startswith("[redacted")
    assert redacted["list"][0].startswith("[redacted")
