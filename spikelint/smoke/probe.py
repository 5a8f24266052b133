"""A snapshot of a job's live state, independent of what its ``state_dict()`` chooses to save.

The resumed process takes it right after ``load_state_dict`` and the reference takes it at
the same step; a piece that differs there is a piece the checkpoint does not carry (or
``load_state_dict`` does not restore), which names the culprit — optimizer, scheduler, RNG,
data position — before its effect shows up steps later in the losses.

The walk looks at the job object's own attributes (one level) and the process-wide RNGs.
"""

from __future__ import annotations

import random
from typing import Any
from typing import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader
from torch.utils.data import Sampler
from torch.utils.data.dataloader import _BaseDataLoaderIter

from spikelint.smoke.compare import Leaf
from spikelint.smoke.compare import digests
from spikelint.smoke.rngstate import capture_rng

MODEL = "model"
OPTIMIZER = "optimizer"
SCHEDULER = "scheduler"
GRAD_SCALER = "grad scaler"
DATA_POSITION = "data position"
RNG = "rng"
COUNTERS = "counters"
TENSORS = "tensors"


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
    for types, piece, read in table:
        if types and isinstance(value, types):
            return piece, read
    if isinstance(value, int) and not isinstance(value, bool):
        return COUNTERS, lambda number: number
    return None


def live_state(job: Any, include_cuda: bool) -> dict[str, Any]:
    """``{"rng:python": ..., "optimizer:opt": ..., ...}``: piece and attribute name per entry."""
    state: dict[str, Any] = {f"{RNG}:{name}": value for name, value in capture_rng(include_cuda).items()}
    attributes = dict(getattr(job, "__dict__", {}))
    if isinstance(job, torch.nn.Module):  # a job that is itself a module keeps children in _modules
        attributes.update(job._modules)
    for name, value in sorted(attributes.items()):
        found = classify(value)
        if found is None:
            continue
        piece, read = found
        try:
            state[f"{piece}:{name}"] = read(value)
        except Exception as error:  # a half-built object: record that it could not be read
            state[f"{piece}:{name}"] = f"unreadable: {type(error).__name__}"
    return state


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
    return f"{piece} (job.{name})"
