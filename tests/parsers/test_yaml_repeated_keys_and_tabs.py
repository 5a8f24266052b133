"""A key written twice in one YAML mapping is SPK001 at the second (kubectl, Helm and OmegaConf refuse
the file; PyYAML keeps the last value, which the other rules then read), and a tab where YAML allows
only spaces is named as such rather than as libyaml's "character that cannot start any token"."""

from __future__ import annotations

import pytest

from spikelint.documents.yamldoc import DuplicateKey
from spikelint.documents.yamldoc import parse_yaml
from spikelint.engine import lint_snippet

DIGEST = "0123456789abcdef" * 4


def _job(container: str) -> str:
    return ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n      - name: c\n" + container)


def test_a_repeated_key_is_reported_at_the_second_and_the_last_value_is_the_one_checked() -> None:
    text = _job(f"        image: busybox:latest\n        image: busybox@sha256:{DIGEST}\n")
    findings = lint_snippet("job.yaml", text)
    repeated = [finding for finding in findings if finding.rule == "SPK001"]
    assert [(finding.line, finding.column) for finding in repeated] == [(11, 9)]
    assert "'image' is written twice in one mapping (first at line 10)" in repeated[0].message
    assert not any(finding.rule == "SPK101" for finding in findings)  # the last value, as PyYAML reads it


@pytest.mark.parametrize("text", [
    "base: &b {lr: 0.1, steps: 10}\ntrain:\n  <<: *b\n  lr: 0.01\n",  # an override of a merged key
    "a: {name: x}\nb: {name: x}\n",  # one key in two mappings
    "name: x\n---\nname: y\n",  # one key in two documents
    "items:\n- name: a\n- name: a\n",  # list items are separate mappings
    "'1': a\n1.0: b\n",  # keys that only look alike
])
def test_what_real_files_repeat_legitimately_is_no_repetition(text: str) -> None:
    duplicates: list[DuplicateKey] = []
    parse_yaml(text, duplicates)
    assert duplicates == []


def test_a_key_repeated_after_overriding_a_merged_one_is_a_repetition() -> None:
    duplicates: list[DuplicateKey] = []
    parse_yaml("base: &b {lr: 0.1}\ntrain:\n  <<: *b\n  lr: 0.01\n  lr: 0.02\n", duplicates)
    assert duplicates == [DuplicateKey("lr", 5, 3, 4)]


def test_a_tab_that_indents_is_named_and_a_tab_that_separates_is_valid() -> None:
    findings = lint_snippet("job.yaml", "apiVersion: batch/v1\nkind: Job\nspec:\n\ttemplate: {}\n")
    assert [(finding.rule, finding.line, finding.column) for finding in findings] == [("SPK001", 4, 1)]
    assert "a tab character where YAML allows only spaces (indent with spaces)" in findings[0].message
    assert parse_yaml("a: 1\nb:\n  c:\t2\n")[0].get("b", "c").value == 2


def test_a_key_repeated_with_the_same_value_is_called_redundant_not_a_change() -> None:
    findings = lint_snippet("train.yaml", "gradient_checkpointing: true\nlr: 0.1\ngradient_checkpointing: true\n")
    assert [(finding.rule, finding.line) for finding in findings] == [("SPK001", 3)]
    assert "with the same value as at line 1" in findings[0].message and "silently" not in findings[0].message
