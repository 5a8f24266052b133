"""User jobs for ``--job``: mostly the built-in job with one piece of state left out of its checkpoint.

Each of those is what a real training script looks like when it forgets one thing; the smoke
test must fail on it and name the piece. A few others check the protocol's edges (a job
written from scratch, a non-deterministic one, an object that is not a job).
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import sys
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from spikelint.smoke.harness.job import TinyJob

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


# --- state that only the live-state walk sees -------------------------------------------------


class HandWrittenEma(TinyJob):
    """Keeps an exponential moving average of the weights as plain tensors, and forgets to save it."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.ema = {name: p.detach().clone() for name, p in self.model.named_parameters()}

    def train_step(self) -> float:
        loss = super().train_step()
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                self.ema[name].mul_(0.9).add_(p.detach(), alpha=0.1)
        return loss


class AveragedModelEma(TinyJob):
    """``torch.optim.swa_utils.AveragedModel`` updated every step, left out of the checkpoint."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.averaged = torch.optim.swa_utils.AveragedModel(
            self.model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9)
        )

    def train_step(self) -> float:
        loss = super().train_step()
        self.averaged.update_parameters(self.model)
        return loss


class ForgottenScaler(TinyJob):
    """A GradScaler that never overflows here (fp32 on the CPU): only its growth tracker moves."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.scaler = torch.amp.GradScaler("cpu", growth_interval=1000)

    def train_step(self) -> float:
        if self.batch_in_epoch == len(self.loader):
            self.epoch += 1
            self._open_epoch()
        indices, inputs, targets = next(self.batches)
        self.batch_in_epoch += 1
        self.model.train()
        loss = torch.nn.functional.mse_loss(self.model(inputs), targets)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.step += 1
        self._last = type(self._last)(indices.tolist(), 0.0)
        return float(loss.item())


@dataclasses.dataclass
class Progress:
    """A record in the checkpoint that the weights-only loader is allowed to rebuild."""

    samples_seen: int
    last_epoch: int


torch.serialization.add_safe_globals([Progress])


class RecordNotRestored(TinyJob):
    """Saves a dataclass; ``load_state_dict`` restores only one of its fields."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.progress = Progress(0, 0)

    def train_step(self) -> float:
        loss = super().train_step()
        self.progress.samples_seen += self.batch_size
        self.progress.last_epoch = self.epoch
        return loss

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "progress": dataclasses.replace(self.progress)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.progress.last_epoch = state["progress"].last_epoch  # samples_seen forgotten


class TrainerState:
    def __init__(self) -> None:
        self.global_step = 0


class NestedCounter(TinyJob):
    """The step counter lives one object down (``job.state.global_step``) and is not restored."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.state = TrainerState()

    def train_step(self) -> float:
        self.state.global_step += 1
        return super().train_step()


class DivergingLoss(TinyJob):
    def train_step(self) -> float:
        super().train_step()
        return float("nan") if self.step > 3 else 1.0


class DroppedAccumulation(TinyJob):
    """One micro-batch per call, an optimizer step every 4: neither the gradients nor the micro-step
    counter are in the checkpoint, which is harmless only at multiples of 4."""

    window = 4

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.micro_step = 0

    def train_step(self) -> float:
        if self.batch_in_epoch == len(self.loader):
            self.epoch += 1
            self._open_epoch()
        indices, inputs, targets = next(self.batches)
        self.batch_in_epoch += 1
        loss = torch.nn.functional.mse_loss(self.model(inputs), targets) / self.window
        loss.backward()
        self.micro_step = (self.micro_step + 1) % self.window
        if self.micro_step == 0:
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        self.scheduler.step()
        self.step += 1
        self._last = type(self._last)(indices.tolist(), 0.0)
        return float(loss.item())

    def state_dict(self) -> dict[str, Any]:
        return super().state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.micro_step = 0
        self.optimizer.zero_grad(set_to_none=True)


# --- state that only a real restart shows ---------------------------------------------------

_IMPORT_TIME_ORDER = list(range(TinyJob.samples))
random.Random(int.from_bytes(os.urandom(4), "little")).shuffle(_IMPORT_TIME_ORDER)


class ImportTimeSplit(TinyJob):
    """Holds out samples chosen when the module was imported: a fresh interpreter picks others."""

    def train_step(self) -> float:
        loss = super().train_step()
        held_out = torch.tensor(_IMPORT_TIME_ORDER[:4])
        with torch.no_grad():
            self.model[0].weight.add_(held_out.float().mean() * 1e-6)
        return loss


