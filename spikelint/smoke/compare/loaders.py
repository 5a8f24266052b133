"""Format-aware, code-free loading of checkpoints written by training jobs, for leaf-by-leaf comparison.

A checkpoint unit is one file (``torch.save`` with ``weights_only=True``, safetensors, JSON, a
Hugging Face ``trainer_state.json``) or one torch.distributed.checkpoint (DCP) folder (a
``.metadata`` file and its ``*.distcp`` shards, compared as one flat state). Nothing from a file
is ever executed: a file the weights-only loader refuses (a framework's own objects) is read
through a restricted unpickler that keeps unknown classes as opaque values (``opaque_pickle``), never
loaded unsafely; DCP's ``.metadata`` pickle is read with an unpickler that only knows DCP's own
metadata records. A unit is named by its path relative to the compared folder, and a
difference by ``unit:key``, as in the smoke report.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import pickle
import re
import warnings
import zipfile
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Iterable

from spikelint.smoke.compare.leaves import Difference
from spikelint.smoke.compare.leaves import compare_states

TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")
DCP_METADATA = ".metadata"
DCP_SUFFIX = ".distcp"
TRAINER_STATE = "trainer_state.json"
TRAINING_ARGS = "training_args.bin"
FORMAT_NAMES = {
    "torch": "a torch.save file", "safetensors": "a safetensors file", "json": "a JSON file",
    "trainer_state": "a Hugging Face trainer_state.json", "training_args": "a Hugging Face training_args.bin",
    "dcp": "a torch.distributed.checkpoint folder", "bytes": "a file compared by SHA-256",
    "folder": "a folder of checkpoint files",
}
# Measured between an uninterrupted Hugging Face Trainer run and one killed and resumed from its
# checkpoint (tests/smoke/test_smoke_loaders.py): only wall-clock entries differ in the checkpoints'
# trainer_state.json, and the end-of-training entry's ``train_loss`` averages only the steps the
# resumed process ran. The per-step losses stay compared.
TIMING_SUFFIXES = ("_runtime", "_per_second")
FOLDER_MARK = "{ckpt}"
SUMMARY_ONLY = ("train_loss",)
TRAINING_ARGS_NOTE = ("not compared: it is a pickled TrainingArguments object that "
                      "weights_only=True refuses, and its output paths differ between runs anyway")


class LoadRefused(Exception):
    """A checkpoint the safe loaders do not read; the message names the file, the reason and the fix."""


@dataclass(frozen=True)
class Unit:
    """One comparable piece of a checkpoint: its name (the key prefix) and how it is loaded."""

    name: str
    path: Path  # relative to the compared folder; "." for the folder itself
    format: str


@dataclass
class Loaded:
    state: Any
    notes: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    """What comparing the units of two checkpoints found."""

    leaves: int = 0
    differences: list[tuple[str, Difference]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # units the resumed side could not load
    notes: list[str] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)  # units neither side's copy could be read of
    compared: list[str] = field(default_factory=list)


def is_dcp_folder(path: Path) -> bool:
    return path.is_dir() and (path / DCP_METADATA).is_file()


def file_format(path: Path) -> str:
    """How a checkpoint file is read, from its name (and, for ``.pkl``, whether it is a torch.save archive)."""
    if path.name == TRAINER_STATE:
        return "trainer_state"
    if path.name == TRAINING_ARGS:
        return "training_args"
    if path.suffix == ".json":
        return "json"
    if path.suffix == ".safetensors":
        return "safetensors"
    if path.suffix in TORCH_SUFFIXES or (path.suffix == ".pkl" and zipfile.is_zipfile(path)):
        return "torch"
    return "bytes"


def checkpoint_files(folder: Path) -> list[Path]:
    """Every regular file below ``folder`` (relative, sorted), hidden temporaries and links left out."""
    return [path.relative_to(folder) for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.is_symlink() and not path.name.startswith(".")]


def units(root: Path, names: Iterable[Path]) -> list[Unit]:
    """The units of the given files: the shards of a DCP folder become that folder, once."""
    found: dict[str, Unit] = {}
    for name in names:
        if (name.suffix == DCP_SUFFIX or name.name == DCP_METADATA) and (root / name.parent / DCP_METADATA).is_file():
            # the shards and the .metadata are one state (the metadata alone holds a path and a random save id)
            folder = name.parent
            label = "." if folder == Path(".") else folder.as_posix()
            found.setdefault(label, Unit(label, folder, "dcp"))
            continue
        found.setdefault(name.as_posix(), Unit(name.as_posix(), name, file_format(root / name)))
    return list(found.values())


def load_unit(path: Path, unit: Unit) -> Loaded:
    """The unit's state read from ``path`` (its file, or its DCP folder); raises ``LoadRefused``."""
    if unit.format == "dcp":
        return Loaded(load_dcp_folder(path))
    if unit.format == "torch":
        return load_torch_unit(path, unit.name)
    if unit.format == "safetensors":
        return load_safetensors_file(path, unit.name)
    if unit.format == "json":
        return Loaded(load_json_file(path))
    if unit.format == "trainer_state":
        state, left_out = load_trainer_state(path)
        return Loaded(state, [f"{unit.name}: left out (timing, or a summary of the steps one process ran): "
                              f"{', '.join(left_out)}"] if left_out else [])
    if unit.format == "training_args":
        return Loaded(None, [f"{unit.name}: {TRAINING_ARGS_NOTE}"])
    return Loaded({"sha256": sha256_of(path)})


