"""A typo must not switch the gate off: unknown rule ids, bad --jobs, and readable messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import VALUES_LATEST
from core_support import write


@pytest.mark.parametrize(("arguments", "named"), [
    (["--select", "SPK9"], "SPK9"),
    (["--select", "SPK1,SPK88"], "SPK88"),
    (["--ignore", "SPK999"], "SPK999"),
    (["--ignore", "spk109"], "SPK109"),
])
def test_unknown_rule_on_the_command_line_exits_2_naming_it(run_cli, tmp_path: Path, arguments: list[str],
                                                            named: str) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", *arguments, "."], cwd=tmp_path)
    assert outcome.code == 2 and outcome.out == ""
    assert named in outcome.err and "unknown rule" in outcome.err and outcome.err.count("spikelint:") == 1


@pytest.mark.parametrize(("config", "named"), [
    ("select: [SPK9]\n", "select: unknown rule id or family SPK9"),
    ("ignore: [SPK1, SPK777]\n", "ignore: unknown rule id or family SPK777"),
    ("severity: {SPK999: error}\n", "severity: unknown rule id SPK999"),
    ("per_path_ignores: {'examples/**': [SPK88]}\n", "per_path_ignores['examples/**']: unknown rule id or family SPK88"),
])
def test_unknown_rule_in_the_configuration_exits_2_naming_key_and_id(run_cli, tmp_path: Path, config: str,
                                                                     named: str) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST, ".spikelint.yaml": config})
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2 and named in outcome.err and ".spikelint.yaml" in outcome.err


def test_a_mistyped_id_is_named_at_its_line_with_the_id_it_most_likely_meant(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST, ".spikelint.yaml": "fail_on: error\nignore: [SPK1O5]\n",
                     "sub/.spikelint.yaml": "severity: {SPK1O2: info}\n", "sub/v.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2
    assert ".spikelint.yaml:2: ignore: unknown rule id or family SPK1O5 (did you mean SPK105?)" in outcome.err
    outcome = run_cli(["check", "--ignore", "SPK1O5", "sub"], cwd=tmp_path)
    assert "--ignore: unknown rule id or family SPK1O5 (did you mean SPK105?)" in outcome.err
    (tmp_path / ".spikelint.yaml").write_text("ignore: [SPK1]\n")
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2 and "sub/.spikelint.yaml:1: severity: 'SPK1O2' is not a rule id or family" \
        in outcome.err and "did you mean SPK102?" in outcome.err
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n\n[tool.spikelint]\nselect = ['SPK9']\n"})
    (tmp_path / ".spikelint.yaml").unlink()
    outcome = run_cli(["check", "values.yaml"], cwd=tmp_path)
    assert "pyproject.toml:5: [tool.spikelint]: select: unknown rule id or family SPK9 (" in outcome.err  # no guess


@pytest.mark.parametrize(("config", "said"), [
    # an item of a block list or map is named at its own line
    ("fail_on: error\nignore:\n  - SPK1\n  - SPK1O5\n", ".spikelint.yaml:4: ignore: unknown rule id or family SPK1O5"),
    ("fail_on: error\nseverity:\n  SPK101: info\n  SPK102: infoo\n",
     ".spikelint.yaml:4: severity.SPK102: 'infoo' is not one of ['error', 'warning', 'info'] (did you mean 'info'?)"),
    ("fail_on: errors\n", ".spikelint.yaml:1: fail_on: 'errors' is not one of"),
    ("fail_on: error\nbaseline: nothere.json\n", ".spikelint.yaml:2: baseline: nothere.json: no such file"),
])
def test_a_configuration_mistake_is_named_at_its_own_line(run_cli, tmp_path: Path, config: str, said: str) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST, ".spikelint.yaml": config})
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 2 and said in outcome.err


def test_rule_ids_in_the_configuration_are_read_upper_case_as_on_the_command_line(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST, ".spikelint.yaml": "ignore: [spk101]\nseverity: {spk102: info}\n"})
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert outcome.code == 0 and "SPK101" not in outcome.out
    assert run_cli(["check", "--ignore", "spk101", "."], cwd=tmp_path).code == 0


def test_known_ids_and_families_are_accepted(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST,
                     ".spikelint.yaml": "select: [SPK1, SPK2, SPK001]\nignore: [SPK10]\nseverity: {SPK102: error}\n"
                                        "per_path_ignores: {'x/**': [SPK3]}\n"})
    outcome = run_cli(["check", "--select", "SPK", "--ignore", "SPK7", "."], cwd=tmp_path)
    assert outcome.code == 1 and "SPK101" in outcome.out


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_jobs_below_one_is_rejected(run_cli, tmp_path: Path, jobs: str) -> None:
    outcome = run_cli(["check", "--jobs", jobs, "."], cwd=tmp_path)
    assert outcome.code == 2 and "--jobs" in outcome.err and "at least 1" in outcome.err


def test_a_mistyped_option_is_answered_with_the_closest_one(run_cli, tmp_path: Path) -> None:
    outcome = run_cli(["check", "--formatt", "json", "."], cwd=tmp_path)
    assert outcome.code == 2 and "unrecognized arguments: --formatt (did you mean --format?)" in outcome.err
    outcome = run_cli(["history", "--sinse", "2020-01-01"], cwd=tmp_path)
    assert outcome.code == 2 and "(did you mean --since?)" in outcome.err
    outcome = run_cli(["check", "--frobnicate", "."], cwd=tmp_path)
    assert outcome.code == 2 and "did you mean" not in outcome.err


def test_usage_errors_carry_one_prefix(run_cli, tmp_path: Path) -> None:
    for arguments in (["check", "--frobnicate"], ["check", "--format", "xml"], ["lint"]):
        outcome = run_cli(arguments, cwd=tmp_path)
        assert outcome.code == 2
        assert outcome.err.startswith("spikelint: error: ") and outcome.err.count("spikelint") == 1, outcome.err


def test_check_help_lists_formats_and_exit_codes(run_cli, tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        run_cli(["check", "--help"], cwd=tmp_path)
    text = capsys.readouterr().out
    assert "exit codes:" in text and "output formats" in text
    for word in ("sarif", "junit", "gitlab", "github", "0 ", "1 ", "2 "):
        assert word in text


def test_singular_summary(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "values.yaml"], cwd=tmp_path)
    assert outcome.err.strip().splitlines()[-1] == "1 error, 0 warnings, 0 info in 1 file (1 file checked)"
