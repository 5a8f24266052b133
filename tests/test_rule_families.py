"""Rules, checks and fixers in step: the catalog, the check packages and the fixer table name the same rules.

The catalog is split by family (``rules/<family>.yaml``) and so is the code that reports its rules
(``spikelint/checks/<family>/``); ``@check("SPK…")`` says which rules a check may report (the
engine drops anything else it yields) and ``spikelint.fix.table.FIXERS`` which rules
``spikelint fix`` fixes.  ``tests/test_catalog.py`` holds the catalog to the specification and
to its own format; this file holds the code to the catalog.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import spikelint.checks
from spikelint.adapters.purpose import TRAINING_RULES
from spikelint.catalog import load_catalog
from spikelint.checks import CHECK_MODULES
from spikelint.checks.registry import CheckSpec
from spikelint.checks.registry import specs_in
from spikelint.fix.meaning import ERASERS
from spikelint.fix.table import FIXERS
from spikelint.model import Rule

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "spikelint"
CHECKS = PACKAGE / "checks"
RULE_ID = re.compile(r"SPK\d{3}")

#: The rules the engine and the document readers report themselves, outside any check.  A rule
#: here needs no check; each must still be reported somewhere outside ``checks/`` (a test says so).
ENGINE_RULES = {
    # unparseable-file: the readers (spikelint/documents/) when a file does not parse or is over a
    # reader's limit; checks/meta/values.py adds values no consumer can hold.
    "SPK001",
    # unused-suppression: engine.py, once every check has run on the file (it needs their findings);
    # no check can report it.
    "SPK002",
    # file-skipped: the readers (templates, binary, oversized files) and engine.py (a file with no
    # parser); checks/meta/charts.py and checks/meta/budgets.py add the per-chart and per-image counts.
    "SPK003",
}

#: Rules of the team rules' check (spikelint/team/check.py), which the engine adds when a team has rules:
#: team-rule-not-evaluated, for a rule that fails on one object.
TEAM_RULES = {"SPK004"}

#: Check modules whose checks report rules of more than one family, each with why.  Empty: every
#: module reports the rules of one family.  A module joins only when its checks must decide rules
#: of two families together (one reading, the most specific finding wins) and cannot be split.
MIXED_FAMILY_MODULES: dict[str, str] = {}


@pytest.fixture(scope="module")
def catalog() -> dict[str, Rule]:
    return load_catalog()


@pytest.fixture(scope="module")
def checks() -> dict[str, list[CheckSpec]]:
    """``{module: its checks}`` for every module of ``CHECK_MODULES``."""
    return {name: specs_in(importlib.import_module(name)) for name in CHECK_MODULES}


def declared(checks: dict[str, list[CheckSpec]]) -> set[str]:
    return {rule for specs in checks.values() for spec in specs for rule in spec.rules}


def family_of(module: str) -> str:
    """``spikelint.checks.<family>.<module>`` -> ``<family>``."""
    parts = module.split(".")
    assert len(parts) == 4 and parts[:2] == ["spikelint", "checks"], f"{module} is not spikelint.checks.<family>.<module>"
    return parts[2]


def rule_ids_named(path: Path) -> set[str]:
    """The rule ids a module's code names as a whole string (``Problem("SPK301", …)``, ``rule == "SPK202"``)."""
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_ID.fullmatch(node.value)}


