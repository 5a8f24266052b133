"""``spikelint precheck``: validate a run's configuration and folder before anything is loaded.

The steps of run-contract.md, in order, stopping at the first step that fails: read the
config, validate it against its contract, resolve and check the input, check the run
folder (fresh, or an explicit ``--resume`` whose manifest matches the config), then print
one JSON object.  ``--init`` creates the run folder and writes its manifest atomically.

Exit codes: 0 valid, 1 invalid (every reason printed), 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Sequence

from spikelint.util.escape import printable
from spikelint.model import Node
from spikelint.contract.config_schema import META_KEY
from spikelint.contract.config_schema import VERSION_KEY
from spikelint.run.manifest import MANIFEST_NAME
from spikelint.run.options import parse_options
from spikelint.contract.reading import ReadProblem
from spikelint.run.secret_values import masked_data
from spikelint.run.secret_values import masker
from spikelint.run.secret_values import values_in_file
from spikelint.run.secret_values import values_in_options

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
PROG = "spikelint precheck"
INPUT_KEY = "input"


@dataclass(frozen=True)
class Failure:
    """One reason the launch must not go ahead, naming what to fix and where."""

    message: str
    parameter: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "message": self.message, "path": self.path, "line": self.line,
                "column": self.column}

    def as_text(self) -> str:
        where = self.path or ""
        if self.path and self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        return f"{where}: {self.message}" if where else self.message


class Stop(Exception):
    """A step failed: the launch is invalid (exit 1)."""

    def __init__(self, step: str, failures: list[Failure]) -> None:
        super().__init__(step)
        self.step = step
        self.failures = failures


class SetupError(Exception):
    """The command cannot do its job (bad ``--schema``, an unwritable folder): exit 2."""


@dataclass(frozen=True)
class LoadedConfig:
    path: Path
    shown_path: str
    sha256: str
    root: Node
    data: dict[str, Any]


@dataclass(frozen=True)
class Contract:
    label: str
    schema: Any
    contract: bool  # a shipped run-config schema


# --------------------------------------------------------------------------- step 1: read


def read_config(path: Path, shown_path: str) -> LoadedConfig:
    from spikelint.run.manifest import sha256_bytes
    from spikelint.contract.reading import format_of
    from spikelint.contract.reading import kind_of
    from spikelint.contract.reading import parse_one
    from spikelint.contract.reading import plain_mapping
    from spikelint.contract.reading import read_text

    try:
        data, text = read_text(path)
        root = parse_one(text, format_of(path, text))
    except ReadProblem as problem:
        raise Stop("read", [Failure(f"config {problem.message}", "--config", shown_path, problem.line,
                                    problem.column)]) from None
    if root is None:
        raise Stop("read", [Failure("config is empty: a run config is a mapping with schema_version, input, "
                                    "batch_size and device", "--config", shown_path, 1, 1)])
    if root.kind != "map":
        raise Stop("read", [Failure(f"config must be a mapping of parameters, got {kind_of(root)}", "--config",
                                    shown_path, root.line, root.column)])
    try:
        values = plain_mapping(root)
    except ReadProblem as problem:
        raise Stop("read", [Failure(f"config {problem.message}", "--config", shown_path, problem.line,
                                    problem.column)]) from None
    return LoadedConfig(path, shown_path, sha256_bytes(data), root, values)


# --------------------------------------------------------------------------- step 2: the contract


def _schema_from_option(reference: str) -> Contract:
    from spikelint.contract.config_schema import is_run_contract
    from spikelint.contract.config_schema import shipped_by_reference
    from spikelint.schemas import SchemaError
    from spikelint.schemas import load_schema

    shipped = shipped_by_reference(reference)
    target = reference if Path(reference).is_file() else shipped
    if target is None:
        raise SetupError(f"--schema {reference}: no such schema file (nor a shipped schema name)")
    try:
        return Contract(reference, load_schema(target), is_run_contract(Path(reference).name))
    except SchemaError as error:
        raise SetupError(f"--schema {reference}: {error}") from None


def choose_contract(config: LoadedConfig, option: str | None) -> Contract:
    """``--schema``, else ``$schema``, else ``schema_version`` (the latest contract when it is unusable)."""
    from spikelint.contract.config_schema import intended_version
    from spikelint.contract.config_schema import is_run_contract
    from spikelint.contract.config_schema import is_url
    from spikelint.contract.config_schema import known_versions
    from spikelint.contract.config_schema import run_config_schema
    from spikelint.contract.config_schema import shipped_by_reference
    from spikelint.secrets.shown_values import shown
    from spikelint.schemas import SchemaError
    from spikelint.schemas import load_schema

    if option is not None:
        return _schema_from_option(option)
    declared = config.data.get(META_KEY)
    if isinstance(declared, str) and declared.strip():
        reference = declared.strip()
        where = config.root.key_at(META_KEY)
        candidate = config.path.parent / reference
        try:
            if not is_url(reference) and candidate.is_file():
                return Contract(reference, load_schema(str(candidate)), is_run_contract(candidate.name))
            shipped = shipped_by_reference(reference)
            if shipped is not None:
                return Contract(shipped, load_schema(shipped), is_run_contract(shipped))
        except SchemaError as error:
            raise Stop("schema", [Failure(f"$schema: {error}", META_KEY, config.shown_path,
                                          where.line if where else 1, where.column if where else 1)]) from None
        raise Stop("schema", [Failure(
            f"$schema {reference!r} names no schema spikelint can read: give a file path relative to the "
            f"config or a shipped schema name (run-config.v{max(known_versions(), default=1)}.schema.json)",
            META_KEY, config.shown_path, where.line if where else 1, where.column if where else 1)])
    versions = known_versions()
    if not versions:
        raise SetupError("no run-config schema is installed (schemas/run-config.v*.schema.json)")
    version = intended_version(config.data.get(VERSION_KEY))
    if version is None:
        version = versions[-1]  # validate anyway, so every problem is listed together
    name = run_config_schema(version)
    if name is None:
        where = config.root.key_at(VERSION_KEY)
        known = ", ".join(str(number) for number in versions)
        raise Stop("schema", [Failure(
            f"schema_version must be a known contract version ({known}), got "
            f"{shown(config.data.get(VERSION_KEY), VERSION_KEY)}", VERSION_KEY, config.shown_path,
            where.line if where else 1, where.column if where else 1)])
    return Contract(name, load_schema(name), True)


def validate(config: LoadedConfig, contract: Contract) -> list[Failure]:
    from spikelint.contract.config_schema import without_meta_key
    from spikelint.contract.violations import SchemaUnusable
    from spikelint.contract.violations import locate
    from spikelint.contract.violations import violations

    try:
        found = violations(contract.schema, without_meta_key(config.data, contract.schema), root="the config",
                           subject="the contract" if contract.contract else "the schema")
    except SchemaUnusable as error:
        raise SetupError(f"schema {contract.label}: {error}") from None
    failures = []
    for violation in found:
        place = locate(config.root, violation)
        failures.append((place.line, place.column, Failure(violation.message, violation.parameter,
                                                           config.shown_path, place.line, place.column)))
    return [failure for _, _, failure in sorted(failures, key=lambda item: (item[0], item[1]))]


# --------------------------------------------------------------------------- step 3: the input


def resolve_input(config: LoadedConfig) -> Path | None:
    """The input file, relative paths resolved from the config's folder; ``None`` when there is none."""
    from spikelint.contract.reading import regular_file_problem

    if INPUT_KEY not in config.data:
        return None
    value = config.data[INPUT_KEY]
    where = config.root.key_at(INPUT_KEY)
    line, column = (where.line, where.column) if where else (1, 1)
    if not isinstance(value, str) or not value.strip():
        raise Stop("input", [Failure("input must be a non-empty path", INPUT_KEY, config.shown_path, line, column)])
    raw = Path(value)
    resolved = Path(os.path.abspath(raw if raw.is_absolute() else config.path.parent / raw))
    problem = regular_file_problem(resolved)
    if problem is not None:
        detail = "" if raw.is_absolute() else f" (resolved from the config's folder to {resolved})"
        raise Stop("input", [Failure(f"input file {value!r} {problem}{detail}; the input must be an existing file",
                                     INPUT_KEY, config.shown_path, line, column)])
    return resolved