def relative_to_folder(state: Any, folder: Path | None) -> Any:
    """The state with the checkpoint folder's absolute path written as ``{ckpt}`` in strings and keys.

    Frameworks store where they wrote (Lightning's ``ModelCheckpoint`` ``dirpath``,
    ``best_model_path``, ``best_k_models``; Hugging Face's ``best_model_checkpoint``): every run
    of the smoke test has its own folder, so these are compared by meaning, relative to it.
    """
    if folder is None:
        return state
    prefixes = sorted({str(folder), str(folder.resolve())}, key=len, reverse=True)

    def rewrite(value: Any) -> Any:
        if isinstance(value, str):
            for prefix in prefixes:
                if prefix in value:
                    return value.replace(prefix, FOLDER_MARK)
            return value
        if isinstance(value, dict):
            return {rewrite(key): rewrite(item) for key, item in value.items()}
        if isinstance(value, list):
            return [rewrite(item) for item in value]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(rewrite(item) for item in value)
        return value

    return rewrite(state)


def compare_pair(unit: Unit, reference: Path, other: Path, into: Comparison,
                 roots: tuple[Path, Path] | None = None) -> None:
    """One unit read from two places and compared leaf by leaf; a unit that cannot be read is a problem.

    With ``roots`` (the two checkpoint folders), paths inside either folder are compared relative to it.
    """
    try:
        expected = load_unit(reference, unit)
    except Exception as error:  # noqa: BLE001 - a layout the loaders cannot read is not compared, never a failure
        reason = str(error) if isinstance(error, LoadRefused) else f"{type(error).__name__}: {first_line(error)}"
        into.not_compared.append(f"{unit.name}: not compared: it cannot be read ({reason})")
        return
    try:
        actual = load_unit(other, unit)
        if roots is not None:
            expected = Loaded(relative_to_folder(expected.state, roots[0]), expected.notes)
            actual = Loaded(relative_to_folder(actual.state, roots[1]), actual.notes)
    except LoadRefused as error:
        into.problems.append(str(error))
        return
    except Exception as error:  # noqa: BLE001 - a damaged file in a way no loader foresaw is a finding, not a crash
        into.problems.append(f"{unit.name} cannot be loaded: {type(error).__name__}: {first_line(error)}")
        return
    for note in expected.notes + actual.notes:
        if note not in into.notes:
            into.notes.append(note)
    if unit.format == "training_args":
        return
    count, found = compare_states(expected.state, actual.state)
    into.leaves += count
    into.differences += [(unit.name, difference) for difference in found]
    into.compared.append(unit.name)


def compare_units(reference: Path, other: Path, pieces: list[Unit]) -> Comparison:
    """Every unit (relative to both folders) loaded from both and compared leaf by leaf."""
    result = Comparison()
    for unit in pieces:
        compare_pair(unit, reference / unit.path, other / unit.path, result, (reference, other))
    return result


# ``epoch=0-step=48-v1.ckpt``: the name ModelCheckpoint gives a checkpoint whose file name is taken
VERSIONED = re.compile(r"^(.*)-v\d+(\.[A-Za-z]+)$")
# the epoch a name carries (``epoch=2-step=36.ckpt``, Composer's ``ep2-ba36-rank0.pt``)
EPOCH_IN_NAME = re.compile(r"(?i)(?<![a-z])(epoch|ep)([-_=]?)(\d+)")


def without_epoch(relative: Path) -> str:
    """The name with its epoch number blanked: one step's checkpoint under two epochs gives one key."""
    return EPOCH_IN_NAME.sub(lambda match: match[1] + match[2] + "#", relative.as_posix())


