"""A snapshot of a job's live state, independent of what its ``state_dict()`` chooses to save.

The resumed process takes it right after ``load_state_dict`` and the reference takes it at
the same step; a piece that differs there is a piece the checkpoint does not carry (or
``load_state_dict`` does not restore), which names the culprit — optimizer, scheduler, RNG,
data position — before its effect shows up steps later in the losses.

The walk goes through the job object's attributes, nested dicts, lists, dataclasses and the
job's own objects, and the process-wide RNGs; a module's ``.grad`` tensors and a DataLoader
iterator's worker seed are pieces of their own.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import types
from typing import Any
from typing import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader
from torch.utils.data import Sampler
from torch.utils.data.dataloader import _BaseDataLoaderIter

from spikelint.smoke.compare.leaves import Leaf
from spikelint.smoke.compare.leaves import digests
from spikelint.smoke.harness.rngstate import capture_rng

MODEL = "model"
OPTIMIZER = "optimizer"
SCHEDULER = "scheduler"
GRAD_SCALER = "grad scaler"
DATA_POSITION = "data position"
RNG = "rng"
COUNTERS = "counters"
TENSORS = "tensors"
GRADIENTS = "gradients"
WORKER_RNG = "worker rng"
VALUES = "values"
# Python floats and strings beside the training state (timers, last loss for logging): a difference
# in them alone is latent, reported but not a failed resume.
LATENT_PIECES = frozenset({VALUES})


def _generator_state(generator: Any) -> Any:
    return generator.get_state() if isinstance(generator, torch.Generator) else None


def _sampler_state(sampler: Any) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for name in ("epoch", "seed"):
        value = getattr(sampler, name, None)
        if isinstance(value, int):
            state[name] = value
    generator = _generator_state(getattr(sampler, "generator", None))
    if generator is not None:
        state["generator"] = generator
    return state


def _loader_state(loader: DataLoader[Any]) -> dict[str, Any]:
    state: dict[str, Any] = {"sampler": _sampler_state(loader.sampler)}
    generator = _generator_state(loader.generator)
    if generator is not None:
        state["generator"] = generator
    return state


def _scheduler_types() -> tuple[type, ...]:
    schedulers = torch.optim.lr_scheduler
    base = getattr(schedulers, "LRScheduler", None) or getattr(schedulers, "_LRScheduler")
    return (base, schedulers.ReduceLROnPlateau)


def _grad_scaler_types() -> tuple[type, ...]:
    found = []
    for owner in (getattr(torch, "amp", None), getattr(torch.cuda, "amp", None)):
        scaler = getattr(owner, "GradScaler", None) if owner is not None else None
        if isinstance(scaler, type):
            found.append(scaler)
    return tuple(found)


def classify(value: Any) -> tuple[str, Callable[[Any], Any]] | None:
    """The piece a live object belongs to and how to read its state, or ``None`` to ignore it."""
    table: list[tuple[tuple[type, ...], str, Callable[[Any], Any]]] = [
        ((torch.nn.Module,), MODEL, lambda module: module.state_dict()),
        ((torch.optim.Optimizer,), OPTIMIZER, lambda optimizer: optimizer.state_dict()),
        (_scheduler_types(), SCHEDULER, lambda scheduler: scheduler.state_dict()),
        (_grad_scaler_types(), GRAD_SCALER, lambda scaler: scaler.state_dict()),
        ((DataLoader,), DATA_POSITION, _loader_state),
        ((_BaseDataLoaderIter,), DATA_POSITION, lambda iterator: {"num_yielded": iterator._num_yielded}),
        ((Sampler,), DATA_POSITION, _sampler_state),
        ((torch.Generator,), RNG, lambda generator: generator.get_state()),
        ((random.Random,), RNG, lambda generator: list(generator.getstate()[1])),
        ((np.random.Generator,), RNG, lambda generator: generator.bit_generator.state),
        ((np.random.RandomState,), RNG, lambda generator: list(generator.get_state(legacy=True))),
        ((torch.Tensor,), TENSORS, lambda tensor: tensor),
    ]
    for kinds, piece, read in table:
        if kinds and isinstance(value, kinds):
            return piece, read
    if isinstance(value, int) and not isinstance(value, bool):
        return COUNTERS, lambda number: number
    return None


MAX_DEPTH = 6
MAX_ENTRIES = 4000
# Objects of these packages are infrastructure (loggers, threads, files), not training state.
_NOT_STATE_PACKAGES = frozenset({
    "abc", "asyncio", "builtins", "concurrent", "functools", "io", "_io", "logging", "multiprocessing",
    "numpy", "pathlib", "queue", "re", "selectors", "socket", "subprocess", "tempfile", "threading", "torch",
    "types", "typing", "weakref", "_thread", "_weakref", "argparse", "contextlib",
})
_SCALARS = (bool, int, float, str, bytes, type(None))


def _walkable(value: Any) -> bool:
    """A record whose fields are state: a dataclass or an object of the job's own (or a framework's) classes."""
    if isinstance(value, _SCALARS) or isinstance(value, type) or callable(value) and not hasattr(value, "__dict__"):
        return False
    if isinstance(value, (types.FunctionType, types.MethodType, types.ModuleType, functools.partial)):
        return False
    package = (type(value).__module__ or "").split(".")[0]
    if package in _NOT_STATE_PACKAGES:
        return False
    return dataclasses.is_dataclass(value) or isinstance(getattr(value, "__dict__", None), dict)


def _fields(value: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(value):
        return {field.name: getattr(value, field.name, None) for field in dataclasses.fields(value)}
    fields = dict(vars(value))
    if isinstance(value, torch.nn.Module):
        fields.update(value._modules)
    return fields


def _only_leaves(items: list[Any]) -> bool:
    return all(isinstance(item, _SCALARS) or isinstance(item, torch.Tensor) for item in items)


def _component(name: Any) -> str:
    """A path component without the dots that separate a piece from the leaves inside it."""
    return str(name).replace(".", "_").replace(":", "_")


class _Walker:
    """Depth-first over the job's attributes, with cycle detection and a bound on the entries."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.seen: set[int] = set()

    def add(self, piece: str, path: str, value: Any) -> None:
        if len(self.state) < MAX_ENTRIES:
            self.state[f"{piece}:{path}"] = value

    def classified(self, value: Any, path: str) -> bool:
        found = classify(value)
        if found is None:
            return False
        piece, read = found
        try:
            self.add(piece, path, read(value))
        except Exception as error:  # noqa: BLE001 - a half-built object: record that it could not be read
            self.add(piece, path, f"unreadable: {type(error).__name__}")
        if isinstance(value, torch.nn.Module):
            grads = {name: p.grad for name, p in value.named_parameters() if p.grad is not None}
            self.add(GRADIENTS, path, grads)
        if isinstance(value, _BaseDataLoaderIter):
            self.add(WORKER_RNG, path, {"base_seed": int(getattr(value, "_base_seed", 0))})
        return True

    def walk(self, value: Any, path: str, depth: int) -> None:
        if id(value) in self.seen or depth > MAX_DEPTH or len(self.state) >= MAX_ENTRIES:
            return
        if self.classified(value, path):
            return
        if isinstance(value, float):
            self.add(VALUES, path, value)
            return
        if isinstance(value, (str, bytes, bool, type(None))):
            return
        if isinstance(value, (dict, list, tuple)):
            items = list(value.values() if isinstance(value, dict) else value)
            if not items:
                return
            if _only_leaves(items):
                piece = TENSORS if any(isinstance(item, torch.Tensor) for item in items) else VALUES
                self.add(piece, path, value)
                return
            self.seen.add(id(value))
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in pairs:
                self.walk(item, f"{path}/{_component(key)}", depth + 1)
            return
        if _walkable(value):
            self.seen.add(id(value))
            for name, item in sorted(_fields(value).items(), key=lambda pair: str(pair[0])):
                self.walk(item, f"{path}/{_component(name)}", depth + 1)


