"""Rule selection: ids and family prefixes, the longer match wins, ``ignore`` wins a tie."""

from __future__ import annotations

import pytest
from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import write

from spikelint.config import Config
from spikelint.engine import Engine
from spikelint.engine import lint_snippet
from spikelint.config import selected


@pytest.mark.parametrize(("select", "ignore", "rule", "expected"), [
    ((), (), "SPK101", True),
    (("SPK1",), (), "SPK101", True),
    (("SPK1",), (), "SPK201", False),
    (("SPK101",), (), "SPK102", False),
    ((), ("SPK1",), "SPK101", False),
    ((), ("SPK1",), "SPK201", True),
    (("SPK101",), ("SPK1",), "SPK101", True),
    (("SPK101",), ("SPK1",), "SPK102", False),
    (("SPK1",), ("SPK101",), "SPK101", False),
    (("SPK1",), ("SPK101",), "SPK102", True),
    (("SPK1",), ("SPK1",), "SPK101", False),
    (("SPK101",), ("SPK101",), "SPK101", False),
    (("SPK",), (), "SPK702", True),
    ((), ("SPK",), "SPK001", False),
    (("SPK0", "SPK2"), (), "SPK002", True),
])
def test_selected(select: tuple[str, ...], ignore: tuple[str, ...], rule: str, expected: bool) -> None:
    assert selected(rule, Config(select=select, ignore=ignore)) is expected


def test_unselected_checks_do_not_run() -> None:
    engine = Engine.create(Config(select=("SPK1",)))
    assert engine.checks and all(any(rule.startswith("SPK1") for rule in spec.rules) for spec in engine.checks)


def test_selection_filters_findings() -> None:
    text = VALUES_LATEST + "sidecar:\n  image: alpine:3.1\n"
    assert {f.rule for f in lint_snippet("values.yaml", text)} == {"SPK101", "SPK102"}
    assert {f.rule for f in lint_snippet("values.yaml", text, {"select": ["SPK102"]})} == {"SPK102"}
    assert {f.rule for f in lint_snippet("values.yaml", text, {"ignore": ["SPK102"]})} == {"SPK101"}
    assert {f.rule for f in lint_snippet("values.yaml", text, {"select": ["SPK2"]})} == set()


def test_meta_findings_follow_selection_too(tmp_path, run_cli) -> None:
    write(tmp_path, {"bad.yaml": "a: [\n", "values.yaml": VALUES_FLOATING})
    outcome = run_cli(["check", "--format", "json", "--ignore", "SPK001"], cwd=tmp_path)
    assert outcome.pairs() == {("values.yaml", 2, "SPK102")} and outcome.code == 0
    outcome = run_cli(["check", "--format", "json", "--select", "SPK0"], cwd=tmp_path)
    assert outcome.pairs() == {("bad.yaml", 1, "SPK001")} and outcome.code == 1


def test_command_line_ignore_beats_configured_select(tmp_path, run_cli) -> None:
    write(tmp_path, {".spikelint.yaml": "select: [SPK101]\n", "values.yaml": VALUES_LATEST})
    assert run_cli(["check"], cwd=tmp_path).code == 1
    assert run_cli(["check", "--ignore", "SPK101"], cwd=tmp_path).code == 0
