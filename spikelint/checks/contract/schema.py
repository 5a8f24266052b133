"""SPK601/SPK602: run configs against their versioned contract.

A config is mapped to a JSON Schema by the ``schemas:`` configuration (globs relative to the
configuration's folder), by a ``$schema`` key or a ``# yaml-language-server: $schema=``
comment, or by an integer ``schema_version`` naming a shipped ``run-config.v{N}`` schema.
Every violation is one finding at the offending key.  Workload documents (Kubernetes,
Run:ai), JSON Schemas, run-folder manifests and tool configuration files are not run configs.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from typing import Any
from typing import Iterator
from typing import NamedTuple

from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import Problem
from spikelint.util.pathnames import base_name
from spikelint.contract.config_schema import META_KEY
from spikelint.contract.config_schema import META_SCHEMA
from spikelint.contract.config_schema import VERSION_KEY
from spikelint.contract.config_schema import intended_version
from spikelint.contract.config_schema import is_integer
from spikelint.contract.config_schema import is_run_contract
from spikelint.contract.config_schema import is_url
from spikelint.contract.config_schema import known_versions
from spikelint.contract.config_schema import run_config_schema
from spikelint.contract.config_schema import shipped_by_reference
from spikelint.contract.config_schema import without_meta_key
from spikelint.secrets.shown_values import shown
from spikelint.schemas import NOT_READ

if TYPE_CHECKING:
    from spikelint.checks.registry import CheckContext
    from spikelint.model import Document

CONFIG_KINDS = (FileKind.YAML, FileKind.JSON, FileKind.TOML)
# Contract-style keys (normalised: lower case, '-' read as '_') and the parameter each stands for.
CONTRACT_KEYS = {"input": "input", "input_path": "input", "input_file": "input", "batch_size": "batch_size",
                 "device": "device"}
# Files that belong to tools, never to a run: not run configs unless `schemas:` maps them.
TOOL_FILES = frozenset((
    ".spikelint.yaml", ".spikelint.yml", "pyproject.toml", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml",
    "package.json", "package-lock.json", "tsconfig.json", "composer.json", ".gitlab-ci.yml", "mkdocs.yml",
    "environment.yml", "environment.yaml", "conda.yaml", "dependabot.yml", "renovate.json", "cargo.toml",
))
MODELINE = lazy_regex(r"^#\s*yaml-language-server:\s*\$schema=(\S+)", re.MULTILINE)
REST_WORKLOAD_KEYS = ("projectId", "clusterId")
RUN_FOLDER_KEYS = ("run_id",)


class SchemaChoice(NamedTuple):
    """The schema a config is mapped to, or why the mapping cannot be used."""

    label: str
    schema: Any
    origin: str  # "configuration", "$schema", "schema_version"
    problem: str | None
    anchor: Located
    contract: bool  # a shipped run-config schema: messages speak of "the contract"


# --------------------------------------------------------------------------- which documents


def is_workload_document(root: Node) -> bool:
    """Kubernetes / Run:ai CRD objects and Run:ai REST bodies are workloads, not run configs."""
    if "apiVersion" in root.value and "kind" in root.value:
        return True
    spec = root.get("spec")
    return spec is not None and spec.kind == "map" and (
        any(key in root.value for key in REST_WORKLOAD_KEYS) or "name" in root.value)


def is_json_schema(root: Node) -> bool:
    meta = root.scalar(META_KEY)
    if isinstance(meta, str) and META_SCHEMA.match(meta):
        return True
    return root.scalar("type") == "object" and root.get("properties") is not None and (
        "$id" in root.value or "$defs" in root.value or "definitions" in root.value or "required" in root.value)


def is_run_folder_file(root: Node) -> bool:
    return any(key in root.value for key in RUN_FOLDER_KEYS)


def candidate_trees(document: Document, mapped_by_configuration: bool) -> Iterator[Node]:
    """The top-level mappings of ``document`` that may be run configs."""
    if not mapped_by_configuration and base_name(document.path).lower() in TOOL_FILES:
        return
    for root in document.trees:
        if root.kind != "map" or is_workload_document(root) or is_json_schema(root):
            continue
        if not mapped_by_configuration and is_run_folder_file(root):
            continue
        yield root


def contract_keys(root: Node) -> set[str]:
    """The launch-contract parameters a config's top level names."""
    return {CONTRACT_KEYS[name] for key in root.value
            if (name := key.strip().lower().replace("-", "_")) in CONTRACT_KEYS}


CONTRACT_SHARE = 3  # contract parameters are at least a third of a launch config's top-level keys


