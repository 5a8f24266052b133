"""A bad number is a finding at the value, never a lost file: every other rule still runs."""

from __future__ import annotations

import pytest

from spikelint.documents.jsondoc import parse_json
from spikelint.documents.numbers import BAD_NUMBER
from spikelint.documents.numbers import number_problem
from spikelint.documents.yamldoc import parse_yaml
from spikelint.engine import lint_snippet

PASSWORD = "Xk29" + "vLq0Zp7Wm3Rt"

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: {value}
  template:
    spec:
      restartPolicy: Never
      containers:
      - command: ["python", "train.py"]  # a training Job: the workload rules apply
        image: busybox:1.36.1
        resources:
          limits:
            nvidia.com/gpu: {value}
        env:
        - name: DB_PASSWORD
          value: "{password}"
"""


@pytest.mark.parametrize("value", [".inf", "-.inf", ".NaN", "1e400", "9" * 400, "9" * 5000])
def test_a_job_with_a_bad_number_keeps_every_workload_finding(value: str) -> None:
    findings = lint_snippet("job.yaml", JOB.format(value=value, password=PASSWORD))
    places = [(finding.line, finding.rule) for finding in findings]
    assert (6, "SPK001") in places and (15, "SPK001") in places
    assert (18, "SPK202") in places, "the literal password is still reported"
    assert any(rule == "SPK302" for _, rule in places), "workload rules still ran"
    bad = next(f for f in findings if f.line == 6 and f.rule == "SPK001")
    assert bad.column == 16 and "invalid number" in bad.message and len(bad.message) < 300


def test_the_ordinary_job_has_no_number_finding() -> None:
    findings = lint_snippet("job.yaml", JOB.format(value="2", password=PASSWORD))
    assert not [f for f in findings if f.rule == "SPK001"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "1" * 101, "7" * 5000])
def test_json_bad_numbers_are_tagged_text(literal: str) -> None:
    root = parse_json('{"a": %s, "b": 1.5, "c": -3}' % literal)
    assert root.value["a"].tag == BAD_NUMBER and root.value["a"].value == literal
    assert root.value["b"].value == 1.5 and root.value["c"].value == -3
    findings = lint_snippet("obj.json", '{"apiVersion": "v1", "kind": "ConfigMap", "a": %s}' % literal)
    assert [(f.line, f.column, f.rule) for f in findings] == [(1, 48, "SPK001")]


def test_python_data_and_tokenizer_configs_are_not_reported() -> None:
    assert lint_snippet("tokenizer_config.json", '{"model_max_length": 1000000000000000019884624838656}') == []
    assert lint_snippet("snr.json", '{"layer.0": {"snr": Infinity}, "layer.1": {"snr": NaN}}') == []


def test_near_misses_are_ordinary_values() -> None:
    (root,) = parse_yaml("a: 1e300x\nb: '.inf'\nc: 9223372036854775807\nd: 1.0e10\ne: inf\nf: 0x10\n")
    values = {key: (node.value, node.tag) for key, node in root.value.items()}
    assert values["a"] == ("1e300x", None) and values["b"] == (".inf", None)
    assert values["c"] == (2**63 - 1, None) and values["d"] == (1e10, None)
    assert values["e"] == ("inf", None) and values["f"] == (16, None)
    assert number_problem(True) is None and number_problem(2**63) is None and number_problem(10**100) is not None


def test_an_api_object_cannot_hold_more_than_64_bits() -> None:
    findings = lint_snippet("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\nn: 9223372036854775808\n")
    assert [(f.line, f.rule) for f in findings] == [(5, "SPK001")]
    assert "beyond a 64-bit integer" in findings[0].message


def test_precheck_reports_the_value(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from spikelint.contract.reading import ReadProblem
    from spikelint.contract.reading import plain_mapping

    (root,) = parse_yaml("schema_version: 1\nbatch_size: .nan\n")
    with pytest.raises(ReadProblem) as raised:
        plain_mapping(root)
    assert raised.value.line == 2 and "not a finite number" in raised.value.message
