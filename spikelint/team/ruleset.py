"""The team rules of one configuration, as the engine holds them (light: read on every run, rules or not)."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any

from spikelint.config import ConfigError
from spikelint.team.cel import Program
from spikelint.team.cel import compile_expression

if TYPE_CHECKING:
    from spikelint.team.rulefile import TeamRule
    from spikelint.team.secrets import SecretPattern


class TeamRuleError(ConfigError):
    """A rule file that cannot be used; the message names the file and line."""


@dataclass
class RuleSet:
    """The team rules of one configuration, each expression compiled once per process.

    Compiled programs are native objects that cannot be pickled: a process that receives the set (a spawned
    worker) compiles it again on first use.
    """

    rules: tuple[TeamRule, ...] = ()
    secrets: tuple[SecretPattern, ...] = ()
    _programs: dict[str, Program] = field(default_factory=dict, repr=False)

    def program(self, expression: str) -> Program:
        found = self._programs.get(expression)
        if found is None:
            found = self._programs[expression] = compile_expression(expression)
        return found

    def __getstate__(self) -> dict[str, Any]:
        return {"rules": self.rules, "secrets": self.secrets, "_programs": {}}

    def __bool__(self) -> bool:
        return bool(self.rules or self.secrets)
