"""``spikelint rules`` and ``spikelint explain``: the catalog rendered for people and tools.

One render function per format (a table beats a branch); everything is computed from the
catalog entries, so the docs a user reads are the same text the tests check.
"""

from __future__ import annotations

import difflib
import json
import re
import textwrap
from pathlib import PurePosixPath
from typing import Any
from typing import Callable
from typing import Iterable
from typing import Mapping
from typing import NamedTuple

from spikelint.model import Rule

FORMATS = ("text", "json", "markdown")
SECRET_PREFIX = "SPK2"
META_RULES = ("SPK001", "SPK002", "SPK003")
INDENT = "  "


def _rules(catalog: Mapping[str, Rule] | Iterable[Rule]) -> list[Rule]:
    values = catalog.values() if isinstance(catalog, Mapping) else catalog
    return sorted(values, key=lambda rule: rule.id)


def example_language(filename: str) -> str:
    """Code-fence language for an example, from the name it is linted as."""
    name = PurePosixPath(filename).name
    lowered = name.lower()
    if lowered in ("dockerfile", "containerfile") or lowered.endswith(".dockerfile") or lowered.startswith("dockerfile."):
        return "dockerfile"
    suffix = PurePosixPath(lowered).suffix
    return {
        ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".ipynb": "json", ".toml": "toml",
        ".sh": "bash", ".bash": "bash", ".py": "python", ".tar": "", ".pkl": "pickle",
    }.get(suffix, "")


