"""Team rules (docs/team-rules.md): a team's own policies, written once in CEL against the model of every form."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from spikelint.checks.registry import CheckSpec
from spikelint.config import Config
from spikelint.model import Rule
from spikelint.team.ruleset import RuleSet
from spikelint.team.ruleset import TeamRuleError

__all__ = ["RuleSet", "TeamRuleError", "catalog_with_team_rules", "rule_set_for", "team_checks",
           "with_team_companions"]


def rule_set_for(config: Config) -> RuleSet:
    """The team rules of ``config`` (empty without a rules folder), with those the sub-folder configurations
    above its files add; :class:`TeamRuleError` names what is wrong."""
    found = config.team_rules_folder()
    folders = [(Path(folder), shown) for folder, shown in config.added_rules_dirs]
    if found is not None:
        folder, shown = found
        if not folder.is_dir():
            raise TeamRuleError(f"{config.path or 'configuration'}: rules_dir {config.rules_dir!r} is not a folder "
                                f"({folder}): create it, or correct the path (relative to the configuration file)")
        folders.insert(0, (folder, shown))
    if not folders:
        return RuleSet()
    from spikelint.team.rulefile import rule_files

    sets = []
    for folder, shown in folders:
        if not folder.is_dir():
            raise TeamRuleError(f"{shown}: the rules folder is not there: create it, or correct rules_dir")
        stamp = tuple((str(path), path.stat().st_mtime_ns, path.stat().st_size) for path in rule_files(folder))
        sets.append(_load(str(folder), shown, stamp))
    return sets[0] if len(sets) == 1 else _merged(sets)


def _merged(sets: list[RuleSet]) -> RuleSet:
    """The top folder's rules and each sub-folder's, an id defined once."""
    seen: dict[str, str] = {}
    for rule_set in sets:
        written = [(rule.id, rule.file, rule.line) for rule in rule_set.rules] + \
            [(pattern.id, pattern.file, pattern.line) for pattern in rule_set.secrets]
        for item, file, line in written:
            if item in seen:
                raise TeamRuleError(f"{file}:{line}: rule id {item} is already defined in {seen[item]}: a sub-folder's "
                                    "rules add to the top ones, give each its own id")
            seen[item] = f"{file}:{line}"
    return RuleSet(tuple(rule for rule_set in sets for rule in rule_set.rules),
                   tuple(pattern for rule_set in sets for pattern in rule_set.secrets))


@lru_cache(maxsize=16)
def _load(folder: str, shown: str, stamp: tuple[tuple[str, int, int], ...]) -> RuleSet:
    """Read once per run (the options, the engine and each sub-folder configuration ask); ``stamp`` keys it to
    the files as they are now."""
    from spikelint.team.rulefile import load_rule_set

    return load_rule_set(Path(folder), shown)


def catalog_with_team_rules(catalog: dict[str, Rule], rule_set: RuleSet) -> dict[str, Rule]:
    if not rule_set.rules:
        return catalog
    return {**catalog, **{rule.id: rule.catalog_entry() for rule in rule_set.rules}}


def with_team_companions(config: Config, team: RuleSet) -> Config:
    """SPK004 goes with the team rules a run selects (``--select ACME``): a rule failing everywhere is not silent."""
    from dataclasses import replace

    from spikelint.config import selected

    if config.select and not selected("SPK004", config) and \
            not any("SPK004".startswith(prefix) for prefix in config.ignore) and \
            any(selected(rule.id, config) for rule in team.rules):
        return replace(config, select=(*config.select, "SPK004"))
    return config


def team_checks(config: Config, team: RuleSet) -> list[CheckSpec]:
    """The checks that run the team's rules and secret patterns (imported only when a team has them)."""
    from spikelint.config import selected

    checks = []
    if team.rules:
        from spikelint.team.check import team_check

        checks.append(team_check(team))
    if team.secrets and selected("SPK201", config):
        from spikelint.team.secrets import team_secrets_check

        checks.append(team_secrets_check(team.secrets))
    return checks
