"""``allow_inline_suppressions: false``: only the configuration and the baseline silence findings."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from core_support import write

from spikelint.engine import lint_snippet

TODAY = date(2026, 6, 1)
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations: {spikelint.io/disable: SPK101}\nspec:\n"
       "  containers:\n    - name: t\n      image: busybox:latest\n")


def lint(name: str, text: str, **config: object) -> list[tuple[int, str, str]]:
    return sorted((f.line, f.rule, f.message) for f in lint_snippet(name, text, dict(config), today=TODAY))


def test_inline_comment_is_honoured_by_default_and_ignored_when_disallowed() -> None:
    text = "replicaCount: 1\nimage: busybox:latest  # spikelint: disable=SPK101 reason=\"later\"\n"
    assert [rule for _, rule, _ in lint("values.yaml", text)] == []
    found = lint("values.yaml", text, allow_inline_suppressions=False)
    assert [(line, rule) for line, rule, _ in found] == [(2, "SPK002"), (2, "SPK101")]
    assert "allow_inline_suppressions: false" in found[0][2]


def test_annotation_and_file_wide_suppressions_are_ignored_when_disallowed() -> None:
    assert "SPK101" not in {rule for _, rule, _ in lint("pod.yaml", POD)}
    assert "SPK101" in {rule for _, rule, _ in lint("pod.yaml", POD, allow_inline_suppressions=False)}
    whole = "# spikelint: disable-file=SPK101\nreplicaCount: 1\nimage: busybox:latest\n"
    assert (3, "SPK101") in {(line, rule) for line, rule, _ in lint("values.yaml", whole, allow_inline_suppressions=False)}


def test_detect_secrets_pragmas_are_ignored_too_without_an_spk002(tmp_path: Path) -> None:
    token = "ghp_" + "".join("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"[(i * 7) % 36] for i in range(36))
    text = f"token = \"{token}\"  # pragma: allowlist secret\n"
    assert lint("settings.py", text) == []
    found = {rule for _, rule, _ in lint("settings.py", text, allow_inline_suppressions=False)}
    assert "SPK002" not in found and any(rule.startswith("SPK2") for rule in found)


def test_per_path_ignores_still_work_and_the_key_is_validated(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"examples/values.yaml": "replicaCount: 1\nimage: busybox:latest  # spikelint: disable=SPK101\n",
                     ".spikelint.yaml": "allow_inline_suppressions: false\nper_path_ignores: {'examples/**': [SPK101]}\n"})
    outcome = run_cli(["check", "--format", "json", "."], cwd=tmp_path)
    assert [f["rule"] for f in outcome.json()["findings"]] == ["SPK002"] and outcome.code == 0
    write(tmp_path, {".spikelint.yaml": "allow_inline_suppressions: nope\n"})
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2 and "allow_inline_suppressions" in outcome.err
