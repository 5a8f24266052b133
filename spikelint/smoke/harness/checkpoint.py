"""Checkpoint discipline that the smoke test exercises (the reference implementation).

Write: a temporary file in the same folder, flushed and fsynced, renamed over the final name,
then the folder fsynced; the previous good checkpoint stays until the new one is complete
(keep two). Read: ``torch.load(weights_only=True)`` only, newest first; a checkpoint that
does not load or validate is reported and refused, never silently skipped and never
retried with ``weights_only=False``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import re
import stat
import time
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterator
from typing import Mapping
from typing import NamedTuple

import torch

from spikelint import __version__

CHECKPOINT_FORMAT = "spikelint-smoke-checkpoint/1"
KEEP = 2
_NAME = re.compile(r"^step-(\d{8})\.rank(\d+)\.pt$")
_TEMPORARY = re.compile(r"^\.step-(\d{8})\.rank(\d+)\.pt(?:\.sha256)?\.tmp-\d+$")
CHECKSUM_SUFFIX = ".sha256"
_HASH_CHUNK = 1 << 20
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


def file_sha256(descriptor: int) -> str:
    digest = hashlib.sha256()
    os.lseek(descriptor, 0, os.SEEK_SET)
    while chunk := os.read(descriptor, _HASH_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def checksum_path(path: Path) -> Path:
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def _write_small_file_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def save_atomically(
    path: Path,
    payload: Any,
    pause: Callable[[str], None] | None = None,
    durable: bool = True,
    checksum: bool = False,
) -> WriteResult:
    """tmp in the same folder + flush + fsync + rename + folder fsync; ``pause`` stops mid-write.

    ``checksum`` records the SHA-256 and size of the bytes written in ``<name>.sha256`` before the
    rename, so a loader can tell the file it reads from the file that was written.
    ``durable=False`` (files that only hand data to the parent) keeps the rename, skips the fsyncs.
    """
    started = time.perf_counter()
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "w+b") as handle:
        if pause is None:
            torch.save(payload, handle)
        else:
            buffer = io.BytesIO()
            torch.save(payload, buffer)
            _write_bytes_with_pause(handle, buffer.getvalue(), pause, temporary)
        handle.flush()
        if durable:
            os.fsync(handle.fileno())
        if checksum:
            size = os.fstat(handle.fileno()).st_size
            record = {"sha256": file_sha256(handle.fileno()), "size_bytes": size, "file": path.name}
            _write_small_file_atomically(checksum_path(path), json.dumps(record) + "\n")
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
    return save_atomically(path, checkpoint_payload(step, rank, world_size, job_state), pause, checksum=True)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def prune_checkpoints(folder: Path, rank: int, keep: int = KEEP) -> list[Path]:
    """Delete all but the newest ``keep``; called only after the new one is durable on every rank.

    Only regular files count and are deleted: a directory or FIFO under a checkpoint's name is
    left for the loader to refuse, never removed or followed here.
    """
    removed = []
    regular = [item for item in list_checkpoints(folder, rank) if _is_regular(item.path)]
    for old in regular[keep:]:
        old.path.unlink(missing_ok=True)  # a deletion lost in a crash only leaves one file too many
        checksum_path(old.path).unlink(missing_ok=True)
        removed.append(old.path)
    return removed


def remove_stale_temporaries(folder: Path, rank: int) -> list[Path]:
    """Torn writes of a killed process: never loadable (they were never renamed), removed at start."""
    removed = []
    if folder.is_dir():
        for entry in folder.iterdir():
            match = _TEMPORARY.match(entry.name)
            if match and int(match.group(2)) == rank and _is_regular(entry):
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


_PLAIN = (str, bytes, bool, int, float, type(None))


def _round_trips(value: Any) -> str | None:
    """``None`` when the weights-only loader rebuilds ``value``, else its one-line reason."""
    buffer = io.BytesIO()
    try:
        torch.save(value, buffer)
        buffer.seek(0)
        torch.load(buffer, weights_only=True, map_location="cpu")  # a check of types: never a second copy on the GPU
    except Exception as error:  # noqa: BLE001 - whatever the weights-only loader refuses is explained, not raised
        return explain_load_error(error)
    return None


def _suspects(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """Leaves that are neither containers, tensors nor plain scalars: the ones the safe loader may refuse."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _suspects(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        for index, item in enumerate(value):
            yield from _suspects(item, f"{prefix}.{index}" if prefix else str(index))
    elif not isinstance(value, _PLAIN + (torch.Tensor, torch.dtype, torch.device, torch.Size)):
        yield prefix, value


def weights_only_refusal(state: Any) -> tuple[str, str] | None:
    """(key, reason) of the first piece of ``state`` that ``torch.load(weights_only=True)`` refuses.

    Checked on the job's first ``state_dict()``, so that such a state fails at once with its key
    instead of after every interruption with the loader's message only.
    """
    whole = _round_trips(state)
    if whole is None:
        return None
    for key, leaf in _suspects(state, ""):
        reason = _round_trips(leaf)
        if reason is not None:
            return key, f"{type(leaf).__module__}.{type(leaf).__qualname__}: {reason}"
    return "(the whole state)", whole


def validate_payload(payload: Any, step: int, rank: int, world_size: int) -> dict[str, Any]:
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointRefused(f"not a {CHECKPOINT_FORMAT} file")
    for key, expected in (("step", step), ("rank", rank), ("world_size", world_size)):
        if payload.get(key) != expected:
            raise CheckpointRefused(f"records {key} {payload.get(key)!r}, expected {expected!r}")
    if not isinstance(payload.get("job"), dict):
        raise CheckpointRefused("has no job state")
    return payload


