"""The explicit table of check modules; each module's ``@check`` functions are its checks.

Check modules live in one package per rule family, named as the catalog's ``rules/<family>.yaml``
is (``tests/test_rule_families.py`` holds them there).
"""

from __future__ import annotations

import importlib

from spikelint.checks.registry import CheckSpec
from spikelint.checks.registry import specs_in

CHECK_MODULES: tuple[str, ...] = (
    "spikelint.checks.images.references",
    "spikelint.checks.images.hub",
    "spikelint.checks.images.pickles",
    "spikelint.checks.meta.charts",
    "spikelint.checks.secrets.checks",
    "spikelint.checks.contract.schema",
    "spikelint.checks.capacity.workload",
    "spikelint.checks.contract.identity",
    "spikelint.checks.storage.outputs",
    "spikelint.checks.checkpoint.resume",
    "spikelint.checks.checkpoint.code",
    "spikelint.checks.logs.workload",
    "spikelint.checks.logs.shell",
    "spikelint.checks.contract.paths_relative",
    "spikelint.checks.meta.values",
    "spikelint.checks.meta.budgets",
)


def all_checks() -> list[CheckSpec]:
    specs: list[CheckSpec] = []
    for name in CHECK_MODULES:
        specs.extend(specs_in(importlib.import_module(name)))
    return specs