# --------------------------------------------------------------------------- step 4: the run folder


def check_run_dir(run_dir: Path, shown_run_dir: str, config: LoadedConfig, resume: bool) -> None:
    if not resume:
        if os.path.lexists(run_dir):
            raise Stop("run_dir", [Failure(
                f"run folder {shown_run_dir} already exists: a fresh launch needs a new folder (to recover this "
                f"run on purpose, pass --resume)", "--run-dir")])
        return
    if not os.path.lexists(run_dir):
        raise Stop("run_dir", [Failure(
            f"--resume: run folder {shown_run_dir} does not exist (drop --resume for a fresh launch)",
            "--run-dir")])
    if not run_dir.is_dir():
        raise Stop("run_dir", [Failure(f"--resume: {shown_run_dir} is not a folder", "--run-dir")])
    recorded = _recorded_config_sha(run_dir / MANIFEST_NAME, f"{shown_run_dir.rstrip('/')}/{MANIFEST_NAME}")
    if recorded != config.sha256:
        raise Stop("run_dir", [Failure(
            f"--resume: the config changed since the run started: {MANIFEST_NAME} records config SHA-256 "
            f"{recorded[:12]}…, {config.shown_path} has {config.sha256[:12]}… (resume with the original config, "
            f"or start a fresh run in a new folder)", "--config", config.shown_path)])