def follows_contract(root: Node) -> bool:
    """Looks like a launch config: two contract parameters that make up a good part of it, or one next to a
    ``schema_version`` key.  A framework's recipe (torchtune: ``batch_size`` and ``device`` among twenty
    sections of model, optimizer and dataset) has the words but is not written to the contract."""
    found = contract_keys(root)
    if VERSION_KEY in root.value and found:
        return True
    return len(found) >= 2 and len(found) * CONTRACT_SHARE >= len(root.value)


# --------------------------------------------------------------------------- which schema


def _relative_to(path: str, folder: str) -> str:
    return PurePosixPath(os.path.relpath(os.path.abspath(path), os.path.abspath(folder)).replace(os.sep, "/")).as_posix()


def configured_schema(document: Document, ctx: CheckContext) -> str | None:
    """The ``schemas:`` entry whose glob matches this file (relative to the configuration's folder)."""
    from spikelint.files import matches_glob

    if not ctx.config.schemas:
        return None
    relative = _relative_to(document.source.abspath, ctx.config.root)
    for glob, target in ctx.config.schemas.items():
        if matches_glob(relative, glob) or matches_glob(document.path, glob):
            return target
    return None


def _project_schema(candidate: str, ctx: CheckContext) -> tuple[bool, Any, str | None]:
    """The schema at ``candidate`` if it is one of the scanned files: (found, schema, problem)."""
    wanted = os.path.normpath(os.path.abspath(candidate))
    for source in ctx.project.sources:
        if os.path.normpath(os.path.abspath(source.abspath)) != wanted:
            continue
        schema_document = ctx.project.document(source)
        if schema_document.problems or len(schema_document.trees) != 1:
            return True, None, "it is not a readable JSON/YAML document"
        from spikelint.contract.reading import ReadProblem
        from spikelint.contract.reading import plain

        try:
            return True, plain(schema_document.trees[0], limit=1_000), None
        except ReadProblem as problem:
            return True, None, problem.message
    return False, None, None


def _load_reference(reference: str, base: str, ctx: CheckContext) -> tuple[bool, Any, str | None, str | None]:
    """Resolve a schema reference: (found, schema, problem, shipped name).

    Only files inside the project (the configuration's folder, links resolved) and the shipped
    schemas are read: a scanned file must not make the gate open ``/proc/self/environ`` or a
    runner's files, so any other path is found, with the reason it was not used.
    """
    from spikelint.schemas import SchemaError
    from spikelint.schemas import load_schema
    from spikelint.schemas import outside_reason

    shipped = shipped_by_reference(reference)
    if not is_url(reference):
        candidate = os.path.join(base, reference)
        found, schema, problem = _project_schema(candidate, ctx)
        if found:
            return True, schema, problem, None
        refused = outside_reason(reference, candidate, ctx.config.root)
        if refused is not None:
            return True, None, refused, None
        if os.path.isfile(candidate):
            try:
                return True, load_schema(candidate), None, None
            except SchemaError as error:
                return True, None, str(error), None
    if shipped is None:
        return False, None, None, None
    return True, load_schema(shipped), None, shipped


def choose_schema(root: Node, document: Document, ctx: CheckContext) -> SchemaChoice | None:
    """The schema this config is mapped to; ``None`` when it is not mapped (or only to an unknown URL)."""
    top = Located(None, 1, 1)
    target = configured_schema(document, ctx)
    if target is not None:
        found, schema, problem, shipped = _load_reference(target, ctx.config.root, ctx)
        if not found:
            problem = "no such schema file"
        return SchemaChoice(target, schema, "configuration",
                            f"schemas: maps this file to '{target}', which cannot be used: {problem}" if problem else None,
                            top, is_run_contract(shipped or _basename(target)))
    for reference, anchor in _declared_references(root, document):
        folder = os.path.dirname(document.source.abspath) or "."
        found, schema, problem, shipped = _load_reference(reference, folder, ctx)
        if found:
            return SchemaChoice(reference, schema, META_KEY,
                                f"$schema '{reference}' cannot be used: {problem}" if problem else None,
                                anchor, is_run_contract(shipped or _basename(reference)))
    version = intended_version(root.scalar(VERSION_KEY))
    if version is not None and contract_keys(root):
        anchor = root.key_at(VERSION_KEY) or top
        name = run_config_schema(version)
        if name is None:
            versions = ", ".join(str(number) for number in known_versions())
            return SchemaChoice(f"run-config.v{version}", None, VERSION_KEY,
                                f"schema_version must be a known contract version ({versions}), got "
                                f"{shown(root.scalar(VERSION_KEY), VERSION_KEY)}", anchor, True)
        from spikelint.schemas import load_schema

        return SchemaChoice(name, load_schema(name), VERSION_KEY, None, anchor, True)
    return None