class SetOrderedGroups(TinyJob):
    """Parameter groups built from a set of names: their order follows the string-hash seed."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        named = dict(self.model.named_parameters())
        groups = [{"params": [named[name]], "lr": 1e-3 * (index + 1)} for index, name in enumerate(set(named))]
        self.optimizer = torch.optim.AdamW(groups, lr=1e-3)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(self.optimizer, max_lr=0.05, total_steps=self.total_steps)


# --- signals -----------------------------------------------------------------------------------


class AugmentedSamples(torch.utils.data.Dataset[Any]):
    """Adds noise in the worker: torch's RNG there is seeded by the DataLoader, NumPy's by ``seed_worker``."""

    def __init__(self, base: Any) -> None:
        self.base = base

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, index: int) -> Any:
        sample, inputs, targets = self.base[index]
        jitter = torch.randn(inputs.shape) * 0.01 + float(np.random.uniform(-0.01, 0.01))
        return sample, inputs + jitter, targets


def seed_worker(worker_id: int) -> None:
    """The DataLoader seeds torch in each worker from the loader generator; NumPy and random follow it."""
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class LoaderWorkers(TinyJob):
    """Two DataLoader worker processes that draw augmentation noise, as most real jobs have.

    The workers' RNGs come from the base seed that ``iter(loader)`` draws from the loader generator,
    so restoring that generator and replaying the epoch's order restores them too.
    """

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        self.loader = DataLoader(
            AugmentedSamples(self.loader.dataset), batch_size=self.batch_size, shuffle=True,
            generator=self.loader_generator, drop_last=True, num_workers=2, worker_init_fn=seed_worker,
        )
        self._open_epoch()


class LoaderWorkersWithoutGenerator(LoaderWorkers):
    """Saves the epoch and the batch in it, but not the loader generator: new order and new worker seeds."""

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["data"] = {key: value for key, value in state["data"].items() if key != "epoch_start_generator"}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        data = {**state["data"], "epoch_start_generator": self.loader_generator.get_state()}
        super().load_state_dict({**state, "data": data})


class NoDeterministicKernel(TinyJob):
    """Calls max_unpool1d every step, an op torch has no deterministic implementation of (CPU and CUDA);
    on CUDA also torch.histc, listed as such for CUDA tensors. Their results are not used."""

    def train_step(self) -> float:
        values = torch.arange(8.0, device=self.device).view(1, 1, 8)
        pooled, where = F.max_pool1d(values, 2, return_indices=True)
        F.max_unpool1d(pooled, where, 2)
        if self.device.startswith("cuda"):
            torch.histc(values, bins=4)
        return super().train_step()


class VaryingWithoutDeterministicKernel(Nondeterministic):
    """Both at once: an op without a deterministic implementation and results that differ run to run."""

    def train_step(self) -> float:
        values = torch.arange(8.0).view(1, 1, 8)
        pooled, where = F.max_pool1d(values, 2, return_indices=True)
        F.max_unpool1d(pooled, where, 2)
        return super().train_step()


class LargeState(TinyJob):
    """The built-in job with a hidden layer of 500,000 units: 10 M parameters, a 120 MB state with
    AdamW's moments, so that what a resume costs in device memory is measurable (the GPU check)."""

    hidden = 500_000


class OwnSigtermHandler(TinyJob):
    """Installs its own SIGTERM handler that exits at once, without a checkpoint."""

    def setup(self, device: str, seed: int) -> None:
        super().setup(device, seed)
        signal.signal(signal.SIGTERM, self.on_sigterm)

    def on_sigterm(self, signum: int, frame: object) -> None:
        sys.exit(0)


def hand_written_ema() -> HandWrittenEma:
    return HandWrittenEma(TOTAL_STEPS)


def averaged_model_ema() -> AveragedModelEma:
    return AveragedModelEma(TOTAL_STEPS)


def forgotten_scaler() -> ForgottenScaler:
    return ForgottenScaler(TOTAL_STEPS)


def record_not_restored() -> RecordNotRestored:
    return RecordNotRestored(TOTAL_STEPS)


def nested_counter() -> NestedCounter:
    return NestedCounter(TOTAL_STEPS)


def diverging_loss() -> DivergingLoss:
    return DivergingLoss(TOTAL_STEPS)


def dropped_accumulation() -> DroppedAccumulation:
    return DroppedAccumulation(TOTAL_STEPS)


def import_time_split() -> ImportTimeSplit:
    return ImportTimeSplit(TOTAL_STEPS)


def set_ordered_groups() -> SetOrderedGroups:
    return SetOrderedGroups(TOTAL_STEPS)


def loader_workers() -> LoaderWorkers:
    return LoaderWorkers(TOTAL_STEPS)


def own_sigterm_handler() -> OwnSigtermHandler:
    return OwnSigtermHandler(TOTAL_STEPS)


def loader_workers_without_generator() -> LoaderWorkersWithoutGenerator:
    return LoaderWorkersWithoutGenerator(TOTAL_STEPS)


def no_deterministic_kernel() -> NoDeterministicKernel:
    return NoDeterministicKernel(TOTAL_STEPS)


def varying_without_deterministic_kernel() -> VaryingWithoutDeterministicKernel:
    return VaryingWithoutDeterministicKernel()


def large_state() -> LargeState:
    return LargeState(TOTAL_STEPS)