def same_checkpoint_other_epoch(reference: Path, unit: Unit) -> Path | None:
    """The reference's file of the same name but for its epoch: the checkpoint of the same step,
    written by a resumed run whose epoch counter moved (an epoch-end resume counted an empty epoch)."""
    if not EPOCH_IN_NAME.search(unit.path.name):
        return None
    key = without_epoch(unit.path)
    folder = reference / unit.path.parent
    candidates = sorted(path.relative_to(reference) for path in folder.glob("*")) if folder.is_dir() else []
    matches = [path for path in candidates if path != unit.path and without_epoch(path) == key]
    return matches[0] if len(matches) == 1 else None


def compare_checkpoints(reference: Path, resumed: Path, names: list[Path]) -> Comparison:
    """The files a resumed run wrote, by unit, against the reference folder's units of the same name."""
    pieces: list[Unit] = []
    missing: list[str] = []
    renamed: list[tuple[Unit, Path]] = []
    epochs: list[tuple[Unit, Path]] = []
    for unit in units(resumed, names):
        expected = reference / unit.path
        present = is_dcp_folder(expected) if unit.format == "dcp" else expected.is_file()
        versioned = VERSIONED.match(unit.path.name)
        if present:
            pieces.append(unit)
        elif versioned is not None and (reference / unit.path.with_name(versioned[1] + versioned[2])).is_file():
            renamed.append((unit, unit.path.with_name(versioned[1] + versioned[2])))
        elif (other_epoch := same_checkpoint_other_epoch(reference, unit)) is not None:
            epochs.append((unit, other_epoch))
        else:
            missing.append(f"{unit.name} was written by the resumed run but not by the uninterrupted one")
    result = compare_units(reference, resumed, pieces)
    for unit, base in renamed:  # Lightning's ModelCheckpoint: the interrupted run had written the name already
        compare_pair(unit, reference / base, resumed / unit.path, result, (reference, resumed))
        result.notes.append(f"{unit.name} is {base.name} saved again under a new version suffix (the name was on disk "
                            f"already, written by the interrupted run before the kill): compared with {base.name}")
    for unit, base in epochs:  # compared by content: the epoch key and the data position say what moved
        compare_pair(unit, reference / base, resumed / unit.path, result, (reference, resumed))
        result.notes.append(f"{unit.name} is the checkpoint the uninterrupted run named {base.name}: the resumed "
                            "run's epoch counter differs (a resume at an epoch's end that counts an empty epoch "
                            "shows so)")
    result.problems = missing + result.problems
    return result


def compare_folders(reference: Path, resumed: Path, names: list[Path]) -> tuple[int, list[tuple[str, Difference]], list[str]]:
    """(leaves compared, differences by unit, problems) for the files the resumed run wrote; a unit
    that cannot be read on either side is a problem here (``Comparison.not_compared`` keeps them apart)."""
    result = compare_checkpoints(reference, resumed, names)
    return result.leaves, result.differences, result.problems + result.not_compared


def load_checkpoint_file(path: Path) -> Any:
    """A checkpoint file's state by its format (no notes); raises ``LoadRefused``."""
    return load_unit(path, Unit(path.name, Path(path.name), file_format(path))).state


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def numpy_globals() -> list[Any]:
    """NumPy arrays and dtypes: what Hugging Face's RNG files hold, allowed as its own loader allows them."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    return [core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]


def load_torch_file(path: Path) -> Any:
    """``torch.load(weights_only=True)`` on the CPU; a refused or damaged file raises ``LoadRefused``."""
    import torch

    try:
        with torch.serialization.safe_globals(numpy_globals()):
            return torch.load(path, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as error:
        raise LoadRefused(refusal_message(path, error)) from None
    except (RuntimeError, EOFError, OSError, ValueError) as error:
        raise LoadRefused(f"{path}: cannot be read as a torch.save file ({type(error).__name__}: "
                          f"{first_line(error)}); is it complete?") from None


def load_torch_unit(path: Path, name: str) -> Loaded:
    """A ``torch.save`` file: weights-only first; a file that holds a framework's own objects (Composer's
    state, NumPy arrays, ``timedelta``) is then read through the restricted unpickler, its classes kept
    as opaque values compared by their data, never by running their code (``opaque_pickle``)."""
    from spikelint.smoke.compare.opaque_pickle import load_opaque

    try:
        return Loaded(load_torch_file(path))
    except LoadRefused as refused:
        if "refuses it" not in str(refused):
            raise  # damaged, not refused
        try:
            state, opaque, left_out = load_opaque(path)
        except Exception as error:  # noqa: BLE001 - the weights-only refusal says more than a second failure
            raise LoadRefused(f"{refused} (nor could it be read without running its code: "
                              f"{type(error).__name__}: {first_line(error)})") from None
    notes = []
    if opaque:
        shown = ", ".join(sorted(opaque)[:4]) + (" …" if len(opaque) > 4 else "")
        notes.append(f"{name}: read without running its code; {shown} compared by the data the file holds")
    if left_out:
        notes.append(f"{name}: wall-clock values left out: {', '.join(left_out[:4])}{' …' if len(left_out) > 4 else ''}")
    return Loaded(state, notes)


def refusal_message(path: Path, error: Exception) -> str:
    import torch

    try:
        needed = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # noqa: BLE001 - the reason is best effort; the refusal stands either way
        needed = []
    what = f"it holds {', '.join(needed[:4])}{' …' if len(needed) > 4 else ''}" if needed else weights_only_reason(error)
    return (f"{path}: torch.load(weights_only=True) refuses it ({what}); it is never loaded unsafely: save plain "
            "tensors, numbers, strings, lists and dicts (a record's fields as a dict) instead")


def weights_only_reason(error: BaseException) -> str:
    """What torch's long refusal text says is in the way, e.g. ``it holds train.Record``."""
    found = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
    if found:
        return f"it holds {found.group(1)}"
    found = re.search(r"WeightsUnpickler error: ([^\n]+)", str(error))
    return found.group(1)[:200] if found else first_line(error)


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0][:200] if lines else type(error).__name__