def _fence(text: str, language: str) -> str:
    """A fenced block whose fence is longer than any backtick run inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _indent(text: str, prefix: str = INDENT) -> str:
    return textwrap.indent(text.rstrip(), prefix, lambda line: bool(line.strip()))


# --------------------------------------------------------------------------- suppression help


class SuppressionHint(NamedTuple):
    """One way to suppress a rule: what to do, and the snippet to write (may be empty)."""

    text: str
    snippet: str = ""
    language: str = ""


def suppression_hints(rule: Rule) -> list[SuppressionHint]:
    """How to suppress ``rule``, most local first."""
    rid = rule.id
    if rid == "SPK002":
        return [
            SuppressionHint("Delete the stale comment or annotation, or remove the ids that no longer match from it."),
            SuppressionHint("To stop reporting unused suppressions altogether, in .spikelint.yaml:",
                            "ignore: [SPK002]", "yaml"),
        ]
    if rid in ("SPK001", "SPK003"):
        return [
            SuppressionHint("Exclude files that are not meant to be linted, in .spikelint.yaml:",
                            'exclude: ["tests/fixtures/**"]', "yaml"),
            SuppressionHint("or accept the finding for some paths:",
                            f'per_path_ignores:\n  "chart/templates/**": [{rid}]', "yaml"),
        ]
    hints = [
        SuppressionHint("On the offending line or the line above it (YAML, shell, Dockerfile, TOML, Python, "
                        "notebook cell source):", f'# spikelint: disable={rid} reason="why this is acceptable"'),
        SuppressionHint("For the whole file:", f'# spikelint: disable-file={rid} reason="why this is acceptable"'),
        SuppressionHint("On a Kubernetes object (metadata.annotations), for that object:",
                        f'spikelint.io/disable: "{rid}"', "yaml"),
        SuppressionHint("For paths, e.g. JSON files and notebooks that cannot hold comments, in .spikelint.yaml:",
                        f'per_path_ignores:\n  "examples/**": [{rid}]', "yaml"),
    ]
    if rid.startswith(SECRET_PREFIX):
        hints.append(SuppressionHint("detect-secrets pragmas are honoured too (same line / line above):",
                                     "# pragma: allowlist secret\n# pragma: allowlist nextline secret"))
    hints.append(SuppressionHint("A suppression that stops matching is reported as SPK002 unused-suppression."))
    return hints


# --------------------------------------------------------------------------- spikelint rules


def _rules_text(rules: list[Rule]) -> str:
    header = ("ID", "NAME", "SEVERITY", "SUMMARY")
    rows = [(rule.id, rule.name, rule.severity, rule.summary) for rule in rules]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(3)]
    lines = []
    for row in [header, *rows]:
        cells = [row[column].ljust(widths[column]) for column in range(3)]
        lines.append("  ".join([*cells, row[3]]).rstrip())
    return "\n".join(lines) + "\n"


def rule_as_dict(rule: Rule) -> dict[str, Any]:
    """The public JSON shape of one catalog entry."""
    return {
        "id": rule.id,
        "name": rule.name,
        "severity": rule.severity,
        "concern": rule.concern,
        "summary": rule.summary,
        "rationale": rule.rationale,
        "fires_when": rule.fires_when,
        "does_not_fire_when": rule.does_not_fire_when,
        "remediation": rule.remediation,
        "examples": dict(rule.examples),
        "fix": {"kind": rule.fix, "does": rule.fix_summary} if rule.fix else None,
    }


def _rules_json(rules: list[Rule]) -> str:
    return json.dumps([rule_as_dict(rule) for rule in rules], indent=2, ensure_ascii=False) + "\n"


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(rule: Rule) -> str:
    return f"{rule.id.lower()}-{rule.name}"


def _example_markdown(rule: Rule) -> list[str]:
    examples = rule.examples
    if not examples:
        return []
    filename = str(examples.get("filename", ""))
    good_filename = str(examples.get("good_filename", filename))
    parts = ["### Example", ""]
    config = examples.get("config")
    if config:
        parts += ["Configuration used for this example:", "", _fence(_yaml_snippet(config), "yaml"), ""]
    if examples.get("testable") is False:
        parts += ["_Illustration: this example cannot run as a test (the rule reads a container image tarball)._", ""]
    parts += [f"Bad (`{filename}`):", "", _fence(str(examples.get("bad", "")), example_language(filename)), ""]
    parts += [f"Good (`{good_filename}`):", "", _fence(str(examples.get("good", "")), example_language(good_filename)), ""]
    return parts


def _suppression_markdown(rule: Rule) -> list[str]:
    parts = ["### How to suppress", ""]
    for hint in suppression_hints(rule):
        parts.append(f"- {hint.text}")
        if hint.snippet:
            parts += ["", textwrap.indent(_fence(hint.snippet, hint.language), "  ")]
        parts.append("")
    return parts


def rule_markdown(rule: Rule) -> str:
    """One rule as a Markdown section (the shape of ruff's rule pages)."""
    parts = [
        f"## {rule.id} `{rule.name}`",
        "",
        f"**Severity:** {rule.severity} · **Concern:** {rule.concern}",
        "",
        rule.summary,
        "",
        "### Why is this bad?",
        "",
        rule.rationale,
        "",
        "### When it fires",
        "",
        rule.fires_when,
        "",
        "### When it does not fire",
        "",
        rule.does_not_fire_when,
        "",
        "### How to fix",
        "",
        rule.remediation,
        "",
        *_example_markdown(rule),
        *_suppression_markdown(rule),
    ]
    return "\n".join(parts).rstrip() + "\n"


def _rules_markdown(rules: list[Rule]) -> str:
    parts = ["# spikelint rules", "", "| id | name | severity | summary |", "|---|---|---|---|"]
    for rule in rules:
        parts.append(f"| [{rule.id}](#{_anchor(rule)}) | `{rule.name}` | {rule.severity} | {_markdown_cell(rule.summary)} |")
    parts.append("")
    for rule in rules:
        parts += [rule_markdown(rule), ""]
    return "\n".join(parts).rstrip() + "\n"


RENDERERS: dict[str, Callable[[list[Rule]], str]] = {
    "text": _rules_text,
    "json": _rules_json,
    "markdown": _rules_markdown,
}


def render_rules(catalog: Mapping[str, Rule] | Iterable[Rule], fmt: str = "text") -> str:
    """The rule list in ``text`` (aligned table), ``json`` (list of objects) or ``markdown``."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return renderer(_rules(catalog))


# --------------------------------------------------------------------------- spikelint explain


def _yaml_snippet(data: Mapping[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(dict(data), default_flow_style=None, sort_keys=False).rstrip()


def _section(title: str, body: str) -> list[str]:
    return [title, _indent(body), ""]


def render_explain(rule: Rule) -> str:
    """The full text of one rule: what, why, when it fires and not, examples, suppression."""
    parts = [f"{rule.id} {rule.name} ({rule.severity}, {rule.concern})", "", _indent(rule.summary), ""]
    parts += _section("Why this matters", rule.rationale)
    parts += _section("When it fires", rule.fires_when)
    parts += _section("When it does not fire", rule.does_not_fire_when)
    parts += _section("How to fix", rule.remediation)
    if rule.fix:
        how = "spikelint fix" if rule.fix == "safe" else "spikelint fix --unsafe (check what it prints)"
        parts += _section(f"Automatic fix ({rule.fix}: {how})", rule.fix_summary)
    examples = rule.examples
    if examples:
        filename = str(examples.get("filename", ""))
        good_filename = str(examples.get("good_filename", filename))
        parts.append("Example")
        if examples.get("testable") is False:
            parts.append(_indent("(an illustration: the rule reads a container image tarball, which cannot be shown inline)"))
        config = examples.get("config")
        if config:
            parts += [_indent("with this configuration:"), _indent(_yaml_snippet(config), INDENT * 3)]
        parts += [_indent(f"Bad ({filename}):"), _indent(str(examples.get("bad", "")), INDENT * 3)]
        parts += [_indent(f"Good ({good_filename}):"), _indent(str(examples.get("good", "")), INDENT * 3), ""]
    parts.append("How to suppress")
    for hint in suppression_hints(rule):
        parts.append(_indent(hint.text))
        if hint.snippet:
            parts.append(_indent(hint.snippet, INDENT * 3))
    return "\n".join(parts).rstrip() + "\n"


def find_rule(catalog: Mapping[str, Rule], query: str) -> Rule | None:
    """A rule by id (any case) or by name; ``None`` when nothing matches exactly."""
    text = query.strip()
    rule = catalog.get(text.upper())
    if rule is not None:
        return rule
    lowered = text.lower()
    return next((rule for rule in catalog.values() if rule.name == lowered), None)


def closest_rule_ids(catalog: Mapping[str, Rule], query: str, limit: int = 3) -> list[str]:
    """Ids that the user probably meant, for the 'unknown rule' message of ``explain``.

    A prefix (``SPK10``) lists its family; otherwise ids and names are ranked by similarity,
    ties in id order so the answer is stable.
    """
    text = query.strip()
    upper, lower = text.upper(), text.lower()
    found: list[str] = []
    if upper.startswith("SPK") and len(upper) < 6:
        found += [rule_id for rule_id in sorted(catalog) if rule_id.startswith(upper)]
    scored: list[tuple[float, str]] = []
    for rule_id, rule in catalog.items():
        score = max(difflib.SequenceMatcher(None, upper, rule_id).ratio(),
                    difflib.SequenceMatcher(None, lower, rule.name).ratio())
        if score >= 0.6:
            scored.append((-score, rule_id))
    found += [rule_id for _score, rule_id in sorted(scored)]
    return list(dict.fromkeys(found))[:limit]
