"""A run's identity on disk: hashes, the Git revision, and an atomically written ``manifest.json``.

The manifest is written before the run starts and is what a recovery and ``verify-run``
trust, so it must never be seen half-written: it goes to a temporary file in the same
folder, is flushed and fsynced, renamed over the final name, and the folder is fsynced so
the rename itself survives a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import secrets
import subprocess
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from typing import NamedTuple

MANIFEST_NAME = "manifest.json"
CHUNK = 1 << 20
GIT_TIMEOUT_SECONDS = 30
VERSIONED_PACKAGES = ("torch", "numpy", "transformers")


class CodeRevision(NamedTuple):
    revision: str | None  # full commit id; None outside a Git work tree
    dirty: bool | None  # uncommitted changes to tracked files
    repository: str | None  # the work tree's top folder


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in chunks (inputs can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git(folder: Path, *arguments: str) -> str | None:
    try:
        result = subprocess.run(["git", *arguments], cwd=folder, capture_output=True, text=True,
                                timeout=GIT_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def code_revision(folder: Path) -> CodeRevision:
    """The commit checked out in ``folder`` and whether tracked files differ from it."""
    head = _git(folder, "rev-parse", "--verify", "HEAD")
    if head is None:
        return CodeRevision(None, None, None)
    top = _git(folder, "rev-parse", "--show-toplevel")
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return CodeRevision(head.strip() or None, None if status is None else bool(status.strip()),
                        top.strip() if top else None)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def utc_text(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``: ``2024-05-01T12:00:00Z``."""
    return moment.astimezone(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id(moment: datetime) -> str:
    """Sortable and unique: ``20240501T120000Z-3f2a9c1b``."""
    return f"{moment.astimezone(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(4)}"


def tool_versions() -> dict[str, str]:
    """Versions of the tools that shape the run (packages looked up without importing them)."""
    from importlib import metadata

    from spikelint import __version__

    versions = {"spikelint": __version__, "python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # noqa: BLE001 - a broken distribution must not stop a launch
            continue
    return versions


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened, e.g. Windows)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON so that readers see the old file or the whole new one, never a part.

    Never through a link: a link under the manifest's name is refused (:class:`UnsafeTarget`).
    """
    from spikelint.secrets.output_mask import mask_output
    from spikelint.util.safe_write import write_text_safely

    write_text_safely(path, mask_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n"), durable=True)
    fsync_folder(path.parent)


def build_manifest(*, run_dir: Path, config_path: Path, config_sha256: str, schema_label: str | None,
                   schema_version: Any, parameters: dict[str, Any], input_path: Path | None,
                   code: CodeRevision, model: str | None = None, image: str | None = None,
                   seed: int | None = None, moment: datetime | None = None) -> dict[str, Any]:
    """The ``run-manifest.v1`` document for a run about to start."""
    from spikelint.secrets.shown_values import redact_parameters

    moment = moment or utc_now()
    input_record = None
    if input_path is not None:
        input_record = {"path": str(input_path), "sha256": sha256_file(input_path),
                        "size": input_path.stat().st_size}
    return {
        "run_id": new_run_id(moment),
        "created": utc_text(moment),
        "run_dir": str(run_dir),
        "code": {"revision": code.revision, "dirty": code.dirty, "repository": code.repository},
        "config": {"path": str(config_path), "sha256": config_sha256},
        "schema": schema_label,
        "schema_version": schema_version if isinstance(schema_version, int) and not isinstance(schema_version, bool)
        else None,
        "parameters": redact_parameters(parameters),
        "input": input_record,
        "model": model,
        "image": image,
        "seed": seed,
        "versions": tool_versions(),
    }
