"""A ``.spikelint.yaml`` in a sub-folder refines its parent's for the files below it."""

from __future__ import annotations

from pathlib import Path

from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import write


def _rules(outcome) -> set[tuple[str, str, str]]:
    return {(f["path"], f["rule"], f["severity"]) for f in outcome.json()["findings"]}


def _tree(root: Path, sub_config: str) -> Path:
    return write(root, {
        ".spikelint.yaml": "severity: {SPK102: error}\nper_path_ignores: {'legacy/**': [SPK101]}\n",
        "team/.spikelint.yaml": sub_config,
        "values.yaml": VALUES_LATEST,
        "pinned/values.yaml": VALUES_FLOATING,
        "team/values.yaml": VALUES_LATEST,
        "team/pinned/values.yaml": VALUES_FLOATING,
        "team/legacy/values.yaml": VALUES_LATEST,
        "legacy/values.yaml": VALUES_LATEST,
    })


def test_a_sub_folder_configuration_refines_the_parent_below_it(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path, "ignore: [SPK101]\n")
    found = _rules(run_cli(["check", "--format", "json", "."], cwd=tmp_path))
    assert ("values.yaml", "SPK101", "error") in found  # above the sub-folder: the parent alone
    assert not any(path.startswith("team/") and rule == "SPK101" for path, rule, _ in found)  # refined
    assert ("team/pinned/values.yaml", "SPK102", "error") in found  # the parent's severity still applies
    assert ("pinned/values.yaml", "SPK102", "error") in found
    assert not any(path == "legacy/values.yaml" for path, _, _ in found)  # the parent's per_path_ignores


def test_sub_folder_globs_are_relative_to_the_sub_folder(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path, "per_path_ignores: {'legacy/**': [SPK1]}\nexclude: ['pinned/**']\nseverity: {SPK102: info}\n")
    found = _rules(run_cli(["check", "--format", "json", "."], cwd=tmp_path))
    paths = {path for path, _, _ in found}
    assert "team/legacy/values.yaml" not in paths and "team/pinned/values.yaml" not in paths
    assert ("team/values.yaml", "SPK101", "error") in found
    assert ("pinned/values.yaml", "SPK102", "error") in found  # the sub-folder's exclude stays below it


def test_the_command_line_still_wins(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path, "select: [SPK102]\n")
    found = _rules(run_cli(["check", "--format", "json", "--select", "SPK1", "."], cwd=tmp_path))
    assert ("team/values.yaml", "SPK101", "error") in found


def test_a_checked_file_uses_its_folders_configuration(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path, "ignore: [SPK101]\n")
    outcome = run_cli(["check", "--format", "json", "team/values.yaml"], cwd=tmp_path)
    assert outcome.json()["findings"] == []


def test_an_invalid_sub_folder_configuration_exits_2_naming_it(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path, "ignore: [SPK9]\n")
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2 and "team/.spikelint.yaml" in outcome.err and "SPK9" in outcome.err
    _tree(tmp_path, "fail_onn: error\n")
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2 and "team/.spikelint.yaml" in outcome.err and "fail_onn" in outcome.err
