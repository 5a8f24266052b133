"""Team rule files (``rules_dir``, default ``.spikelint/rules/``) -> validated, compiled :class:`TeamRule` s.

Everything wrong with a rule file is said before any file is checked, naming the file, the line and what to
change: a YAML error, a key the schema does not know, a wrong type or id, an id with the reserved ``SPK``
prefix or used twice, a CEL expression that does not compile (with its column), an ``at`` the element lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Iterator

from spikelint.model import Node
from spikelint.model import Rule
from spikelint.team.cel import CompileError
from spikelint.team.ruleset import RuleSet
from spikelint.team.ruleset import TeamRuleError
from spikelint.team.secrets import SecretPattern
from spikelint.team.secrets import pattern_from_entry

DEFAULT_RULES_DIR = ".spikelint/rules"
SCHEMA = "team-rules.schema.json"
RESERVED_PREFIX = "SPK"
TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
# the fields ``at`` may name, per element (docs/team-rules.md); a map field may name one key: labels.team
AT_FIELDS = {
    "workload": ("name", "namespace", "labels", "annotations", "deadline", "deadline_seconds", "retries", "gpus",
                 "grace_period_seconds", "ttl_seconds", "priority_class", "slurm"),
    "container": ("image", "name", "gpus", "argv", "env"),
    "mount": ("path",),
    "volume": ("name",),
    "env": ("name", "value"),
}
MAP_FIELDS = ("labels", "annotations", "slurm", "env")


@dataclass(frozen=True)
class Example:
    path: str
    content: str
    line: int  # where the example is written in the rule file


@dataclass(frozen=True)
class TeamRule:
    """One rule as written; its expressions are compiled by :class:`RuleSet`."""

    id: str
    name: str
    severity: str
    check: str  # the ``assert`` expression
    message: str
    file: str  # the rule file, as displayed
    line: int
    applies_to: str = "workload"
    for_each: str = "workload"
    when: str | None = None
    at: str | None = None
    remediation: str = ""
    bad: tuple[Example, ...] = ()
    good: tuple[Example, ...] = ()
    description: str = ""  # why the team has the rule (explain, SARIF help)
    paths: tuple[str, ...] = ()  # globs: only files these match (all when empty)
    lines: dict[str, int] = field(default_factory=dict, compare=False)  # key -> the line it is written on

    def templates(self) -> list[str]:
        """The ``{{ expression }}`` parts of the message and remediation."""
        return [part.strip() for text in (self.message, self.remediation) for part in TEMPLATE.findall(text)]

    def catalog_entry(self) -> Rule:
        """The rule as the catalog lists it: ``rules``, ``explain``, SARIF's rule metadata."""
        scope = "training workloads" if self.applies_to == "training_workload" else "workloads"
        each = f", for each {self.for_each}" if self.for_each != "workload" else ""
        guard = f" when `{self.when}`" if self.when else ""
        examples: dict[str, Any] = {}
        if self.bad and self.good:
            examples = {"filename": self.bad[0].path, "bad": self.bad[0].content, "good": self.good[0].content}
            if self.good[0].path != self.bad[0].path:
                examples["good_filename"] = self.good[0].path
        return Rule(id=self.id, name=self.name, severity=self.severity,
                    summary=f"Team rule ({self.file}): `{self.check}` must hold on {scope}{each}{guard}.",
                    rationale=self.description or f"A rule of this team, defined in {self.file} line {self.line}.",
                    remediation=self.remediation or "See the rule's message.",
                    fires_when=f"`{self.check}` is false on one of the {scope}{each}{guard}.",
                    does_not_fire_when=f"`{self.check}` is true, or the rule does not apply.",
                    examples=examples, concern="team")


def rule_files(folder: Path) -> list[Path]:
    return sorted(path for pattern in ("*.yaml", "*.yml") for path in folder.rglob(pattern) if path.is_file())


def load_rule_set(folder: Path, shown: str) -> RuleSet:
    """Every rule file under ``folder`` (``shown``: how messages name it), validated and compiled."""
    rules: list[TeamRule] = []
    secrets: list[SecretPattern] = []
    seen: dict[str, str] = {}
    for path in rule_files(folder):
        display = f"{shown.rstrip('/')}/{path.relative_to(folder).as_posix()}"
        file_rules, file_secrets = _read_file(path, display)
        for rule in file_rules:
            if rule.id in seen:
                raise TeamRuleError(f"{display}:{rule.line}: rule id {rule.id} is already defined in {seen[rule.id]}: "
                                    "give each rule its own id")
            seen[rule.id] = f"{display}:{rule.line}"
        for pattern in file_secrets:
            if pattern.id in seen:
                raise TeamRuleError(f"{display}:{pattern.line}: secret pattern {pattern.id} is already defined in "
                                    f"{seen[pattern.id]}: give each pattern its own id")
            seen[pattern.id] = f"{display}:{pattern.line}"
        rules.extend(file_rules)
        secrets.extend(file_secrets)
    rule_set = RuleSet(tuple(rules), tuple(secrets))
    for rule in rules:
        _compile_all(rule_set, rule)
    return rule_set


