"""Checkpoint discipline that the smoke test exercises (the reference implementation).

Write: a temporary file in the same folder, flushed and fsynced, renamed over the final name,
then the folder fsynced; the previous good checkpoint stays until the new one is complete
(keep two). Read: ``torch.load(weights_only=True)`` only, newest first; a checkpoint that
does not load or validate is reported and refused, never silently skipped and never
retried with ``weights_only=False``.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import time
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from typing import Callable
from typing import NamedTuple

import torch

from spikelint import __version__

CHECKPOINT_FORMAT = "spikelint-smoke-checkpoint/1"
KEEP = 2
_NAME = re.compile(r"^step-(\d{8})\.rank(\d+)\.pt$")
_TEMPORARY = re.compile(r"^\.step-(\d{8})\.rank(\d+)\.pt\.tmp-\d+$")
_END_OF_ARCHIVE = b"PK\x05\x06"
_TAIL_BYTES = 65536 + 22  # the record plus the longest possible archive comment


class CheckpointFile(NamedTuple):
    step: int
    rank: int
    path: Path


class Refusal(NamedTuple):
    """A checkpoint the loader would not use, and why."""

    path: str
    step: int
    reason: str


class WriteResult(NamedTuple):
    path: Path
    size_bytes: int
    write_s: float


class LoadedCheckpoint(NamedTuple):
    step: int
    path: Path
    payload: dict[str, Any]
    read_s: float


class CheckpointRefused(Exception):
    """A checkpoint file that must not be resumed from."""


def checkpoint_name(step: int, rank: int) -> str:
    return f"step-{step:08d}.rank{rank}.pt"


def list_checkpoints(folder: Path, rank: int) -> list[CheckpointFile]:
    """This rank's complete (renamed) checkpoints, newest first."""
    found: list[CheckpointFile] = []
    if not folder.is_dir():
        return found
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match and int(match.group(2)) == rank:
            found.append(CheckpointFile(int(match.group(1)), rank, entry))
    return sorted(found, key=lambda item: item.step, reverse=True)


