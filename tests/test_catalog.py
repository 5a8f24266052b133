"""The rule catalog agrees with the specification, loads fast, rejects bad entries, and renders.

The id/name/severity contract is read from the product specification at test time, so the
catalog cannot drift from it unnoticed; the test skips when the specification is not next to
the repository (an installed copy, a source tarball).
"""

from __future__ import annotations

import ast
import io
import json
import pickletools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from spikelint.catalog import CatalogError
from spikelint.catalog import INDEX_NAME
from spikelint.catalog import load_catalog
from spikelint.catalog import read_index
from spikelint.catalog import write_index
from spikelint.catalog import rules_matching
from spikelint.catalog import unmatched_selectors
from spikelint.commands.explain import closest_rule_ids
from spikelint.commands.explain import example_language
from spikelint.commands.explain import find_rule
from spikelint.commands.explain import render_explain
from spikelint.commands.explain import render_rules
from spikelint.model import SEVERITIES
from spikelint.model import Rule

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
RULES_SPEC = SHARED / "spec" / "rules.md"
SPEC_ROW = re.compile(r"^\|\s*(SPK\d{3})\s*\|\s*([a-z0-9-]+)\s*\|\s*([^|]+?)\s*\|")
CONCERNS = {"SPK0": "meta", "SPK1": "images", "SPK2": "secrets", "SPK3": "storage", "SPK4": "checkpoint",
            "SPK5": "logs", "SPK6": "contract", "SPK7": "capacity"}
DIGEST = re.compile(r"@sha256:([0-9A-Za-z]*)")


@pytest.fixture(scope="module")
def catalog() -> dict[str, Rule]:
    return load_catalog()


def spec_rules() -> dict[str, tuple[str, str]]:
    """``{id: (name, default severity)}`` from the tables of rules.md."""
    if not RULES_SPEC.is_file():
        pytest.skip("needs the product specification (rules.md) of spikelint's development workspace, which a clone does not include")
    rules: dict[str, tuple[str, str]] = {}
    for line in RULES_SPEC.read_text(encoding="utf-8").splitlines():
        match = SPEC_ROW.match(line)
        if match:
            # "error for preemptible, warning otherwise" -> the default is the first word
            severity = match.group(3).split()[0].strip(",")
            rules[match.group(1)] = (match.group(2), severity)
    assert rules, f"no rule rows found in {RULES_SPEC}"
    return rules


# --------------------------------------------------------------------------- the contract


def test_every_rule_of_the_spec_is_in_the_catalog(catalog: dict[str, Rule]) -> None:
    spec = spec_rules()
    wrong = []
    for rule_id, (name, severity) in sorted(spec.items()):
        rule = catalog.get(rule_id)
        if rule is None:
            wrong.append(f"{rule_id}: missing (spec: {name}, {severity})")
        elif (rule.name, rule.severity) != (name, severity):
            wrong.append(f"{rule_id}: catalog has {rule.name}/{rule.severity}, spec says {name}/{severity}")
    assert not wrong, "catalog differs from rules.md:\n  " + "\n  ".join(wrong)


# Rules an issue asked for that rules.md has no row for yet; each is documented in its catalog entry.
BEYOND_SPEC = {
    "SPK108": "issue 33: the globals a committed pickle would import, as picklescan reports them",
}


def test_catalog_has_no_rule_the_spec_lacks(catalog: dict[str, Rule]) -> None:
    extra = sorted(set(catalog) - set(spec_rules()) - set(BEYOND_SPEC))
    assert not extra, f"rules not in rules.md: {extra}"
    assert not set(BEYOND_SPEC) & set(spec_rules()), "a rule the spec now has: remove it from BEYOND_SPEC"


def test_every_field_is_filled(catalog: dict[str, Rule]) -> None:
    assert len(catalog) >= 36
    for rule in catalog.values():
        for field in ("summary", "rationale", "fires_when", "does_not_fire_when", "remediation"):
            assert getattr(rule, field).strip(), f"{rule.id}: empty {field}"
        assert "\n" not in rule.summary, f"{rule.id}: summary must be one line"
        assert rule.severity in SEVERITIES
        assert rule.concern == CONCERNS[rule.id[:4]], f"{rule.id} is in {rule.concern}.yaml"
        examples = rule.examples
        if not rule.implemented:
            continue  # a reserved id (planned rule): no examples until it is implemented
        for key in ("filename", "bad", "good"):
            assert str(examples.get(key, "")).strip(), f"{rule.id}: examples.{key} missing"


def test_ids_and_names_are_unique(catalog: dict[str, Rule]) -> None:
    names = [rule.name for rule in catalog.values()]
    assert len(names) == len(set(names))
    assert list(catalog) == sorted(catalog)


