"""Which schema a run config follows: shared by SPK601/SPK602 and ``precheck``.

A config names its contract by an integer ``schema_version`` (``run-config.v{N}``), by a
``$schema`` key (a path, or a URL whose file name is a shipped schema), or is mapped to one
by the ``schemas:`` configuration (``check``) or ``--schema`` (``precheck``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from spikelint.util.lazyre import lazy_regex
from spikelint.util.resources import data_folder

RUN_CONFIG_NAME = "run-config.v{version}.schema.json"
RUN_CONFIG_PATTERN = lazy_regex(r"^run-config\.v(\d+)\.schema\.json$")
META_SCHEMA = lazy_regex(r"^https?://json-schema\.org/", re.IGNORECASE)
URL = lazy_regex(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
META_KEY = "$schema"
VERSION_KEY = "schema_version"


def is_integer(value: Any) -> bool:
    """An integer as the reading program sees it: not a bool, not ``1.0``, not ``"1"``."""
    return isinstance(value, int) and not isinstance(value, bool)


@lru_cache(maxsize=1)
def shipped_names() -> frozenset[str]:
    folder = data_folder("schemas")
    return frozenset(path.name for path in folder.glob("*.json")) if folder.is_dir() else frozenset()


def intended_version(value: Any) -> int | None:
    """The contract version a ``schema_version`` means, even when mistyped (``"1"``, ``1.0``)."""
    if is_integer(value):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def known_versions() -> list[int]:
    return sorted(int(match.group(1)) for name in shipped_names() if (match := RUN_CONFIG_PATTERN.match(name)))


def run_config_schema(version: Any) -> str | None:
    """The shipped schema for an integer ``schema_version``, if there is one."""
    if not is_integer(version):
        return None
    name = RUN_CONFIG_NAME.format(version=version)
    return name if name in shipped_names() else None


def shipped_by_reference(reference: str) -> str | None:
    """``schemas/run-config.v1.schema.json`` or ``https://…/run-config.v1.schema.json`` -> the shipped name."""
    name = PurePosixPath(reference.split("#", 1)[0].split("?", 1)[0].replace("\\", "/")).name
    return name if name in shipped_names() else None


def is_url(reference: str) -> bool:
    return bool(URL.match(reference))


def is_run_contract(name: str | None) -> bool:
    """Whether a shipped schema is one of the launch contracts (messages say "the contract")."""
    return bool(name and RUN_CONFIG_PATTERN.match(name))


def without_meta_key(data: Any, schema: Any) -> Any:
    """The config minus its ``$schema`` key, which names the contract and is not a parameter."""
    if not isinstance(data, dict) or META_KEY not in data:
        return data
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict) and META_KEY in properties:
        return data
    return {key: value for key, value in data.items() if key != META_KEY}


def version_problem(value: Any, present: bool) -> str:
    """Why ``schema_version`` cannot select a contract, naming what is accepted."""
    versions = ", ".join(str(version) for version in known_versions()) or "none"
    if not present:
        return f"missing required key 'schema_version' (the integer {versions.split(', ')[-1]})"
    if not is_integer(value):
        from spikelint.secrets.shown_values import shown

        return f"schema_version must be an integer ({versions}), got {shown(value, VERSION_KEY)}"
    return f"schema_version {value} is not a known contract version (known: {versions})"
