"""Configuration: where it is found, what it may contain, and exit 2 naming the bad key."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import write

from spikelint.config import Config
from spikelint.config import ConfigError
from spikelint.config import config_from_mapping
from spikelint.config import find_config_file
from spikelint.config import load_config_file
from spikelint.config import load_config


@pytest.mark.parametrize(("text", "named"), [
    ("selec: [SPK1]\n", "selec"),
    ("select: SPK1\n", "select"),
    ("select: [SPK1, images]\n", "select: 'images' is not a rule id or family"),
    ("ignore: [101]\n", "ignore.0"),
    ("fail_on: critical\n", "fail_on"),
    ("severity: {SPK101: fatal}\n", "severity.SPK101"),
    ("severity: {SPK1: info}\n", "SPK1"),
    ("per_path_ignores: {'a/**': SPK101}\n", "per_path_ignores.a/**"),
    ("persistent_paths: [data]\n", "persistent_paths.0"),
    ("max_gpus: many\n", "max_gpus"),
    ("max_gpus: -1\n", "max_gpus"),
    ("min_grace_period_seconds: 2.5\n", "min_grace_period_seconds"),
    ("exclude: third_party/**\n", "exclude"),
    ("max_file_size: 0\n", "max_file_size"),
    ("schemas: {'configs/*.json': 3}\n", "schemas.configs/*.json"),
    ("immutable_tag_pattern: '(unclosed'\n", "immutable_tag_pattern"),
])
def test_bad_key_or_type_exits_2_naming_the_key(tmp_path: Path, run_cli, text: str, named: str) -> None:
    write(tmp_path, {".spikelint.yaml": text, "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert outcome.code == 2
    assert named in outcome.err and ".spikelint.yaml" in outcome.err
    assert outcome.out == "" and "Traceback" not in outcome.err


@pytest.mark.parametrize("text", ["select: [SPK1\n", "- SPK1\n", "just a string\n", "a: !!python/name:os.system\n"])
def test_unreadable_or_non_mapping_configuration_exits_2(tmp_path: Path, run_cli, text: str) -> None:
    write(tmp_path, {".spikelint.yaml": text, "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert outcome.code == 2 and "configuration" in outcome.err and "Traceback" not in outcome.err


@pytest.mark.parametrize(("text", "said"), [
    ("ignore: [SPK101]\nignore: [SPK202]\n", ".spikelint.yaml:2:1: the key 'ignore' is written twice (first at line 1)"),
    ("severity:\n  SPK102: info\n  SPK102: error\n", ".spikelint.yaml:3:3: the key 'SPK102' is written twice"),
    ("fail_on: error # caf\xe9\n".encode("latin-1").decode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 20)"),
])
def test_a_key_written_twice_or_a_file_not_in_utf8_exits_2_saying_so(tmp_path: Path, run_cli, text: str,
                                                                     said: str) -> None:
    """The reader kept the last ``ignore:`` and dropped the first without a word."""
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    (tmp_path / ".spikelint.yaml").write_bytes(text.encode("latin-1"))
    outcome = run_cli(["check"], cwd=tmp_path)
    assert outcome.code == 2 and said in outcome.err and "Traceback" not in outcome.err


def test_the_same_key_in_two_mappings_is_no_repetition(tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "severity: {SPK102: info}\nper_path_ignores: {'a/**': [SPK102]}\n"})
    assert load_config(None, tmp_path).severity == {"SPK102": "info"}


def test_empty_configuration_is_the_default(tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "# nothing yet\n"})
    config = load_config(None, tmp_path)
    assert config.select == () and config.fail_on == "error" and config.path == str(tmp_path / ".spikelint.yaml")


def test_every_documented_key_is_accepted() -> None:
    data = {
        "select": ["SPK1", "SPK2"], "ignore": ["SPK702"], "fail_on": "warning", "severity": {"SPK102": "error"},
        "per_path_ignores": {"examples/**": ["SPK101"]}, "persistent_paths": ["/data"],
        "allowed_registries": ["harbor.example.org"], "mutable_tags": ["latest", "main"],
        "immutable_tag_pattern": r"^(v?\d+\.\d+\.\d+.*|[0-9a-f]{7,40}|\d{8}.*)$", "max_gpus": 1,
        "min_grace_period_seconds": 30, "required_run_identity": ["seed", "code_revision", "dataset_version"],
        "schemas": {"configs/**/*.json": "schemas/run-config.v1.schema.json"}, "exclude": ["third_party/**"],
        "max_file_size": 1024,
    }
    config = config_from_mapping(data, source="x", root=".")
    assert config.select == ("SPK1", "SPK2") and config.per_path_ignores == {"examples/**": ("SPK101",)}
    assert config.max_file_size == 1024 and config.fail_on == "warning"


def test_error_message_names_the_source() -> None:
    with pytest.raises(ConfigError, match=r"^here: unknown key 'nope'"):
        config_from_mapping({"nope": 1}, source="here", root=".")


def test_the_configurations_known_keys_are_the_schemas() -> None:
    from spikelint.config import CONFIG_KEYS
    from spikelint.schemas import load_schema

    assert CONFIG_KEYS == set(load_schema("spikelint-config.schema.json")["properties"])


@pytest.mark.parametrize(("text", "said"), [
    ("select: [SPK1]\nignor: [SPK101]\n", ".spikelint.yaml:2: unknown key 'ignor' (did you mean 'ignore'?)"),
    ("secrets:\n  - id: acme-key\n", ".spikelint.yaml:1: unknown key 'secrets': a team's secret patterns go in a "
                                      "rule file under .spikelint/rules/"),
    ("fail_on: error\nrules:\n  - id: ACME001\n", ".spikelint.yaml:2: unknown key 'rules': a team's rules go in"),
    ("colour: true\n", ".spikelint.yaml:1: unknown key 'colour' — the configuration knows allow_inline_suppressions,"),
])
def test_an_unknown_key_is_named_with_its_line_and_fix(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / ".spikelint.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config_file(tmp_path / ".spikelint.yaml")
    assert str(raised.value).startswith(str(tmp_path / said.split(":", 1)[0]) + ":" + said.split(":", 1)[1])


@pytest.mark.parametrize(("name", "text", "said"), [
    (".spikelint.yaml", "fail_on: error\nignore: SPK105\n",
     ".spikelint.yaml:2: ignore: 'SPK105' is not of type 'array' — write a list: ignore: [SPK105]"),
    (".spikelint.yaml", "fail_on: 3\n", ".spikelint.yaml:1: fail_on: 3 is not one of"),
    ("pyproject.toml", '[project]\nname = "x"\n\n[tool.spikelint]\nfail_on = "error"\nignor = ["SPK101"]\n\n'
                       "[tool.other]\nignor = 1\n",
     "pyproject.toml:6: [tool.spikelint]: unknown key 'ignor' (did you mean 'ignore'?)"),
    ("pyproject.toml", '[tool.spikelint]\nignore = "SPK101"\n',
     "pyproject.toml:2: [tool.spikelint]: ignore: 'SPK101' is not of type 'array'"),
])
def test_a_wrong_value_is_named_with_its_line(tmp_path: Path, name: str, text: str, said: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config_file(tmp_path / name)
    assert str(raised.value).startswith(f"{tmp_path / said.split(':', 1)[0]}:{said.split(':', 1)[1]}")


# --------------------------------------------------------------------------- where it is found


def test_found_upward_from_the_current_folder(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {".spikelint.yaml": "ignore: [SPK101]\n", "deploy/values.yaml": VALUES_LATEST})
    assert run_cli(["check", "."], cwd=tmp_path / "deploy").code == 0


def test_pyproject_table(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n\n[tool.spikelint]\nignore = ['SPK101']\n",
                     "values.yaml": VALUES_LATEST})
    assert run_cli(["check"], cwd=tmp_path).code == 0


def test_pyproject_bad_key_exits_2(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.spikelint]\nignroe = ['SPK101']\n", "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert outcome.code == 2 and "ignroe" in outcome.err and "[tool.spikelint]" in outcome.err


@pytest.mark.parametrize("text", ["[tool.spikelint\n", "tool = 3\n# [tool.spikelint]\n",
                                  "[tool]\nspikelint = 'x'\n"])
def test_pyproject_broken_exits_2(tmp_path: Path, run_cli, text: str) -> None:
    write(tmp_path, {"pyproject.toml": text, "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert outcome.code in (1, 2) and "Traceback" not in outcome.err
    if outcome.code == 1:
        assert "SPK101" in outcome.out  # nothing configured: the defaults apply


def test_pyproject_without_our_table_is_not_a_configuration(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.ruff]\nline-length = 100\n"})
    assert find_config_file(tmp_path) is None
    assert load_config(None, tmp_path) == Config()


def test_dot_spikelint_yaml_wins_over_pyproject_in_the_same_folder(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.spikelint]\nignore = ['SPK1']\n", ".spikelint.yaml": "ignore: [SPK2]\n"})
    assert find_config_file(tmp_path) == tmp_path / ".spikelint.yaml"


def test_nearest_configuration_wins(tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "ignore: [SPK1]\n", "sub/pyproject.toml": "[tool.spikelint]\nignore = ['SPK2']\n"})
    assert load_config(None, tmp_path / "sub").ignore == ("SPK2",)


def test_explicit_config_option(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {"ci/strict.yaml": "fail_on: warning\n", "values.yaml": VALUES_FLOATING})
    assert run_cli(["check"], cwd=tmp_path).code == 0
    assert run_cli(["check", "--config", "ci/strict.yaml"], cwd=tmp_path).code == 1


def test_missing_explicit_config_exits_2(tmp_path: Path, run_cli) -> None:
    outcome = run_cli(["check", "--config", "nope.yaml"], cwd=tmp_path)
    assert outcome.code == 2 and "nope.yaml" in outcome.err


# --------------------------------------------------------------------------- effects


def test_exclude_from_configuration(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {".spikelint.yaml": "exclude: ['vendor/**']\n", "vendor/values.yaml": VALUES_LATEST,
                     "values.yaml": VALUES_FLOATING})
    outcome = run_cli(["check", "--format", "json"], cwd=tmp_path)
    assert outcome.pairs() == {("values.yaml", 2, "SPK102")}


def test_severity_override(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {".spikelint.yaml": "severity: {SPK102: error, SPK101: info}\n",
                     "a/values.yaml": VALUES_FLOATING, "b/values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", "json"], cwd=tmp_path)
    severities = {f["rule"]: f["severity"] for f in outcome.json()["findings"]}
    assert severities == {"SPK102": "error", "SPK101": "info"}
    assert outcome.code == 1


def test_max_file_size_from_configuration(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {".spikelint.yaml": "max_file_size: 20\n", "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", "json"], cwd=tmp_path)
    assert outcome.pairs() == {("values.yaml", 1, "SPK003")} and outcome.code == 0


def test_globs_are_relative_to_the_configuration_folder_too(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {".spikelint.yaml": "exclude: ['deploy/vendor/**']\nper_path_ignores: {'deploy/legacy/**': [SPK101]}\n",
                     "deploy/vendor/values.yaml": VALUES_LATEST, "deploy/legacy/values.yaml": VALUES_LATEST,
                     "deploy/new/values.yaml": VALUES_LATEST})
    from_root = run_cli(["check", "--format", "json"], cwd=tmp_path)
    assert from_root.pairs() == {("deploy/new/values.yaml", 2, "SPK101")}
    from_sub = run_cli(["check", "--format", "json", "."], cwd=tmp_path / "deploy")
    assert from_sub.pairs() == {("new/values.yaml", 2, "SPK101")}
    assert from_sub.json()["summary"]["suppressed"] == 1


def test_globs_relative_to_the_current_folder_still_work(tmp_path: Path, run_cli) -> None:
    write(tmp_path, {"ci/strict.yaml": "per_path_ignores: {'legacy/**': [SPK101]}\n",
                     "legacy/values.yaml": VALUES_LATEST})
    assert run_cli(["check", "--config", "ci/strict.yaml"], cwd=tmp_path).code == 0
