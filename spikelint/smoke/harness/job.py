"""The job protocol that ``--job MODULE:FACTORY`` follows, its loader, and the built-in tiny job.

A job is any object with ``train_step() -> float``, ``state_dict() -> dict`` and
``load_state_dict(dict) -> None``; ``setup(device, seed)`` is optional, and so is
``step_info()`` returning ``{"indices": [...], "data_wait_s": float}`` for the last step,
which lets the report compare the data position sample by sample and split data wait from
compute. spikelint saves and restores exactly what ``state_dict()`` returns.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import random
import sys
import time
from pathlib import Path
from typing import Any
from typing import Callable
from typing import NamedTuple
from typing import Protocol
from typing import runtime_checkable

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data import DistributedSampler
from torch.utils.data import TensorDataset

from spikelint.smoke.harness.rngstate import capture_rng
from spikelint.smoke.harness.rngstate import restore_rng
from spikelint.smoke.harness.rngstate import seed_everything

REQUIRED_METHODS = ("train_step", "state_dict", "load_state_dict")
BUILTIN_LABEL = "built-in (MLP 16-64-4 with dropout, AdamW + OneCycleLR, shuffled DataLoader)"


@runtime_checkable
class TrainingJob(Protocol):
    def train_step(self) -> float: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class JobError(Exception):
    """The job cannot be imported or does not follow the protocol (a setup error)."""


class JobSpec(NamedTuple):
    label: str
    factory: Callable[[], Any]


def _import_module(name: str) -> Any:
    """A dotted module name (found from the current folder too) or a path to a ``.py`` file."""
    if name.endswith(".py") or os.sep in name:
        path = Path(name).resolve()
        if not path.is_file():
            raise JobError(f"--job: no such file {name}")
        module_name = f"spikelint_smoke_job_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise JobError(f"--job: cannot import {name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(name)


def resolve_job(spec: str | None, steps: int) -> JobSpec:
    """The factory for ``--job`` (imported here, in the parent, so a typo fails before training)."""
    if spec is None:
        return JobSpec(BUILTIN_LABEL, functools.partial(TinyJob, total_steps=steps))
    module_name, separator, attribute = spec.partition(":")
    if not separator or not module_name or not attribute:
        raise JobError(f"--job must look like MODULE:FACTORY, not {spec!r}")
    try:
        target: Any = _import_module(module_name)
    except JobError:
        raise
    except Exception as error:  # noqa: BLE001 - the user's module may raise anything on import: a setup error naming it
        raise JobError(f"--job: importing {module_name} failed: {type(error).__name__}: {error}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise JobError(f"--job: {module_name} has no attribute {attribute}")
        target = getattr(target, part)
    if not callable(target):
        raise JobError(f"--job: {spec} is not callable")
    return JobSpec(spec, target)


def check_job(job: Any) -> None:
    missing = [name for name in REQUIRED_METHODS if not callable(getattr(job, name, None))]
    if missing:
        raise JobError(f"the job object ({type(job).__name__}) has no {', '.join(missing)}")


def step_info(job: Any) -> tuple[list[int] | None, float | None]:
    """(sample indices, data wait in seconds) of the last step, when the job tells."""
    report = getattr(job, "step_info", None)
    if not callable(report):
        return None, None
    info = report() or {}
    indices = info.get("indices")
    wait = info.get("data_wait_s")
    return (
        [int(index) for index in indices] if indices is not None else None,
        float(wait) if wait is not None else None,
    )


class StepInfo(NamedTuple):
    indices: list[int]
    data_wait_s: float


def distributed_rank_and_size() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def average_gradients(parameters: list[torch.nn.Parameter], world_size: int) -> None:
    """One flat all-reduce in a fixed layout: the same summation on every run, resumed or not."""
    grads = [parameter.grad for parameter in parameters if parameter.grad is not None]
    flat = torch.cat([grad.reshape(-1) for grad in grads])
    dist.all_reduce(flat)
    flat /= world_size
    offset = 0
    for grad in grads:
        count = grad.numel()
        grad.copy_(flat[offset : offset + count].view_as(grad))
        offset += count


class TinyJob:
    """An MLP with dropout, AdamW + OneCycleLR, and a shuffled DataLoader with its own generator.

    Every kind of state that real jobs forget is in use: Python's RNG scales the input noise,
    NumPy's draws it, torch's drives dropout, the loader's generator orders the samples, and
    the scheduler changes the learning rate every step.
    """

    samples = 256
    batch_size = 16
    features = 16
    hidden = 64
    outputs = 4

    def __init__(self, total_steps: int = 40) -> None:
        self.total_steps = total_steps
        self.device = "cpu"
        self.step = 0
        self.epoch = 0
        self.batch_in_epoch = 0

    def setup(self, device: str, seed: int) -> None:
        self.device = device
        self.rank, self.world_size = distributed_rank_and_size()
        seed_everything(seed, include_cuda=device.startswith("cuda"))  # identical model on every rank
        data = torch.Generator().manual_seed(seed)
        inputs = torch.randn(self.samples, self.features, generator=data)
        weights = torch.randn(self.features, self.outputs, generator=data)
        targets = inputs @ weights + 0.1 * torch.randn(self.samples, self.outputs, generator=data)
        dataset = TensorDataset(torch.arange(self.samples), inputs, targets)
        self.model = torch.nn.Sequential(
            torch.nn.Linear(self.features, self.hidden),
            torch.nn.ReLU(),
            torch.nn.Dropout(0.2),
            torch.nn.Linear(self.hidden, self.outputs),
        ).to(device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.01)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(
            self.optimizer, max_lr=0.05, total_steps=max(self.total_steps, 2)
        )
        self.loader_generator = torch.Generator().manual_seed(seed + 1 + self.rank)
        self.sampler: DistributedSampler[Any] | None = (
            DistributedSampler(dataset, self.world_size, self.rank, shuffle=True, seed=seed, drop_last=True)
            if self.world_size > 1
            else None
        )
        self.loader = DataLoader(
            dataset,
            batch_size=self.batch_size,
            shuffle=self.sampler is None,
            sampler=self.sampler,
            generator=self.loader_generator,
            drop_last=True,
        )
        seed_everything(seed + self.rank, include_cuda=device.startswith("cuda"))  # per-rank noise/dropout
        self._last = StepInfo([], 0.0)
        self._open_epoch()

    def _open_epoch(self) -> None:
        """Remember the loader generator before the iterator draws from it (that is the resume point)."""
        self.batch_in_epoch = 0
        self.epoch_start_generator = self.loader_generator.get_state()
        if self.sampler is not None:
            self.sampler.set_epoch(self.epoch)
        self.batches = iter(self.loader)

    def train_step(self) -> float:
        waited = time.perf_counter()
        if self.batch_in_epoch == len(self.loader):
            self.epoch += 1
            self._open_epoch()
        indices, inputs, targets = next(self.batches)
        self.batch_in_epoch += 1
        data_wait_s = time.perf_counter() - waited
        scale = random.uniform(0.5, 1.5)
        noise = torch.from_numpy(np.random.standard_normal(tuple(inputs.shape)).astype(np.float32))
        inputs = (inputs + 0.01 * scale * noise).to(self.device)
        targets = targets.to(self.device)
        self.model.train()
        loss = F.mse_loss(self.model(inputs), targets)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.world_size > 1:
            average_gradients(list(self.model.parameters()), self.world_size)
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        self._last = StepInfo(indices.tolist(), data_wait_s)
        return float(loss.item())

    def step_info(self) -> dict[str, Any]:
        return {"indices": self._last.indices, "data_wait_s": self._last.data_wait_s}

    def state_dict(self) -> dict[str, Any]:
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "step": self.step,
            "data": {
                "epoch": self.epoch,
                "batch_in_epoch": self.batch_in_epoch,
                "epoch_start_generator": self.epoch_start_generator,
            },
            "rng": capture_rng(include_cuda=self.device.startswith("cuda")),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = int(state["step"])
        data = state["data"]
        self.epoch = int(data["epoch"])
        self.loader_generator.set_state(data["epoch_start_generator"])
        self._open_epoch()
        for _ in range(int(data["batch_in_epoch"])):  # replay the order, not the training
            next(self.batches)
        self.batch_in_epoch = int(data["batch_in_epoch"])
        restore_rng(state["rng"])
