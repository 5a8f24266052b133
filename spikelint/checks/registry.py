"""How checks declare themselves: a decorator that records metadata and returns the function."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING
from typing import Any
from typing import Callable
from typing import Iterator

if TYPE_CHECKING:
    from spikelint.config import Config
    from spikelint.discovery.project import Project
    from spikelint.model import Workload

SCOPES = ("document", "workload")


@dataclass(frozen=True)
class CheckSpec:
    """Which rules a check may report, and what it looks at.

    ``document`` checks receive ``(document, ctx)`` for documents whose kind is in
    ``kinds`` (all kinds when empty); ``workload`` checks receive
    ``(workload, document, ctx)`` for every workload the adapters found.
    """

    rules: tuple[str, ...]
    scope: str
    kinds: frozenset[str]
    function: Callable[..., Iterator[Any]]


@dataclass(frozen=True)
class CheckContext:
    """What a check may consult besides its input: configuration, the other files, the document's workloads.

    ``workloads`` are those the engine's adapter run found in the document being checked, so a
    document check that weighs them (secrets de-duplicating SPK202) needs no second run.
    """

    config: Config
    project: Project
    today: date
    workloads: tuple[Workload, ...] = ()


def check(*rules: str, scope: str = "document", kinds: tuple[str, ...] = ()) -> Callable[[Callable[..., Iterator[Any]]], Callable[..., Iterator[Any]]]:
    """Mark a function as a check for ``rules``; the function itself is unchanged."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")

    def mark(function: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        function.__spikelint_check__ = CheckSpec(tuple(rules), scope, frozenset(kinds), function)  # type: ignore[attr-defined]
        return function

    return mark


def specs_in(module: Any) -> list[CheckSpec]:
    """The checks a module defines, in definition order."""
    found = []
    for value in vars(module).values():
        spec = getattr(value, "__spikelint_check__", None)
        if isinstance(spec, CheckSpec):
            found.append(spec)
    return found