def test_every_example_is_a_test(catalog: dict[str, Rule]) -> None:
    """SPK205's example is a Dockerfile, which SPK205 reads too: no rule's example is an illustration."""
    untestable = sorted(rule.id for rule in catalog.values() if rule.examples.get("testable") is False)
    assert untestable == []


def test_the_shipped_catalog_is_read_from_its_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """What keeps start-up fast: the catalog comes from ``catalog.index.json``, never from parsing the
    YAML (how fast that is, bench/import_time.py measures)."""
    import spikelint.catalog as catalog_module

    def no_yaml(folder: Path) -> dict[str, Rule]:
        raise AssertionError(f"parsed the YAML in {folder}: the index is stale")

    expected = load_catalog()
    catalog_module._shipped_catalog.cache_clear()
    monkeypatch.setattr(catalog_module, "_read_catalog", no_yaml)
    try:
        assert load_catalog() == expected
    finally:
        catalog_module._shipped_catalog.cache_clear()


# --------------------------------------------------------------------------- examples are well formed


def _examples(catalog: dict[str, Rule]) -> list[tuple[str, str, str, str]]:
    """(rule id, which, filename, text) for every bad and good example."""
    found = []
    for rule in catalog.values():
        examples = rule.examples
        if not examples:
            continue  # a reserved id (planned rule): test_every_field_is_filled says which may have none
        found.append((rule.id, "bad", examples["filename"], examples["bad"]))
        found.append((rule.id, "good", examples.get("good_filename", examples["filename"]), examples["good"]))
    return found


def test_examples_are_valid_in_their_own_format(catalog: dict[str, Rule]) -> None:
    """Syntax errors in an example would make it test the parser instead of its rule."""
    problems = []
    for rule_id, which, filename, text in _examples(catalog):
        if (rule_id, which) in (("SPK001", "bad"), ("SPK003", "bad")):
            continue  # deliberately not parseable: a broken YAML and an unrendered template
        language = example_language(filename)
        try:
            if language == "yaml":
                list(yaml.safe_load_all(text))
            elif language == "json":
                data = json.loads(text)
                if filename.endswith(".ipynb"):
                    assert data["nbformat"] == 4 and isinstance(data["cells"], list)
            elif language == "python":
                ast.parse(text)
            elif language == "pickle":
                pickletools.dis(text.encode("ascii"), out=io.StringIO())
            elif language == "bash" and shutil.which("bash"):
                subprocess.run(["bash", "-n"], input=text, text=True, check=True, capture_output=True)
            elif language not in ("dockerfile", "bash"):
                problems.append(f"{rule_id} {which}: no known format for {filename}")
        except Exception as error:  # noqa: BLE001 - reported with the example's name
            problems.append(f"{rule_id} {which} ({filename}): {type(error).__name__}: {error}")
    assert not problems, "\n".join(problems)


def test_broken_examples_are_broken(catalog: dict[str, Rule]) -> None:
    with pytest.raises(yaml.YAMLError):
        list(yaml.safe_load_all(catalog["SPK001"].examples["bad"]))
    spk003 = catalog["SPK003"].examples
    assert "/templates/" in "/" + spk003["filename"] and "{{" in spk003["bad"]
    assert "{{" not in spk003["good"]


def test_example_digests_are_well_formed(catalog: dict[str, Rule]) -> None:
    for rule_id, which, _filename, text in _examples(catalog):
        for digest in DIGEST.findall(text):
            assert re.fullmatch(r"[0-9a-f]{64}", digest), f"{rule_id} {which}: bad digest sha256:{digest}"


# --------------------------------------------------------------------------- selection


def test_rules_matching_by_prefix_and_id(catalog: dict[str, Rule]) -> None:
    secrets = rules_matching(catalog, ["SPK2"])
    assert [rule.id for rule in secrets] == [f"SPK20{n}" for n in range(1, 8)]
    assert [rule.id for rule in rules_matching(catalog, ["SPK101"])] == ["SPK101"]
    assert [rule.id for rule in rules_matching(catalog, ["spk10", " SPK7 "])] == [
        "SPK101", "SPK102", "SPK103", "SPK104", "SPK105", "SPK106", "SPK107", "SPK108", "SPK701", "SPK702", "SPK703", "SPK704",
        "SPK705"]
    assert len(rules_matching(catalog, ["SPK"])) == len(catalog)
    assert rules_matching(catalog, []) == []
    assert rules_matching(catalog, ["SPK9"]) == []
    with pytest.raises(ValueError, match="not a rule id"):
        rules_matching(catalog, ["mutable-image-tag"])


def test_unmatched_selectors(catalog: dict[str, Rule]) -> None:
    assert unmatched_selectors(catalog, ["SPK1", "SPK999", "bogus", "spk2"]) == ["SPK999", "bogus"]