# a field chain on a variable the rule binds: workload.labels.owner, container.image.registry (string literals
# are blanked first, and a step followed by "(" is a method: it ends the chain)
CHAIN = re.compile(r"(?<![\w.])(workload|container|mount|volume|env)((?:\s*\.\s*[A-Za-z_]\w*(?!\s*\())+)")
STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
MACRO_VARIABLE = re.compile(r"\.(?:all|exists|exists_one|map|filter)\(\s*([A-Za-z_]\w*)\s*,")  # all(mount, …)


def _compile_all(rule_set: RuleSet, rule: TeamRule) -> None:
    """Every expression of the rule compiles, reads fields the model has, and runs on a workload that has them
    all: a typo (workload.gpu_count) or a type error (workload.gpus <= "8") is said now, not as an SPK004 on
    every object of every run."""
    from spikelint.team.cel import EvaluationError
    from spikelint.team.cel import context
    from spikelint.team.cel import evaluate
    from spikelint.team.view import SHAPES
    from spikelint.team.view import probe
    from spikelint.team.view import unknown_field

    bound = {"workload"} | ({rule.for_each} if rule.for_each != "workload" else set())
    for what, expression, line in (("assert", rule.check, rule.lines.get("assert", rule.line)),
                                   ("when", rule.when, rule.lines.get("when", rule.line)),
                                   *(("template", text, rule.lines.get("message", rule.line))
                                     for text in rule.templates())):
        if not expression:
            continue
        where = f"{rule.file}:{line}: rule {rule.id}: the {what} expression `{expression}`"
        try:
            program = rule_set.program(expression)
        except CompileError as error:
            pointer = f" (column {error.column})" if error.column > 1 else ""
            raise TeamRuleError(f"{where} does not compile{pointer}: {error} — write it in CEL "
                                "(docs/team-rules.md)") from None
        plain = STRING.sub('""', expression)
        local = set(MACRO_VARIABLE.findall(plain))  # a macro's own variable: container.mounts.all(mount, …)
        for root, chain in CHAIN.findall(plain):
            if root in local:
                continue
            if root not in bound:
                raise TeamRuleError(f"{where} reads `{root}`, which this rule does not bind — for_each: {root} binds "
                                    "it (docs/model.md)")
            wrong = unknown_field(root, [step.strip() for step in chain.split(".")[1:]])
            if wrong is not None:
                known = ", ".join(sorted(_fields_at(SHAPES, wrong)))
                raise TeamRuleError(f"{where} reads `{wrong}`, which the model does not have — the fields there are "
                                    f"{known} (docs/model.md; spikelint model FILE shows them)")
        variables = context({name: probe(SHAPES[name]) for name in bound})
        try:
            evaluate(program, variables)
        except EvaluationError as error:
            if "overload" in str(error) or "Unsupported operation" in str(error):
                raise TeamRuleError(f"{where} fails on every workload that has the fields it reads: {error}") from None


def _fields_at(shapes: dict[str, Any], wrong: str) -> list[str]:
    """The fields beside the wrong one (``workload.gpu_count`` -> the workload's)."""
    shape: Any = shapes
    for step in wrong.split(".")[:-1]:
        shape = shape[step]
        if isinstance(shape, list):
            shape = shape[0]
    return list(shape) if isinstance(shape, dict) else []


def _read_file(path: Path, display: str) -> tuple[list[TeamRule], list[SecretPattern]]:
    from spikelint.documents.yamldoc import DuplicateKey
    from spikelint.documents.yamldoc import YamlError
    from spikelint.documents.yamldoc import parse_yaml
    from spikelint.schemas import describe
    from spikelint.schemas import remembered_errors

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TeamRuleError(f"{display}: cannot read the rule file: {error}") from None
    duplicates: list[DuplicateKey] = []
    try:
        trees = parse_yaml(text, duplicates)
    except YamlError as error:
        reason = str(error).splitlines()[0].removeprefix("invalid YAML: ")
        raise TeamRuleError(f"{display}:{error.line}: not valid YAML: {reason}") from None
    for duplicate in duplicates:  # the first of the two would be dropped without a word
        raise TeamRuleError(f"{display}:{duplicate.line}: the key {duplicate.key!r} is written twice in one "
                            f"mapping (first at line {duplicate.first_line}); remove one of them")
    trees = [tree for tree in trees if not (tree.kind == "scalar" and tree.value is None)]
    if not trees:
        return [], []
    if len(trees) > 1:
        raise TeamRuleError(f"{display}:{trees[1].line}: a rule file holds one YAML document (rules: and secrets:)")
    root = trees[0]
    data = root.to_python()
    for mistake in remembered_errors(SCHEMA, data):
        raise TeamRuleError(f"{display}:{_line_of(root, mistake)}: {_explain(describe(mistake), mistake)}")
    rules = [_rule(entry, node, display) for entry, node in zip(data.get("rules") or [], _items(root, "rules"))]
    secrets = [pattern_from_entry(entry, display, node.line, (_examples(entry, node, "bad"), _examples(entry, node, "good")),
                                  TeamRuleError)
               for entry, node in zip(data.get("secrets") or [], _items(root, "secrets"))]
    return rules, secrets


