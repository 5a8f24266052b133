"""The explicit table of check modules; each module's ``@check`` functions are its checks."""

from __future__ import annotations

import importlib

from spikelint.checks.registry import CheckSpec
from spikelint.checks.registry import specs_in

CHECK_MODULES: tuple[str, ...] = (
    "spikelint.checks.images",
    "spikelint.checks.hub",
    "spikelint.checks.charts",
    "spikelint.checks.secrets",
    "spikelint.checks.contract",
    "spikelint.checks.capacity",
    "spikelint.checks.identity",
    "spikelint.checks.storage",
    "spikelint.checks.checkpoint",
    "spikelint.checks.checkpoint_code",
    "spikelint.checks.logs_workload",
    "spikelint.checks.logs_shell",
    "spikelint.checks.paths_relative",
    "spikelint.checks.values",
    "spikelint.checks.budgets",
)


def all_checks() -> list[CheckSpec]:
    specs: list[CheckSpec] = []
    for name in CHECK_MODULES:
        specs.extend(specs_in(importlib.import_module(name)))
    return specs