_KIND = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device", stat.S_IFLNK: "a symbolic link", stat.S_IFSOCK: "a socket"}


def read_verified(path: Path) -> bytes:
    """The file's bytes, once they match the size and SHA-256 recorded when it was written.

    Never opens anything but a regular file (a FIFO would block, a link could point anywhere).
    """
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise CheckpointRefused(f"cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = _KIND.get(stat.S_IFMT(mode), "not a regular file")
        raise CheckpointRefused(f"is {kind}, not a checkpoint file")
    try:
        record = json.loads(checksum_path(path).read_text(encoding="utf-8"))
        recorded_sha, recorded_size = str(record["sha256"]), int(record["size_bytes"])
    except FileNotFoundError:
        raise CheckpointRefused(
            f"no SHA-256 recorded at write time ({checksum_path(path).name} is missing): the write did not finish"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckpointRefused(f"its checksum record {checksum_path(path).name} is unreadable ({error})") from None
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise CheckpointRefused(f"cannot be opened: {error.strerror}") from None
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read()
    if len(data) != recorded_size:
        raise CheckpointRefused(
            f"truncated or extended: {len(data)} bytes on disk, {recorded_size} recorded at write time"
        )
    actual = hashlib.sha256(data).hexdigest()
    if actual != recorded_sha:
        raise CheckpointRefused(
            f"SHA-256 mismatch: {actual[:12]}… on disk, {recorded_sha[:12]}… recorded at write time "
            "(the bytes changed after the write)"
        )
    return data


MapLocation = str | torch.device | None


def load_checkpoint(
    candidate: CheckpointFile,
    world_size: int,
    validate: Callable[[dict[str, Any]], None] | None = None,
    map_location: MapLocation = None,
) -> LoadedCheckpoint:
    """Verify, load and validate one file with the weights-only unpickler (no code runs from the file).

    ``map_location`` is the resuming process's device: every tensor is restored straight onto it, one
    storage at a time, instead of onto the device it was saved from (another rank's GPU after a
    reschedule) or onto the CPU and then copied (the whole state twice in host memory).
    """
    started = time.perf_counter()
    data = read_verified(candidate.path)
    if _END_OF_ARCHIVE not in data[-_TAIL_BYTES:]:
        raise CheckpointRefused(f"truncated or incomplete: no end-of-archive record in its {len(data)} bytes")
    try:
        payload = torch.load(io.BytesIO(data), weights_only=True, map_location=map_location)
    except Exception as error:  # noqa: BLE001 - corrupt zip, refused global, I/O error: all refuse the file
        raise CheckpointRefused(explain_load_error(error)) from None
    del data  # the file's bytes: the tensors now live on map_location
    valid = validate_payload(payload, candidate.step, candidate.rank, world_size)
    if validate is not None:
        validate(valid["job"])
    return LoadedCheckpoint(candidate.step, candidate.path, valid, time.perf_counter() - started)


def tensor_layout_check(expected_state: Any) -> Callable[[dict[str, Any]], None]:
    """A validator: every tensor of a loaded state has the dtype and shape of the job's own state.

    Keys only one side has are left to ``load_state_dict`` (a fresh optimizer has no moments
    yet); empty and 0-d tensors of the fresh state may grow. Non-finite values where the job's
    state is finite are refused too: a checkpoint of a diverged run is not a resume point.
    """
    from spikelint.smoke.compare.leaves import flatten

    expected = {key: value for key, value in flatten(expected_state) if isinstance(value, torch.Tensor)}

    def validate(loaded: dict[str, Any]) -> None:
        for key, value in flatten(loaded):
            fresh = expected.get(key)
            if fresh is None or not isinstance(value, torch.Tensor):
                continue
            if value.dtype != fresh.dtype:
                raise CheckpointRefused(f"{key} is {value.dtype}, the job's state has {fresh.dtype}")
            if fresh.dim() > 0 and fresh.numel() > 0 and tuple(value.shape) != tuple(fresh.shape):
                raise CheckpointRefused(
                    f"{key} has shape {list(value.shape)}, the job's state has {list(fresh.shape)}"
                )
            if value.is_floating_point() and fresh.is_floating_point() and fresh.numel() and value.numel():
                if bool(torch.isfinite(fresh).all()) and not bool(torch.isfinite(value).all()):
                    raise CheckpointRefused(f"{key} holds NaN or infinite values where the job's state is finite")

    return validate


def newest_valid(
    folder: Path,
    rank: int,
    world_size: int,
    at_most: int | None = None,
    validate: Callable[[dict[str, Any]], None] | None = None,
    map_location: MapLocation = None,
) -> tuple[LoadedCheckpoint | None, list[Refusal]]:
    """The newest checkpoint (at or below ``at_most``) that loads and validates, and the refused ones."""
    refusals: list[Refusal] = []
    for candidate in list_checkpoints(folder, rank):
        if at_most is not None and candidate.step > at_most:
            continue
        try:
            return load_checkpoint(candidate, world_size, validate, map_location), refusals
        except CheckpointRefused as refused:
            refusals.append(Refusal(str(candidate.path), candidate.step, str(refused)))
    return None, refusals


def quarantine(path: Path) -> Path | None:
    """Move a refused checkpoint aside so it is neither retried nor counted among the two kept.

    ``None`` when it cannot be moved (it stays, and is refused again next time).
    """
    target = path.with_name(path.name + ".damaged")
    try:
        os.replace(path, target)
    except OSError:
        return None
    try:
        os.replace(checksum_path(path), checksum_path(target))
    except OSError:
        pass
    return target
