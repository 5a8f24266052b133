"""User jobs for ``--job``: mostly the built-in job with one piece of state left out of its checkpoint.

Each of those is what a real training script looks like when it forgets one thing; the smoke
test must fail on it and name the piece. A few others check the protocol's edges (a job
written from scratch, a non-deterministic one, an object that is not a job).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from spikelint.smoke.job import TinyJob

TOTAL_STEPS = 100


class WithoutOptimizer(TinyJob):
    """Saves the model but not the optimizer's moments."""

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        del state["optimizer"]
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict({**state, "optimizer": self.optimizer.state_dict()})


class WithoutScheduler(TinyJob):
    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        del state["scheduler"]
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict({**state, "scheduler": self.scheduler.state_dict()})


class WithoutRng(TinyJob):
    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        del state["rng"]
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict({**state, "rng": self.current_rng()})

    def current_rng(self) -> dict[str, Any]:
        return TinyJob.state_dict(self)["rng"]


class WithoutDataPosition(TinyJob):
    """Restarts the epoch from its beginning after a resume (samples repeated and skipped)."""

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        del state["data"]
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        fresh = {"epoch": 0, "batch_in_epoch": 0, "epoch_start_generator": self.epoch_start_generator}
        super().load_state_dict({**state, "data": fresh})


class NumpyInCheckpoint(TinyJob):
    """Keeps a NumPy array in its state: torch.load(weights_only=True) refuses every checkpoint."""

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "history": np.zeros(3)}


class MinimalJob:
    """A job written from scratch: no setup(), no step_info(), its own RNG state saved as a tensor."""

    def __init__(self) -> None:
        self.weights = torch.zeros(4)
        self.step = 0

    def train_step(self) -> float:
        self.weights += torch.rand(4) - 0.5
        self.step += 1
        return float(self.weights.sum())

    def state_dict(self) -> dict[str, Any]:
        return {"weights": self.weights.clone(), "step": self.step, "torch_rng": torch.get_rng_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.weights = state["weights"].clone()
        self.step = int(state["step"])
        torch.set_rng_state(state["torch_rng"])


class Nondeterministic(MinimalJob):
    """Draws from the operating system's entropy: no two runs agree, interrupted or not."""

    def train_step(self) -> float:
        self.weights[0] += int.from_bytes(os.urandom(2), "little") / 65536
        self.step += 1
        return float(self.weights.sum())


class NotAJob:
    def train(self) -> float:
        return 0.0


def without_optimizer() -> WithoutOptimizer:
    return WithoutOptimizer(TOTAL_STEPS)


def without_scheduler() -> WithoutScheduler:
    return WithoutScheduler(TOTAL_STEPS)


def without_rng() -> WithoutRng:
    return WithoutRng(TOTAL_STEPS)


def without_data_position() -> WithoutDataPosition:
    return WithoutDataPosition(TOTAL_STEPS)


def numpy_in_checkpoint() -> NumpyInCheckpoint:
    return NumpyInCheckpoint(TOTAL_STEPS)


def complete() -> TinyJob:
    return TinyJob(TOTAL_STEPS)


def minimal() -> MinimalJob:
    return MinimalJob()


def nondeterministic() -> Nondeterministic:
    return Nondeterministic()


def not_a_job() -> NotAJob:
    return NotAJob()