def _recorded_config_sha(manifest: Path, shown: str) -> str:
    from spikelint.contract.reading import JSON
    from spikelint.contract.reading import kind_of
    from spikelint.contract.reading import parse_one
    from spikelint.contract.reading import read_text

    try:
        _, text = read_text(manifest)
        root = parse_one(text, JSON)
    except ReadProblem as problem:
        reason = ("is missing: this folder was not created by a launch that can be resumed"
                  if problem.message == "does not exist" else problem.message)
        raise Stop("run_dir", [Failure(f"--resume: {MANIFEST_NAME} {reason}", "--run-dir", shown, problem.line,
                                       problem.column)]) from None
    if root is None or root.kind != "map":
        got = "empty" if root is None else kind_of(root)
        raise Stop("run_dir", [Failure(f"--resume: {MANIFEST_NAME} must be a JSON object, got {got}", "--run-dir",
                                       shown, root.line if root else 1, root.column if root else 1)])
    recorded = root.scalar("config", "sha256") if root.get("config") is not None else root.scalar("config_sha256")
    if not isinstance(recorded, str) or not recorded.strip():
        raise Stop("run_dir", [Failure(f"--resume: {MANIFEST_NAME} records no config SHA-256 (config.sha256), so "
                                       f"the recovery cannot be checked", "--run-dir", shown, root.line, root.column)])
    return recorded.strip().lower()


# --------------------------------------------------------------------------- step 6: --init


def init_run(run_dir: Path, config: LoadedConfig, contract: Contract, input_path: Path | None,
             options: argparse.Namespace, hide: Callable[[str], str] = str) -> dict[str, Any]:
    from spikelint.run.manifest import build_manifest
    from spikelint.run.manifest import code_revision
    from spikelint.run.manifest import write_json_atomic

    parameters = {key: value for key, value in config.data.items() if key != META_KEY}
    if input_path is not None:
        parameters[INPUT_KEY] = str(input_path)
    code = code_revision(Path.cwd())
    if code.revision is None:
        code = code_revision(config.path.parent)
    try:
        manifest = build_manifest(run_dir=run_dir, config_path=Path(os.path.abspath(config.path)),
                                  config_sha256=config.sha256, schema_label=contract.label,
                                  schema_version=config.data.get(VERSION_KEY), parameters=parameters,
                                  input_path=input_path, code=code, model=options.model, image=options.image,
                                  seed=options.seed)
    except OSError as error:
        raise SetupError(f"cannot hash the input: {error.strerror or error}") from None
    manifest = masked_data(manifest, hide)  # a secret in the config or an option never lands in the file
    created = False
    try:
        if not run_dir.parent.is_dir():
            run_dir.parent.mkdir(parents=True)
    except OSError as error:
        raise SetupError(f"cannot create the run folder {run_dir}: {error.strerror or error}") from None
    try:
        run_dir.mkdir()
        created = True
        write_json_atomic(run_dir / MANIFEST_NAME, manifest)
    except FileExistsError:
        raise Stop("run_dir", [Failure(f"run folder {run_dir} appeared while checking: a fresh launch needs a new "
                                       f"folder", "--run-dir")]) from None
    except OSError as error:
        if created:
            try:
                run_dir.rmdir()
            except OSError:
                pass
        raise SetupError(f"cannot create the run folder {run_dir}: {error.strerror or error}") from None
    return manifest