def load_safetensors_file(path: Path, name: str) -> Loaded:
    try:
        from safetensors import safe_open
    except ImportError:
        return Loaded({"sha256": sha256_of(path)},
                      [f"{name}: compared by SHA-256, not tensor by tensor: pip install safetensors"])
    state: dict[str, Any] = {}
    try:
        with safe_open(str(path), framework="pt") as handle:
            for key in handle.keys():
                state[key] = handle.get_tensor(key)
            metadata = handle.metadata()
    except Exception as error:  # noqa: BLE001 - safetensors raises its own error type for a damaged header
        raise LoadRefused(f"{path}: cannot be read as a safetensors file ({first_line(error)}); is it complete?") from None
    if metadata:
        state["__metadata__"] = dict(metadata)
    return Loaded(state)


def load_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LoadRefused(f"{path}: not valid JSON ({error}); is it complete?") from None


def load_trainer_state(path: Path) -> tuple[Any, list[str]]:
    """``trainer_state.json`` without the entries that differ between an uninterrupted and a resumed run.

    Left out: wall-clock timing (``*_runtime``, ``*_per_second``) in every ``log_history`` entry,
    and ``train_loss`` of the end-of-training entry; ``best_model_checkpoint`` is kept by its
    folder name, since the two runs write to different output folders.
    """
    state = load_json_file(path)
    left_out: list[str] = []
    if not isinstance(state, dict):
        return state, left_out
    history = state.get("log_history")
    if isinstance(history, list):
        kept_history = []
        for entry in history:
            if isinstance(entry, dict):
                summary = any(str(key).startswith("train_") and str(key).endswith(TIMING_SUFFIXES) for key in entry)
                dropped = [key for key in entry if str(key).endswith(TIMING_SUFFIXES) or (summary and key in SUMMARY_ONLY)]
                for key in dropped:
                    if key not in left_out:
                        left_out.append(key)
                entry = {key: value for key, value in entry.items() if key not in dropped}
            kept_history.append(entry)
        state = dict(state, log_history=kept_history)
    best = state.get("best_model_checkpoint")
    if isinstance(best, str):
        state = dict(state, best_model_checkpoint=Path(best).name)
    return state, left_out


# --- torch.distributed.checkpoint -------------------------------------------------------------