def test_find_rule_and_closest_ids(catalog: dict[str, Rule]) -> None:
    assert find_rule(catalog, "spk101") is catalog["SPK101"]
    assert find_rule(catalog, "mutable-image-tag") is catalog["SPK101"]
    assert find_rule(catalog, "SPK999") is None
    assert "SPK101" in closest_rule_ids(catalog, "SPK10")
    assert "SPK101" in closest_rule_ids(catalog, "SPK108")
    assert closest_rule_ids(catalog, "mutable-tag")[0] == "SPK101"
    assert len(closest_rule_ids(catalog, "SPK1", limit=3)) == 3


# --------------------------------------------------------------------------- renderers


def test_text_table_is_aligned(catalog: dict[str, Rule]) -> None:
    lines = render_rules(catalog, "text").splitlines()
    assert lines[0].split() == ["ID", "NAME", "SEVERITY", "SUMMARY"]
    assert len(lines) == len(catalog) + 1
    name_column = lines[0].index("NAME")
    severity_column = lines[0].index("SEVERITY")
    summary_column = lines[0].index("SUMMARY")
    for line, rule in zip(lines[1:], catalog.values()):
        assert line.startswith(rule.id)
        assert line[name_column:].startswith(rule.name)
        assert line[severity_column:].startswith(rule.severity)
        assert line[summary_column:] == rule.summary


def test_json_is_a_list_of_rule_objects(catalog: dict[str, Rule]) -> None:
    data = json.loads(render_rules(catalog, "json"))
    assert [item["id"] for item in data] == list(catalog)
    first = data[0]
    for key in ("id", "name", "severity", "concern", "summary", "rationale", "fires_when",
                "does_not_fire_when", "remediation", "examples"):
        assert key in first
    assert {item["severity"] for item in data} <= set(SEVERITIES)