def live_state(job: Any, include_cuda: bool) -> dict[str, Any]:
    """``{"rng:python": ..., "optimizer:opt": ..., "counters:state/global_step": ...}``.

    Each entry is a piece and the attribute path under the job where it lives: the walk goes
    through dicts, lists, dataclasses and the job's own objects (callbacks, a trainer state,
    an accelerator's registered objects), so state nested below the first level is seen too.
    """
    walker = _Walker()
    for name, value in capture_rng(include_cuda).items():
        walker.add(RNG, name, value)
    walker.seen.add(id(job))
    attributes = _fields(job) if hasattr(job, "__dict__") or dataclasses.is_dataclass(job) else {}
    for name, value in sorted(attributes.items(), key=lambda pair: str(pair[0])):
        walker.walk(value, _component(name), 1)
    return walker.state


def live_digests(job: Any, include_cuda: bool) -> dict[str, Leaf]:
    return digests(live_state(job, include_cuda))


def piece_of(key: str) -> str:
    """``"optimizer:opt.state.0.exp_avg"`` -> ``"optimizer:opt"``."""
    return key.split(".", 1)[0]


def describe_piece(piece_key: str) -> str:
    """``"optimizer:opt"`` -> ``"optimizer (job.opt)"``; ``"rng:numpy"`` -> ``"rng (numpy global)"``."""
    piece, _, name = piece_key.partition(":")
    if piece == RNG and name in ("python", "numpy", "torch", "cuda"):
        return f"{RNG} ({name} global)"
    where = "job." + name.replace("/", ".")
    if piece == GRADIENTS:
        return f"{piece} ({where} parameters' .grad, accumulated between optimizer steps)"
    if piece == WORKER_RNG:
        return f"{piece} ({where} DataLoader worker seed, drawn from the loader generator at iter())"
    return f"{piece} ({where})"