def reported_outside_the_checks() -> set[str]:
    """Rule ids passed literally to ``Problem(…)`` / ``Problem.at(…)`` by modules outside ``checks/``."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if CHECKS in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            function = node.func
            name = function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else ""
            first = node.args[0]
            if name in ("Problem", "at") and isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and RULE_ID.fullmatch(first.value):
                found.add(first.value)
    return found


# --------------------------------------------------------------------------- (a) rules -> checks


def test_every_implemented_rule_has_a_check_or_is_the_engines(catalog: dict[str, Rule],
                                                               checks: dict[str, list[CheckSpec]]) -> None:
    implemented = {rule_id for rule_id, rule in catalog.items() if rule.implemented}
    unchecked = sorted(implemented - declared(checks) - ENGINE_RULES - TEAM_RULES)
    assert unchecked == [], f"implemented in the catalog but no @check declares them: {unchecked}"


def test_the_team_rules_check_declares_its_rules_and_every_team_rule() -> None:
    from spikelint.team.check import team_check
    from spikelint.team.ruleset import RuleSet
    from spikelint.team.rulefile import TeamRule

    rule = TeamRule(id="ACME001", name="x", severity="error", check="true", message="m", file="f.yaml", line=1)
    assert set(team_check(RuleSet((rule,))).rules) == {"ACME001"} | TEAM_RULES


def test_the_engine_rules_are_meta_rules_the_engine_reports(catalog: dict[str, Rule]) -> None:
    """The list above is what the code does: the readers and the engine report exactly these rules."""
    for rule_id in ENGINE_RULES:
        assert rule_id in catalog and catalog[rule_id].implemented, rule_id
        assert catalog[rule_id].concern == "meta", f"{rule_id} is in {catalog[rule_id].concern}.yaml"
    assert reported_outside_the_checks() == ENGINE_RULES


# --------------------------------------------------------------------------- (b) checks -> rules


def test_every_declared_rule_is_an_implemented_catalog_rule(catalog: dict[str, Rule],
                                                            checks: dict[str, list[CheckSpec]]) -> None:
    unknown = sorted(rule for rule in declared(checks) if rule not in catalog)
    assert unknown == [], f"@check declares rules the catalog does not have: {unknown}"
    planned = sorted(rule for rule in declared(checks) if not catalog[rule].implemented)
    assert planned == [], f"@check declares rules the catalog marks implemented: false: {planned}"


def test_every_rule_a_module_names_is_declared_by_its_family(catalog: dict[str, Rule],
                                                             checks: dict[str, list[CheckSpec]]) -> None:
    """The engine drops what a check yields for a rule it did not declare, silently: a rule id
    written in a check module must be one of its checks' rules (in a helper module, its family's)."""
    by_family: dict[str, set[str]] = {}
    for module, specs in checks.items():
        by_family.setdefault(family_of(module), set()).update(rule for spec in specs for rule in spec.rules)
    wrong = []
    for path in sorted(CHECKS.glob("*/*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        allowed = {rule for spec in checks[module] for rule in spec.rules} if module in checks \
            else by_family.get(path.parent.name, set())
        extra = sorted(rule_ids_named(path) - allowed)
        if extra:
            wrong.append(f"{module} names {extra}, declared: {sorted(allowed)}")
    assert not wrong, "\n".join(wrong)


def test_rule_tables_outside_the_checks_name_catalog_rules(catalog: dict[str, Rule]) -> None:
    for table, rules in (("adapters.purpose.TRAINING_RULES", TRAINING_RULES), ("fix.meaning.ERASERS", set(ERASERS))):
        unknown = sorted(rule for rule in rules if rule not in catalog or not catalog[rule].implemented)
        assert unknown == [], f"{table} names rules that are not implemented catalog rules: {unknown}"


# --------------------------------------------------------------------------- (c) checks live with their family


def test_the_check_packages_are_the_catalog_families(catalog: dict[str, Rule]) -> None:
    packages = {path.parent.name for path in CHECKS.glob("*/__init__.py")}
    assert packages == {rule.concern for rule in catalog.values()}
    loose = sorted(path.name for path in CHECKS.glob("*.py"))
    assert loose == ["__init__.py", "registry.py"], "a check module goes in the package of its rules' family"


def test_every_check_module_lives_in_its_familys_package(catalog: dict[str, Rule],
                                                         checks: dict[str, list[CheckSpec]]) -> None:
    wrong = []
    for module, specs in checks.items():
        package = family_of(module)
        families = sorted({catalog[rule].concern for spec in specs for rule in spec.rules if rule in catalog})
        if module in MIXED_FAMILY_MODULES:
            if len(families) < 2 or package not in families:
                wrong.append(f"{module}: listed as mixed, but reports {families} from the {package} package")
        elif families != [package]:
            wrong.append(f"{module}: reports rules of {families} but lives in spikelint.checks.{package}")
    assert not wrong, "\n".join(wrong)
    assert set(MIXED_FAMILY_MODULES) <= set(CHECK_MODULES), "MIXED_FAMILY_MODULES names modules that are gone"


def test_every_module_with_checks_is_in_the_table() -> None:
    """``CHECK_MODULES`` is explicit: a module of checks missing from it would never run."""
    found = {}
    for info in pkgutil.walk_packages(spikelint.checks.__path__, "spikelint.checks."):
        found[info.name] = bool(specs_in(importlib.import_module(info.name)))
    with_checks = {name for name, has in found.items() if has}
    assert sorted(with_checks - set(CHECK_MODULES)) == [], "add these modules to CHECK_MODULES"
    assert sorted(set(CHECK_MODULES) - with_checks) == [], "CHECK_MODULES lists modules without checks"
    assert len(CHECK_MODULES) == len(set(CHECK_MODULES))


# --------------------------------------------------------------------------- (d) fixers


def test_every_fixer_fixes_a_rule_the_catalog_says_is_fixable(catalog: dict[str, Rule]) -> None:
    """Each rule of ``FIXERS`` has ``fix: {kind: safe|unsafe}`` in the catalog, and each such rule a fixer."""
    fixed = {rule for _kind, rule in FIXERS}
    unknown = sorted(rule for rule in fixed if rule not in catalog)
    assert unknown == [], f"FIXERS names rules the catalog does not have: {unknown}"
    not_fixable = sorted(rule for rule in fixed if catalog[rule].fix not in ("safe", "unsafe"))
    assert not_fixable == [], f"FIXERS fixes rules whose catalog entry has no fix: {not_fixable}"
    promised = {rule_id for rule_id, rule in catalog.items() if rule.fix}
    assert sorted(promised - fixed) == [], "the catalog promises a fix that no fixer makes"
    assert set(ERASERS) <= fixed, "fix.meaning.ERASERS erases what a fix of a rule without a fixer sets"


def test_every_fixer_fixes_a_kind_of_file_its_rule_is_reported_in(checks: dict[str, list[CheckSpec]]) -> None:
    """A fixer for (kind, rule) can only run on findings a check reports in that kind of file
    (workload checks run on every document an adapter read workloads from)."""
    specs = [spec for module in checks.values() for spec in module]
    unreachable = sorted(f"{kind}/{rule}" for kind, rule in FIXERS if not any(
        rule in spec.rules and (spec.scope == "workload" or not spec.kinds or kind in spec.kinds) for spec in specs))
    assert unreachable == [], f"fixers for rules no check reports in that kind of file: {unreachable}"
