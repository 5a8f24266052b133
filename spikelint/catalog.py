"""The rule catalog: ``rules/*.yaml`` -> :class:`~spikelint.model.Rule` metadata.

The catalog is data so that rule text is reviewed like documentation and every example can
run as a test.  Loading validates each entry and fails loudly, naming the file and rule, so a
broken catalog is caught by the first test run instead of surfacing as a half-empty SARIF
``rules`` array.  The shipped catalog is read once per process (the command line, the engine
and sub-folder configurations all ask for it); each caller gets its own dict of the frozen rules.

Every run needs the catalog, and reading it costs more than JSON does (and a YAML library a
Dockerfile or Python file does not otherwise need), so the shipped folder also holds
``catalog.index.json``: the validated rules and a digest of the YAML they were read from.  It is
used only while the digest matches; an edited YAML file is read as YAML until
``python -m spikelint.catalog`` writes the index again (a test says so).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any
from typing import Iterable
from typing import Mapping

from spikelint.util.lazyre import lazy_regex
from spikelint.model import SEVERITIES
from spikelint.model import Rule
from spikelint.util.resources import data_folder

ID_PATTERN = lazy_regex(r"^SPK\d{3}$")
NAME_PATTERN = lazy_regex(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
SELECTOR_PATTERN = lazy_regex(r"^SPK\d{0,3}$")

REQUIRED_TEXT_FIELDS = ("summary", "rationale", "fires_when", "does_not_fire_when", "remediation")
OPTIONAL_FIELDS = ("examples", "implemented", "fix")
FIX_KINDS = ("safe", "unsafe")
INDEX_NAME = "catalog.index.json"
RULE_FIELDS = frozenset(("id", "name", "severity") + REQUIRED_TEXT_FIELDS + OPTIONAL_FIELDS)
# team_rules: the text of a team rule file the example is checked with (SPK004 speaks of team rules)
EXAMPLE_FIELDS = frozenset(("filename", "good_filename", "config", "bad", "good", "testable", "team_rules"))


class CatalogError(Exception):
    """A catalog file is unreadable or an entry is invalid; the message names file and rule."""


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_file(path: Path) -> Any:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CatalogError(f"{path}: cannot read rule catalog file: {error}") from None
    try:
        return yaml.load(text, Loader=_yaml_loader())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise CatalogError(f"{path}{where}: invalid YAML: {getattr(error, 'problem', None) or error}") from None


def _check_examples(where: str, examples: Any) -> dict[str, Any]:
    """Examples become tests, so their shape is validated as strictly as the rule text."""
    if not isinstance(examples, dict):
        raise CatalogError(f"{where}: 'examples' must be a mapping")
    unknown = sorted(set(examples) - EXAMPLE_FIELDS)
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) in 'examples': {', '.join(unknown)}")
    for key in ("filename", "bad", "good"):
        value = examples.get(key)
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(f"{where}: 'examples.{key}' must be a non-empty string")
    if "good_filename" in examples and (not isinstance(examples["good_filename"], str)
                                        or not examples["good_filename"].strip()):
        raise CatalogError(f"{where}: 'examples.good_filename' must be a non-empty string")
    if "config" in examples and not isinstance(examples["config"], dict):
        raise CatalogError(f"{where}: 'examples.config' must be a mapping of configuration keys")
    if "team_rules" in examples and not isinstance(examples["team_rules"], str):
        raise CatalogError(f"{where}: 'examples.team_rules' must be the text of a team rule file")
    if "testable" in examples and not isinstance(examples["testable"], bool):
        raise CatalogError(f"{where}: 'examples.testable' must be true or false")
    return dict(examples)


def _rule_from_entry(path: Path, index: int, entry: Any, concern: str) -> Rule:
    if not isinstance(entry, dict):
        raise CatalogError(f"{path}: rules[{index}] must be a mapping, not {type(entry).__name__}")
    rule_id = entry.get("id")
    if not isinstance(rule_id, str) or not ID_PATTERN.match(rule_id):
        raise CatalogError(f"{path}: rules[{index}]: 'id' must look like SPK123, got {rule_id!r}")
    where = f"{path}: {rule_id}"
    unknown = sorted(set(entry) - RULE_FIELDS)
    if unknown:
        raise CatalogError(f"{where}: unknown key(s): {', '.join(unknown)}")
    name = entry.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise CatalogError(f"{where}: 'name' must be kebab-case (like mutable-image-tag), got {name!r}")
    severity = entry.get("severity")
    if severity not in SEVERITIES:
        raise CatalogError(f"{where}: 'severity' must be one of {', '.join(SEVERITIES)}, got {severity!r}")
    texts: dict[str, str] = {}
    for field in REQUIRED_TEXT_FIELDS:
        value = entry.get(field)
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(f"{where}: '{field}' is required and must be non-empty text")
        texts[field] = value.strip()
    if "\n" in texts["summary"]:
        raise CatalogError(f"{where}: 'summary' must be one line")
    examples = _check_examples(where, entry["examples"]) if "examples" in entry else {}
    implemented = entry.get("implemented", True)
    if not isinstance(implemented, bool):
        raise CatalogError(f"{where}: 'implemented' must be true or false")
    fix, fix_summary = _check_fix(where, entry.get("fix"))
    return Rule(
        id=rule_id,
        name=name,
        severity=severity,
        summary=texts["summary"],
        rationale=texts["rationale"],
        remediation=texts["remediation"],
        fires_when=texts["fires_when"],
        does_not_fire_when=texts["does_not_fire_when"],
        examples=examples,
        concern=concern,
        implemented=implemented,
        fix=fix,
        fix_summary=fix_summary,
    )


def _check_fix(where: str, fix: Any) -> tuple[str, str]:
    """``fix: {kind: safe|unsafe, does: text}``: whether ``spikelint fix`` fixes the rule, and how."""
    if fix is None:
        return "", ""
    if not isinstance(fix, dict) or set(fix) != {"kind", "does"}:
        raise CatalogError(f"{where}: 'fix' must be a mapping with 'kind' (safe or unsafe) and 'does'")
    if fix["kind"] not in FIX_KINDS:
        raise CatalogError(f"{where}: 'fix.kind' must be safe or unsafe, got {fix['kind']!r}")
    if not isinstance(fix["does"], str) or not fix["does"].strip():
        raise CatalogError(f"{where}: 'fix.does' must be non-empty text")
    return str(fix["kind"]), " ".join(fix["does"].split())


def load_catalog(folder: Path | None = None) -> dict[str, Rule]:
    """Every rule of ``rules/*.yaml``, keyed by id, in id order.

    ``folder`` defaults to the shipped catalog (the installed package's data, or the
    repository's ``rules/`` in a checkout).
    """
    if folder is None:
        return dict(_shipped_catalog())
    return _read_catalog(folder)


@lru_cache(maxsize=1)
def _shipped_catalog() -> dict[str, Rule]:
    folder = data_folder("rules")
    return read_index(folder) or _read_catalog(folder)


def catalog_digest(folder: Path) -> str:
    """SHA-256 of the catalog's YAML files, names and bytes, in name order."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.yaml")):
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def read_index(folder: Path) -> dict[str, Rule] | None:
    """The rules of ``folder``'s index, or ``None`` when there is none or it is not of these YAML files."""
    try:
        data = json.loads((folder / INDEX_NAME).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("digest") != catalog_digest(folder):
            return None
        return {entry["id"]: Rule(**entry) for entry in data["rules"]}
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError):
        return None


def write_index(folder: Path) -> Path:
    """Read and validate ``folder``'s YAML, and write the index of it."""
    rules = _read_catalog(folder)
    path = folder / INDEX_NAME
    data = {"digest": catalog_digest(folder), "rules": [asdict(rule) for rule in rules.values()]}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _read_catalog(folder: Path) -> dict[str, Rule]:
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise CatalogError(f"{folder}: no rule catalog files (*.yaml) found")
    rules: dict[str, Rule] = {}
    names: dict[str, str] = {}
    origin: dict[str, Path] = {}
    for path in files:
        data = _load_file(path)
        if not isinstance(data, dict):
            raise CatalogError(f"{path}: a catalog file must be a mapping with 'concern' and 'rules'")
        concern = data.get("concern")
        if not isinstance(concern, str) or not concern.strip():
            raise CatalogError(f"{path}: 'concern' is required")
        if concern != path.stem:
            raise CatalogError(f"{path}: 'concern' is {concern!r} but the file is named {path.name!r}")
        unknown = sorted(set(data) - {"concern", "rules"})
        if unknown:
            raise CatalogError(f"{path}: unknown top-level key(s): {', '.join(unknown)}")
        entries = data.get("rules")
        if not isinstance(entries, list) or not entries:
            raise CatalogError(f"{path}: 'rules' must be a non-empty list")
        for index, entry in enumerate(entries):
            rule = _rule_from_entry(path, index, entry, concern)
            if rule.id in rules:
                raise CatalogError(f"{path}: {rule.id}: duplicate id (also in {origin[rule.id]})")
            if rule.name in names:
                raise CatalogError(f"{path}: {rule.id}: duplicate name {rule.name!r} (also {names[rule.name]})")
            rules[rule.id] = rule
            names[rule.name] = rule.id
            origin[rule.id] = path
    return {rule_id: rules[rule_id] for rule_id in sorted(rules)}


def normalise_selector(selector: str) -> str:
    """``spk2`` / `` SPK2 `` -> ``SPK2``; raises ValueError for anything that is not an id or prefix."""
    text = selector.strip().upper()
    if not SELECTOR_PATTERN.match(text):
        raise ValueError(f"{selector!r} is not a rule id or prefix (expected e.g. SPK101 or SPK1)")
    return text


def rules_matching(catalog: Mapping[str, Rule], selectors: Iterable[str]) -> list[Rule]:
    """The rules selected by ids or id prefixes (``SPK2`` = all secret rules), in id order.

    A selector matches a rule when the rule's id starts with it, so a full id matches exactly
    one rule.  Selectors that match nothing are ignored here; use :func:`unmatched_selectors`
    to report them.
    """
    prefixes = tuple(normalise_selector(selector) for selector in selectors)
    if not prefixes:
        return []
    return [rule for rule_id, rule in sorted(catalog.items()) if rule_id.startswith(prefixes)]


def unmatched_selectors(catalog: Mapping[str, Rule], selectors: Iterable[str]) -> list[str]:
    """Selectors (as given) that match no rule: a typo in ``--select`` should not pass silently."""
    unmatched = []
    for selector in selectors:
        try:
            prefix = normalise_selector(selector)
        except ValueError:
            unmatched.append(selector)
            continue
        if not any(rule_id.startswith(prefix) for rule_id in catalog):
            unmatched.append(selector)
    return unmatched


def main(argv: list[str]) -> int:
    """``python -m spikelint.catalog [FOLDER]``: write the index of the catalog in FOLDER (default: rules/)."""
    folder = Path(argv[0]) if argv else data_folder("rules")
    try:
        path = write_index(folder)
    except CatalogError as error:
        print(f"spikelint: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
