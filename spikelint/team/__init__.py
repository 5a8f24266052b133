"""Team rules (docs/team-rules.md): a team's own policies, written once in CEL against the model of every form."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from spikelint.config import Config
from spikelint.model import Rule
from spikelint.team.ruleset import RuleSet
from spikelint.team.ruleset import TeamRuleError

__all__ = ["RuleSet", "TeamRuleError", "catalog_with_team_rules", "rule_set_for"]


def rule_set_for(config: Config) -> RuleSet:
    """The team rules of ``config`` (empty without a rules folder); :class:`TeamRuleError` names what is wrong."""
    found = config.team_rules_folder()
    if found is None:
        return RuleSet()
    folder, shown = found
    if not folder.is_dir():
        raise TeamRuleError(f"{config.path or 'configuration'}: rules_dir {config.rules_dir!r} is not a folder "
                            f"({folder}): create it, or correct the path (relative to the configuration file)")
    from spikelint.team.rulefile import rule_files

    stamp = tuple((str(path), path.stat().st_mtime_ns, path.stat().st_size) for path in rule_files(folder))
    return _load(str(folder), shown, stamp)


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