def test_markdown_has_a_table_and_a_section_per_rule(catalog: dict[str, Rule]) -> None:
    text = render_rules(catalog, "markdown")
    for rule in catalog.values():
        assert f"| [{rule.id}](#{rule.id.lower()}-{rule.name}) | `{rule.name}` | {rule.severity} |" in text
        assert f"\n## {rule.id} `{rule.name}`\n" in text
    fences = [line for line in text.splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0, "unbalanced code fences"
    assert "```dockerfile" in text and "```json" in text and "```python" in text and "```bash" in text


def test_unknown_format_is_rejected(catalog: dict[str, Rule]) -> None:
    with pytest.raises(ValueError, match="unknown format"):
        render_rules(catalog, "sarif")


@pytest.mark.parametrize("rule_id", ["SPK101", "SPK202", "SPK003"])
def test_explain_has_every_part(catalog: dict[str, Rule], rule_id: str) -> None:
    rule = catalog[rule_id]
    text = render_explain(rule)
    assert text.startswith(f"{rule.id} {rule.name} ({rule.severity}, {rule.concern})")
    for title in ("Why this matters", "When it fires", "When it does not fire", "How to fix", "Example",
                  "How to suppress"):
        assert f"\n{title}\n" in text, title
    assert rule.summary in text
    first_bad_line = rule.examples["bad"].strip().splitlines()[0]
    first_good_line = rule.examples["good"].strip().splitlines()[0]
    assert first_bad_line in text and first_good_line in text


def test_explain_shows_how_to_suppress(catalog: dict[str, Rule]) -> None:
    image = render_explain(catalog["SPK101"])
    assert '# spikelint: disable=SPK101 reason="' in image
    assert "# spikelint: disable-file=SPK101" in image
    assert 'spikelint.io/disable: "SPK101"' in image
    assert "per_path_ignores:" in image
    assert "pragma: allowlist secret" not in image
    secret = render_explain(catalog["SPK201"])
    assert "# pragma: allowlist secret" in secret and "pragma: allowlist nextline secret" in secret
    assert "configuration:" in render_explain(catalog["SPK103"])  # the example's config is shown
    assert "illustration" not in render_explain(catalog["SPK205"])


# --------------------------------------------------------------------------- loader validation

GOOD_ENTRY: dict[str, Any] = {
    "id": "SPK901", "name": "some-rule", "severity": "warning", "summary": "One line.",
    "rationale": "Why.", "fires_when": "When.", "does_not_fire_when": "Not when.", "remediation": "Fix.",
    "examples": {"filename": "job.yaml", "bad": "a: 1\n", "good": "a: 2\n"},
}


def _write(folder: Path, name: str, data: Any) -> None:
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    (folder / name).write_text(text, encoding="utf-8")


def test_a_valid_custom_folder_loads(tmp_path: Path) -> None:
    _write(tmp_path, "extra.yaml", {"concern": "extra", "rules": [GOOD_ENTRY]})
    rules = load_catalog(tmp_path)
    assert list(rules) == ["SPK901"] and rules["SPK901"].concern == "extra"


@pytest.mark.parametrize(("change", "message"), [
    ({"id": "SPK9"}, "'id' must look like SPK123"),
    ({"name": "Some Rule"}, "'name' must be kebab-case"),
    ({"severity": "critical"}, "'severity' must be one of error, warning, info"),
    ({"rationale": ""}, "'rationale' is required"),
    ({"summary": "two\nlines"}, "'summary' must be one line"),
    ({"colour": "red"}, "unknown key(s): colour"),
    ({"examples": {"filename": "job.yaml", "bad": "a: 1\n"}}, "'examples.good' must be a non-empty string"),
    ({"examples": {**GOOD_ENTRY["examples"], "config": ["x"]}}, "'examples.config' must be a mapping"),
    ({"examples": {**GOOD_ENTRY["examples"], "testable": "no"}}, "'examples.testable' must be true or false"),
])
def test_invalid_entries_name_file_and_rule(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    entry = {**GOOD_ENTRY, **change}
    _write(tmp_path, "extra.yaml", {"concern": "extra", "rules": [entry]})
    with pytest.raises(CatalogError) as raised:
        load_catalog(tmp_path)
    text = str(raised.value)
    assert "extra.yaml" in text and message in text
    if "id" not in change:
        assert "SPK901" in text


def test_missing_required_key_is_reported(tmp_path: Path) -> None:
    entry = {key: value for key, value in GOOD_ENTRY.items() if key != "remediation"}
    _write(tmp_path, "extra.yaml", {"concern": "extra", "rules": [entry]})
    with pytest.raises(CatalogError, match=r"extra\.yaml: SPK901: 'remediation' is required"):
        load_catalog(tmp_path)


def test_duplicates_across_files_are_reported(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", {"concern": "a", "rules": [GOOD_ENTRY]})
    _write(tmp_path, "b.yaml", {"concern": "b", "rules": [{**GOOD_ENTRY, "name": "other-rule"}]})
    with pytest.raises(CatalogError, match=r"b\.yaml: SPK901: duplicate id \(also in .*a\.yaml\)"):
        load_catalog(tmp_path)
    _write(tmp_path, "b.yaml", {"concern": "b", "rules": [{**GOOD_ENTRY, "id": "SPK902"}]})
    with pytest.raises(CatalogError, match=r"b\.yaml: SPK902: duplicate name 'some-rule' \(also SPK901\)"):
        load_catalog(tmp_path)


@pytest.mark.parametrize(("content", "message"), [
    ("concern: extra\nrules: [\n", r"extra\.yaml:\d+:\d+: invalid YAML"),
    ("- just a list\n", "must be a mapping with 'concern' and 'rules'"),
    ({"concern": "other", "rules": [GOOD_ENTRY]}, "'concern' is 'other' but the file is named 'extra.yaml'"),
    ({"concern": "extra", "rules": []}, "'rules' must be a non-empty list"),
    ({"concern": "extra", "rules": ["SPK901"]}, r"rules\[0\] must be a mapping"),
    ({"concern": "extra", "rules": [GOOD_ENTRY], "version": 2}, "unknown top-level key"),
])
def test_invalid_files_are_reported(tmp_path: Path, content: Any, message: str) -> None:
    _write(tmp_path, "extra.yaml", content)
    with pytest.raises(CatalogError, match=message):
        load_catalog(tmp_path)


def test_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no rule catalog files"):
        load_catalog(tmp_path)


def test_the_shipped_index_is_of_the_shipped_yaml() -> None:
    folder = Path(__file__).resolve().parent.parent / "rules"
    index = read_index(folder)
    assert index is not None, f"{folder / INDEX_NAME} is not of the current rules/*.yaml: run python -m spikelint.catalog"
    assert index == load_catalog(folder)


def test_an_index_of_other_yaml_is_not_used(tmp_path: Path) -> None:
    folder = Path(__file__).resolve().parent.parent / "rules"
    copy = tmp_path / "rules"
    shutil.copytree(folder, copy)
    assert read_index(copy) == load_catalog(copy)
    meta = copy / "meta.yaml"
    meta.write_text(meta.read_text(encoding="utf-8").replace("summary:", "summary: Edited.", 1), encoding="utf-8")
    assert read_index(copy) is None  # the YAML changed after the index was written: read as YAML
    write_index(copy)
    assert read_index(copy) == load_catalog(copy) and read_index(copy) != read_index(folder)
    (copy / INDEX_NAME).write_text("{not json", encoding="utf-8")
    assert read_index(copy) is None