def fsync_folder(folder: Path) -> None:
    """Make the rename itself durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_bytes_with_pause(handle: Any, data: bytes, pause: Callable[[str], None], temporary: Path) -> None:
    """Write half, make it durable, and wait (the parent kills the process here)."""
    half = len(data) // 2
    handle.write(data[:half])
    handle.flush()
    os.fsync(handle.fileno())
    pause(str(temporary))
    handle.write(data[half:])


def save_atomically(
    path: Path, payload: Any, pause: Callable[[str], None] | None = None, durable: bool = True
) -> WriteResult:
    """tmp in the same folder + flush + fsync + rename + folder fsync; ``pause`` stops mid-write.

    ``durable=False`` (files that only hand data to the parent) keeps the rename, skips the fsyncs.
    """
    started = time.perf_counter()
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "wb") as handle:
        if pause is None:
            torch.save(payload, handle)
        else:
            buffer = io.BytesIO()
            torch.save(payload, buffer)
            _write_bytes_with_pause(handle, buffer.getvalue(), pause, temporary)
        handle.flush()
        if durable:
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    if durable:
        fsync_folder(path.parent)
    return WriteResult(path, path.stat().st_size, time.perf_counter() - started)


def checkpoint_payload(step: int, rank: int, world_size: int, job_state: dict[str, Any]) -> dict[str, Any]:
    """What a checkpoint holds; versions are strings so the weights-only loader accepts them."""
    return {
        "format": CHECKPOINT_FORMAT,
        "step": step,
        "rank": rank,
        "world_size": world_size,
        "job": job_state,
        "meta": {
            "torch": str(torch.__version__),
            "spikelint": str(__version__),
            "written_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        },
    }


def write_checkpoint(
    folder: Path,
    step: int,
    rank: int,
    world_size: int,
    job_state: dict[str, Any],
    pause: Callable[[str], None] | None = None,
) -> WriteResult:
    path = folder / checkpoint_name(step, rank)
    return save_atomically(path, checkpoint_payload(step, rank, world_size, job_state), pause)


def prune_checkpoints(folder: Path, rank: int, keep: int = KEEP) -> list[Path]:
    """Delete all but the newest ``keep``; called only after the new one is durable on every rank."""
    removed = []
    for old in list_checkpoints(folder, rank)[keep:]:
        old.path.unlink(missing_ok=True)  # a deletion lost in a crash only leaves one file too many
        removed.append(old.path)
    return removed


def remove_stale_temporaries(folder: Path, rank: int) -> list[Path]:
    """Torn writes of a killed process: never loadable (they were never renamed), removed at start."""
    removed = []
    if folder.is_dir():
        for entry in folder.iterdir():
            match = _TEMPORARY.match(entry.name)
            if match and int(match.group(2)) == rank:
                entry.unlink(missing_ok=True)
                removed.append(entry)
    return removed


def explain_load_error(error: BaseException) -> str:
    """One line that says whether the file is damaged or holds objects the safe loader refuses."""
    text = str(error)
    if isinstance(error, pickle.UnpicklingError) and "Weights only load failed" in text:
        detail = next((line.strip() for line in text.splitlines() if "Unsupported" in line), "")
        detail = detail.split(" was not an allowed global")[0].replace("WeightsUnpickler error: ", "")
        return (
            "cannot be loaded with torch.load(weights_only=True)"
            + (f" ({detail})" if detail else "")
            + "; store NumPy arrays as tensors and versions as strings"
        )
    first_line = text.splitlines()[0] if text else ""
    return f"damaged or incomplete ({type(error).__name__}: {first_line[:200]})"


def validate_payload(payload: Any, step: int, rank: int, world_size: int) -> dict[str, Any]:
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointRefused(f"not a {CHECKPOINT_FORMAT} file")
    for key, expected in (("step", step), ("rank", rank), ("world_size", world_size)):
        if payload.get(key) != expected:
            raise CheckpointRefused(f"records {key} {payload.get(key)!r}, expected {expected!r}")
    if not isinstance(payload.get("job"), dict):
        raise CheckpointRefused("has no job state")
    return payload


def check_complete(path: Path) -> None:
    """A torch checkpoint is a zip archive, which ends with its end-of-central-directory record.

    A truncated or half-written file lacks it; saying so is clearer than the unpickler's error.
    """
    size = path.stat().st_size
    if size == 0:
        raise CheckpointRefused("empty file (0 bytes)")
    with open(path, "rb") as handle:
        handle.seek(max(0, size - _TAIL_BYTES))
        tail = handle.read()
    if _END_OF_ARCHIVE not in tail:
        raise CheckpointRefused(f"truncated or incomplete: no end-of-archive record in its {size} bytes")


def load_checkpoint(candidate: CheckpointFile, world_size: int) -> LoadedCheckpoint:
    """Load and validate one file with the weights-only unpickler (no code runs from the file)."""
    started = time.perf_counter()
    check_complete(candidate.path)
    try:
        payload = torch.load(candidate.path, weights_only=True)
    except Exception as error:  # corrupt zip, refused global, I/O error: all refuse the file
        raise CheckpointRefused(explain_load_error(error)) from None
    valid = validate_payload(payload, candidate.step, candidate.rank, world_size)
    return LoadedCheckpoint(candidate.step, candidate.path, valid, time.perf_counter() - started)


def newest_valid(
    folder: Path, rank: int, world_size: int, at_most: int | None = None
) -> tuple[LoadedCheckpoint | None, list[Refusal]]:
    """The newest checkpoint (at or below ``at_most``) that loads and validates, and the refused ones."""
    refusals: list[Refusal] = []
    for candidate in list_checkpoints(folder, rank):
        if at_most is not None and candidate.step > at_most:
            continue
        try:
            return load_checkpoint(candidate, world_size), refusals
        except CheckpointRefused as refused:
            refusals.append(Refusal(str(candidate.path), candidate.step, str(refused)))
    return None, refusals


def quarantine(path: Path) -> Path:
    """Move a refused checkpoint aside so it is neither retried nor counted among the two kept."""
    target = path.with_name(path.name + ".damaged")
    os.replace(path, target)
    return target