_DCP_MODULES = ("torch.distributed.checkpoint.metadata",)
_DCP_NAMES = {
    ("torch.distributed.checkpoint.filesystem", "_StorageInfo"),
    ("torch.serialization", "_get_layout"),
    ("torch", "Size"),
    ("collections", "OrderedDict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    *(("pathlib", name) for name in ("Path", "PosixPath", "PurePosixPath", "WindowsPath", "PureWindowsPath")),
}


class _ForeignGlobal(pickle.UnpicklingError):
    """The metadata pickle names something that is not part of DCP's metadata."""


class _MetadataUnpickler(pickle.Unpickler):
    """Reads DCP's ``.metadata`` pickle knowing only DCP's own records, torch dtypes and paths."""

    def find_class(self, module: str, name: str) -> Any:
        import importlib

        import torch

        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        allowed = module in _DCP_MODULES or (module, name) in _DCP_NAMES
        if allowed and not name.startswith("__"):
            value = getattr(importlib.import_module(module), name, None)
            if value is not None and (isinstance(value, type) or (module, name) in _DCP_NAMES):
                return value
        raise _ForeignGlobal(f"{module}.{name} is not part of a DCP metadata file")


def read_dcp_metadata(folder: Path) -> Any:
    path = folder / DCP_METADATA
    try:
        with open(path, "rb") as handle:
            metadata = _MetadataUnpickler(handle).load()
    except _ForeignGlobal as error:
        raise LoadRefused(f"{path}: not read ({error}); spikelint reads only DCP's own metadata records") from None
    except (pickle.UnpicklingError, EOFError, OSError, AttributeError, ValueError, ImportError) as error:
        raise LoadRefused(f"{path}: cannot be read as DCP metadata ({type(error).__name__}: {first_line(error)}); "
                          "is the checkpoint complete?") from None
    from torch.distributed.checkpoint.metadata import Metadata

    if not isinstance(metadata, Metadata):
        raise LoadRefused(f"{path}: holds a {type(metadata).__name__}, not DCP metadata")
    return metadata


def load_dcp_folder(folder: Path) -> dict[str, Any]:
    """A DCP checkpoint as one flat state ``{fully qualified key: value}``, in this process.

    Tensors are read whole onto the CPU (shards of every rank joined), objects with
    ``weights_only=True``; no process group is needed.
    """
    import torch
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata

    metadata = read_dcp_metadata(folder)
    state: dict[str, Any] = {}
    for key, item in metadata.state_dict_metadata.items():
        state[key] = torch.empty(item.size, dtype=item.properties.dtype) if isinstance(item, TensorStorageMetadata) else None
    reader_class, planner_class = _dcp_classes()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "torch.distributed is not initialized": one process is the intent
            dcp.load(state, storage_reader=reader_class(folder, metadata),
                     planner=planner_class(folder, flatten_state_dict=False, flatten_sharded_tensors=False),
                     no_dist=True)
    except (Exception, dcp.CheckpointException) as error:  # noqa: BLE001 - a refused object, a missing or torn shard, wrapped per rank
        failures = getattr(error, "failures", None)
        cause: BaseException = error
        for item in failures.values() if isinstance(failures, dict) else ():
            found = item[0] if isinstance(item, tuple) and item else item
            if isinstance(found, BaseException):
                cause = found
                break
        if isinstance(cause, LoadRefused):
            raise cause from None
        raise LoadRefused(f"{folder}: the DCP checkpoint cannot be read ({type(cause).__name__}: {first_line(cause)}); "
                          "is every *.distcp file there and complete?") from None
    return state


@functools.lru_cache(maxsize=1)
def _dcp_classes() -> tuple[Any, Any]:
    """DCP's file reader and load planner, made safe; built on first use (torch.distributed loads slowly)."""
    import torch
    from torch.distributed.checkpoint import DefaultLoadPlanner
    from torch.distributed.checkpoint import FileSystemReader
    from torch.distributed.checkpoint.metadata import StorageMeta

    class SafeReader(FileSystemReader):
        """The metadata already read safely (the stock reader unpickles it freely)."""

        def __init__(self, folder: Path, metadata: Any) -> None:
            super().__init__(str(folder))
            self._safe_metadata = metadata

        def read_metadata(self, *args: Any, **kwargs: Any) -> Any:
            if getattr(self._safe_metadata, "storage_meta", None) is None:
                self._safe_metadata.storage_meta = StorageMeta()
            self._safe_metadata.storage_meta.load_id = self.load_id
            return self._safe_metadata

    class SafePlanner(DefaultLoadPlanner):
        """Objects read with ``weights_only=True`` (the stock planner uses ``False``)."""

        def __init__(self, folder: Path, **options: Any) -> None:
            super().__init__(**options)
            self._folder = folder

        def load_bytes(self, read_item: Any, value: io.BytesIO) -> None:
            key = read_item.dest_index.fqn
            try:
                with torch.serialization.safe_globals(numpy_globals()):
                    self.original_state_dict[key] = torch.load(value, weights_only=True)
            except pickle.UnpicklingError as error:
                raise LoadRefused(f"{self._folder}: the object at {key} is refused by weights_only=True "
                                  f"({weights_only_reason(error)}); save it as plain tensors, numbers, strings, lists and "
                                  "dicts") from None

    return SafeReader, SafePlanner