# --------------------------------------------------------------------------- the command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Validate a run configuration and run folder before "
                                     "launch (nothing is loaded).")
    parser.add_argument("--config", required=True, metavar="FILE", help="the run config (JSON or YAML)")
    parser.add_argument("--run-dir", required=True, metavar="DIR", help="the run folder")
    parser.add_argument("--resume", action="store_true", help="recover an existing run on purpose: the folder "
                        "must hold a manifest.json whose config SHA-256 matches the config")
    parser.add_argument("--init", action="store_true", help="create the run folder and write manifest.json "
                        "(fresh runs only)")
    parser.add_argument("--schema", metavar="SCHEMA", help="validate against this schema file or shipped schema "
                        "name instead of the one the config names")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="failure output format")
    parser.add_argument("--model", help="model reference recorded in the manifest (--init)")
    parser.add_argument("--image", help="container image reference recorded in the manifest (--init)")
    parser.add_argument("--seed", type=int, help="seed recorded in the manifest (--init)")
    return parser


def run(options: argparse.Namespace, hide: Callable[[str], str] = str) -> dict[str, Any]:
    """Steps 1–6; returns the success object or raises :class:`Stop` / :class:`SetupError`."""
    config = read_config(Path(options.config), options.config)
    contract = choose_contract(config, options.schema)
    failures = validate(config, contract)
    if failures:
        raise Stop("schema", failures)
    input_path = resolve_input(config)
    run_dir = Path(os.path.abspath(options.run_dir))
    check_run_dir(run_dir, options.run_dir, config, options.resume)
    result: dict[str, Any] = {
        "status": "configuration_validated",
        "input": str(input_path) if input_path is not None else None,
        "run_dir": str(run_dir),
        "device_requested": config.data.get("device"),
        "batch_size": config.data.get("batch_size"),
        "schema_version": config.data.get(VERSION_KEY),
    }
    if options.init:
        manifest = init_run(run_dir, config, contract, input_path, options, hide)
        result["manifest"] = str(run_dir / MANIFEST_NAME)
        result["run_id"] = manifest["run_id"]
    return result


def _report_failure(stop: Stop, fmt: str, hide: Callable[[str], str] = str) -> None:
    if fmt == "json":
        document = {"status": "configuration_invalid", "step": stop.step,
                    "errors": [masked_data(failure.as_dict(), hide) for failure in stop.failures]}
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    for failure in stop.failures:
        print(f"{PROG}: {printable(hide(failure.as_text()))}", file=sys.stderr)
    count = len(stop.failures)
    print(f"{PROG}: invalid ({stop.step}): {count} problem{'s' if count != 1 else ''}; nothing was launched",
          file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(build_parser(), argv)
    if isinstance(options, int):
        return options
    if options.init and options.resume:
        print(f"{PROG}: error: --init creates a fresh run folder; it cannot be combined with --resume",
              file=sys.stderr)
        return EXIT_USAGE
    hide = masker([*values_in_file(Path(options.config)),
                   *values_in_options((options.model, options.image, options.run_dir, options.schema))])
    try:
        result = run(options, hide)
    except Stop as stop:
        _report_failure(stop, options.format, hide)
        return EXIT_INVALID
    except SetupError as error:
        print(f"{PROG}: error: {printable(hide(str(error)))}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(json.dumps(masked_data(result, hide), ensure_ascii=False) + "\n")
    return EXIT_OK