def _items(root: Node, key: str) -> Iterator[Node]:
    node = root.get(key)
    if node is not None and node.kind == "seq":
        yield from node.value


def _line_of(root: Node, mistake: Any) -> int:
    """Where the mistake is written: the unknown key's line, else the value's."""
    node = root.get(*mistake.absolute_path) or root
    if mistake.validator == "additionalProperties" and isinstance(mistake.instance, dict):
        extra = sorted(set(mistake.instance) - set(mistake.schema.get("properties", {})))
        where = node.key_at(extra[0]) if extra else None
        return where.line if where is not None else node.line
    return node.line


def _explain(described: str, error: Any) -> str:
    """The schema's words, with the fix for the mistakes rule authors make."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        import difflib

        known = list(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(known))
        close = difflib.get_close_matches(extra[0], known, n=1) if extra else []
        if close:
            described += f" (did you mean {close[0]!r}?)"
    if error.validator == "pattern" and list(error.absolute_path)[-1:] == ["id"]:
        if list(error.absolute_path)[:1] == ["secrets"]:
            return f"{described} — a secret pattern's id is lower-case words joined by '-', e.g. acme-api-token"
        return (f"{described} — a rule id is 2-10 capital letters or digits (starting with a letter) and three "
                "digits, e.g. ACME001")
    if error.validator == "additionalProperties" and list(error.absolute_path)[:1] == ["secrets"]:
        return (f"{described} — a secret pattern knows id, description, regex, keywords, entropy, paths, allow and "
                "examples (docs/team-rules.md)")
    if error.validator == "additionalProperties" and list(error.absolute_path)[:1] == ["rules"]:
        return (f"{described} — a rule knows id, name, description, severity, applies_to, for_each, paths, when, "
                "assert, at, message, remediation and examples (docs/team-rules.md)")
    if error.validator == "additionalProperties":
        return f"{described} — a rule file holds model:, rules: and secrets: (docs/team-rules.md)"
    if error.validator == "required":
        missing = next((key for key in error.validator_value if key not in (error.instance or {})), "")
        return f"{described} — add it: {REQUIRED_EXAMPLES[missing]}" if missing in REQUIRED_EXAMPLES else described
    return described


# what a rule or a secret pattern must say, as a line to add
REQUIRED_EXAMPLES = {
    "id": "id: ACME001 (a rule) or id: acme-api-token (a secret pattern)",
    "name": "name: harbor-images-only (kebab-case, what SARIF and `spikelint rules` show)",
    "severity": "severity: error (or warning, or info)",
    "assert": "assert: 'container.image.registry == \"harbor.example.org\"' (a CEL condition that must hold)",
    "message": "message: 'what is wrong and how to fix it'",
    "regex": "regex: 'acme_[A-Za-z0-9]{32}' (one capture group around the secret, or none)",
    "path": "path: k8s/job.yaml (the file name the example is read as)",
    "content": "content: | followed by the example file's lines, indented",
}


def _rule(entry: dict[str, Any], node: Node, display: str) -> TeamRule:
    rule_id = entry["id"]
    line = (node.get("id") or node).line
    if rule_id.startswith(RESERVED_PREFIX):
        raise TeamRuleError(f"{display}:{line}: rule id {rule_id}: the {RESERVED_PREFIX} prefix is reserved for "
                            "spikelint's own rules — use your team's prefix, e.g. ACME001")
    for_each = entry.get("for_each", "workload")
    at = entry.get("at")
    if at is not None:
        head, _, key = at.partition(".")
        allowed = AT_FIELDS[for_each]
        if head not in allowed or (key and head not in MAP_FIELDS):
            where = (node.get("at") or node).line
            maps = [name for name in allowed if name in MAP_FIELDS]
            keyed = f" (a map field may name a key: {maps[0]}.NAME)" if maps else ""
            raise TeamRuleError(f"{display}:{where}: rule {rule_id}: at: {at} is not a field of a {for_each} — name "
                                f"one of {', '.join(allowed)}{keyed}")
    lines = {key: written.line for key in entry if (written := node.key_at(key)) is not None}
    return TeamRule(id=rule_id, name=entry["name"], severity=entry["severity"], check=entry["assert"],
                    message=entry["message"], file=display, line=line,
                    applies_to=entry.get("applies_to", "workload"), for_each=for_each, when=entry.get("when"),
                    at=at, remediation=entry.get("remediation", ""), bad=_examples(entry, node, "bad"),
                    good=_examples(entry, node, "good"), description=entry.get("description", ""),
                    paths=tuple(entry.get("paths") or ()), lines=lines)


def _examples(entry: dict[str, Any], node: Node, kind: str) -> tuple[Example, ...]:
    """The ``bad`` or ``good`` examples of a rule or pattern, each with the line it is written on."""
    example_nodes = node.get("examples")
    listed = example_nodes.get(kind) if example_nodes is not None else None
    nodes = list(listed.value) if listed is not None and listed.kind == "seq" else []
    return tuple(Example(item["path"], item["content"], where.line)
                 for item, where in zip((entry.get("examples") or {}).get(kind) or [], nodes))
