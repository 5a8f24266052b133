"""Variable expansion: ``$NAME``, ``${NAME:-default}``, Kubernetes ``$(NAME)``, through a lookup.

A lookup answers what a variable holds at a point of a script (shell assignments before it,
then the container's environment); what cannot be known becomes ``UNRESOLVED``, and every
expanded word keeps the written texts it was built from so findings can name them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from typing import Callable
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Located
from spikelint.facts.runconfig import UNRESOLVED

if TYPE_CHECKING:
    from spikelint.documents.shell import Script

_VARIABLE = lazy_regex(r"\$(?:\{(?P<braced>[^{}]*)\}|\((?P<paren>[^()]*)\)|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[0-9#?@*$!-]))|`[^`]*`")
_NAME = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAMETER = lazy_regex(r"^([A-Za-z_][A-Za-z0-9_]*)(:?[-=?+])(.*)$", re.DOTALL)
MAX_EXPANSION_DEPTH = 8
PLATFORM_DEFAULTS = {"TMPDIR": "/tmp"}  # unset in containers unless the image says otherwise: /tmp is used
MAX_EXPANSIONS = 200


class Variable(NamedTuple):
    """A variable's value as written, and where."""

    text: str
    where: Located


Lookup = Callable[[str, Located | None], Variable | None]


class Expanded(NamedTuple):
    """A word after expansion: unknown parts are ``UNRESOLVED``; ``sources`` are the written texts used."""

    text: str
    sources: tuple[tuple[Located, str], ...]


def expand(text: str, where: Located, lookup: Lookup, depth: int = 0, budget: list[int] | None = None) -> Expanded:
    """``$NAME``, ``${NAME}``, ``${NAME:-default}``, ``$(NAME)`` (Kubernetes) expanded through ``lookup``.

    Command substitutions (``$(date)``, backticks) and unknown variables become ``UNRESOLVED``;
    ``budget`` bounds the total work for pathological chains of variables.
    """
    sources: list[tuple[Located, str]] = [(where, text)]
    if "$" not in text and "`" not in text:
        return Expanded(text, tuple(sources))
    budget = budget if budget is not None else [MAX_EXPANSIONS]

    def substitute(match: re.Match[str]) -> str:
        if match.group(0).startswith("`"):
            return UNRESOLVED
        paren = match.group("paren")
        if paren is not None:
            if _NAME.fullmatch(paren):
                found = lookup(paren, where)
                if found is not None:
                    return _inner(found)
            return UNRESOLVED
        name = match.group("braced") if match.group("braced") is not None else match.group("plain")
        default = None
        operator = _PARAMETER.match(name or "")
        if operator:
            name, default = operator.group(1), operator.group(3) if operator.group(2) in (":-", "-", ":=", "=") \
                else None
        if not name or not _NAME.fullmatch(name):
            return UNRESOLVED
        found = lookup(name, where)
        if found is not None:
            return _inner(found)
        if default is not None:
            return expand(default, where, lookup, depth + 1, budget).text
        return PLATFORM_DEFAULTS.get(name, UNRESOLVED)

    def _inner(found: Variable) -> str:
        budget[0] -= 1
        if depth >= MAX_EXPANSION_DEPTH or budget[0] < 0:
            return UNRESOLVED
        inner = expand(found.text, found.where, lookup, depth + 1, budget)
        sources.extend(inner.sources)
        return inner.text

    result = _VARIABLE.sub(substitute, text)
    return Expanded(result, tuple(dict.fromkeys(sources)))


def script_lookup(script: Script, fallback: Lookup | None = None) -> Lookup:
    """Variables assigned in ``script`` before the point of use, else ``fallback`` (env)."""
    def lookup(name: str, at: Located | None) -> Variable | None:
        best: Variable | None = None
        for word in script.assignments.get(name) or []:
            if at is None or (word.line, word.column) < (at.line, at.column):
                best = Variable(word.text, Located(word.text, word.line, word.column, word.end_line, word.end_column))
        if best is not None:
            return best
        return fallback(name, at) if fallback is not None else None

    return lookup


def env_lookup(container: Container, extra: Lookup | None = None) -> Lookup:
    values = {str(env.name.value): env.value for env in container.env if env.value is not None}

    def lookup(name: str, at: Located | None) -> Variable | None:
        where = values.get(name)
        if where is not None:
            return Variable(str(where.value), where)
        return extra(name, at) if extra is not None else None

    return lookup
