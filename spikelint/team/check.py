"""Team rules as a check: each rule on each workload (or each of its containers, mounts, volumes, env vars).

A rule whose expression fails on one object says so (SPK004 at that object) instead of passing silently or
stopping the run; the others go on.
"""

from __future__ import annotations

from functools import partial
from typing import Any
from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import CheckSpec
from spikelint.files import is_excluded
from spikelint.model import Document
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.team.cel import EvaluationError
from spikelint.team.cel import context
from spikelint.team.cel import evaluate
from spikelint.team.rulefile import TEMPLATE
from spikelint.team.ruleset import RuleSet
from spikelint.team.rulefile import TeamRule
from spikelint.team.anchoring import anchored_path
from spikelint.team.view import Element
from spikelint.team.view import position_of
from spikelint.team.view import workload_view

NOT_EVALUATED = "SPK004"


def team_check(rule_set: RuleSet) -> CheckSpec:
    """The check that runs ``rule_set``; it declares every rule id it may report."""
    declared = (*(rule.id for rule in rule_set.rules), NOT_EVALUATED)
    return CheckSpec(declared, "workload", frozenset(), partial(team_rules, rule_set))


def team_rules(rule_set: RuleSet, workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    path = anchored_path(document, ctx.config) if any(rule.paths for rule in rule_set.rules) else document.path
    rules = [rule for rule in rule_set.rules if (rule.applies_to == "workload" or workload.is_training)
             and (not rule.paths or is_excluded(path, rule.paths))]
    if not rules:
        return
    view = workload_view(workload)
    variables = context({"workload": view.workload.data})
    by_element: dict[str, list[TeamRule]] = {}
    for rule in rules:
        by_element.setdefault(rule.for_each, []).append(rule)
    for name, each in by_element.items():
        if name == "workload":
            for rule in each:
                yield from _judge(rule_set, rule, view.workload, variables, _label(workload, rule, view.workload, 0))
            continue
        for index, element in enumerate(view.elements[name]):
            variables.add_variable(name, element.data)  # converted once for all the rules that read it
            for rule in each:
                yield from _judge(rule_set, rule, element, variables, _label(workload, rule, element, index))


def _label(workload: Workload, rule: TeamRule, element: Element, index: int) -> str:
    """The object a finding is about, for its message and fingerprint: ``container 'trainer'``."""
    if rule.for_each == "workload":
        name = f" {workload.name.value!r}" if workload.name is not None and workload.name.value else ""
        return f"{workload.platform.label or workload.kind}{name}"
    named = element.data.get("name") or element.data.get("path") or index
    return f"{rule.for_each} {named!r}"


def _judge(rule_set: RuleSet, rule: TeamRule, element: Element, variables: Any, label: str) -> Iterator[Problem]:
    try:
        if rule.when and evaluate(rule_set.program(rule.when), variables) is not True:
            return
        held = evaluate(rule_set.program(rule.check), variables)
    except EvaluationError as error:
        yield Problem.at(NOT_EVALUATED, element.at,
                         f"team rule {rule.id} ({rule.name}) could not be evaluated on {label}: {error} — guard the "
                         f"expression (has(…), `in`, `!= null`) or fix the field it reads ({rule.file}:{rule.line})",
                         key=f"{rule.id}:{label}")
        return
    if held is True:
        return
    if held is not False:
        yield Problem.at(NOT_EVALUATED, element.at,
                         f"team rule {rule.id} ({rule.name}) could not be evaluated on {label}: its assert gave "
                         f"{held!r}, not true or false — make it a condition ({rule.file}:{rule.line})",
                         key=f"{rule.id}:{label}")
        return
    where = position_of(element, rule.at)
    message = render(rule_set, rule.message, variables)
    remediation = render(rule_set, rule.remediation, variables)
    text = f"{message} — {remediation}" if remediation else message
    yield Problem.at(rule.id, where, text, key=f"{label}:{where.value}")


def render(rule_set: RuleSet, template: str, variables: Any) -> str:
    """``{{ expression }}`` replaced by its value (the expression as written when it fails on this object)."""
    def value(found: Any) -> str:
        expression = found.group(1).strip()
        try:
            return shown(evaluate(rule_set.program(expression), variables))
        except EvaluationError:
            return "?"  # a key this object does not have: the rest of the message still says what is wrong

    return TEMPLATE.sub(value, template)


def shown(result: Any) -> str:
    """A CEL value as a message shows it: ``8``, ``true``, ``null``, ``["python", "train.py"]``."""
    import json

    if result is None or isinstance(result, (bool, list, dict)):
        return json.dumps(result)
    if isinstance(result, float) and result.is_integer():
        return f"{result:g}"
    return str(result)