def _basename(reference: str) -> str:
    return PurePosixPath(reference.replace("\\", "/")).name


def _declared_references(root: Node, document: Document) -> Iterator[tuple[str, Located]]:
    meta = root.get(META_KEY)
    if meta is not None and isinstance(meta.value, str) and meta.value.strip() and "node_modules" not in meta.value:
        yield meta.value.strip(), root.key_at(META_KEY) or meta.located()
    if document.kind == FileKind.YAML:
        match = MODELINE.search(document.text[:4096])
        if match:
            line = document.text[: match.start()].count("\n") + 1
            yield match.group(1), Located(match.group(1), line, 1)


# --------------------------------------------------------------------------- the rules


def _lacks_version(root: Node) -> bool:
    return not is_integer(root.scalar(VERSION_KEY))


def _is_version_violation(path: tuple[Any, ...], key: str | None) -> bool:
    return path == (VERSION_KEY,) or (path == () and key == VERSION_KEY)


@check("SPK601", kinds=CONFIG_KINDS)
def config_schema_violation(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Each violation of the config's schema, at the offending key."""
    from spikelint.contract.reading import ReadProblem
    from spikelint.contract.reading import plain
    from spikelint.contract.violations import SchemaUnusable
    from spikelint.contract.violations import locate
    from spikelint.contract.violations import violations

    mapped = configured_schema(document, ctx) is not None
    for root in candidate_trees(document, mapped):
        choice = choose_schema(root, document, ctx)
        if choice is None:
            continue
        declared = choice.origin == META_KEY  # the file's own editor hint: another tool's unless a run config
        if choice.problem is not None:
            if not declared or NOT_READ in choice.problem or follows_contract(root):
                yield Problem.at("SPK601", choice.anchor, choice.problem, key=choice.problem,
                                 severity="warning" if declared else None)
            continue
        try:
            data = without_meta_key(plain(root), choice.schema)
            found = violations(choice.schema, data, root="the config",
                               subject="the contract" if choice.contract else "the schema")
        except ReadProblem as problem:
            message = f"the config {problem.message}: it cannot be checked against '{choice.label}'"
            yield Problem("SPK601", problem.line or 1, problem.column or 1, message, key=message)
            continue
        except SchemaUnusable as error:
            if not declared or follows_contract(root):
                message = f"schema '{choice.label}' cannot be used: {error}"
                yield Problem.at("SPK601", choice.anchor, message, key=message,
                                 severity="warning" if declared else None)
            continue
        version_reported_elsewhere = _lacks_version(root)  # SPK602 speaks for schema_version
        for violation in found:
            if version_reported_elsewhere and _is_version_violation(violation.path, violation.key):
                continue
            place = locate(root, violation)
            yield Problem("SPK601", place.line, place.column, violation.message, end_line=place.end_line,
                          end_column=place.end_column, key=f"{violation.parameter}: {violation.message}")


@check("SPK602", kinds=CONFIG_KINDS)
def missing_schema_version(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A launch config without an integer ``schema_version`` cannot be rejected by version."""
    mapped = configured_schema(document, ctx) is not None
    for root in candidate_trees(document, mapped):
        if not _lacks_version(root):
            continue
        if not (mapped or follows_contract(root) or _declares_run_contract(root, document, ctx)):
            continue
        line = 1 if root is document.trees[0] else root.line
        yield Problem("SPK602", line, 1, _version_message(root), key="schema_version",
                      legacy_key=f"schema_version {line}")  # the line moved with every edit above it


def _declares_run_contract(root: Node, document: Document, ctx: CheckContext) -> bool:
    """``$schema`` names a launch contract (another tool's schema says nothing about versions)."""
    choice = choose_schema(root, document, ctx)
    return choice is not None and choice.contract


def _version_message(root: Node) -> str:
    latest = max(known_versions(), default=1)
    node = root.get(VERSION_KEY)
    if node is None:
        return (f"run config has no schema_version: add 'schema_version: {latest}' so the program can reject a "
                f"config written for another contract version before it loads anything")
    value = node.value if node.kind == "scalar" else ([] if node.kind == "seq" else {})
    return f"schema_version must be an integer (write schema_version: {latest}, unquoted), got {shown(value, VERSION_KEY)}"
