"""A plain PyTorch training script as teams write them, for ``smoke --cmd``: a tiny MLP built in code,
a DataLoader over a synthetic data set with a RandomSampler driven by its own generator, AdamW and a
StepLR, checkpoints written to ``<name>.tmp`` then renamed (two kept), a SIGTERM handler that saves at
the next step boundary and exits 143, and the resume logged in the framework way
(``resumed from …/step-24.pt at step 24``).

It logs like real jobs do: a start banner, ``epoch=E step=S loss=L`` step lines, ``Saving checkpoint at
step S`` after each save, and the resume line. ``--bug`` breaks one thing that a resume depends on.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data import RandomSampler
from torch.utils.data import TensorDataset

BUGS = (
    "no-optimizer",  # the optimizer is not saved: its moments restart on every resume
    "no-scheduler",  # the LR scheduler is not saved
    "no-rng",  # the global RNG states are not saved (dropout draws differ after the resume)
    "step-off-by-one",  # the saved step counter is one ahead of the steps actually done
    "no-sigterm-handler",  # SIGTERM ends the process at once, nothing saved
    "no-fallback",  # only the newest checkpoint is tried; a torn one crashes the resume
    "no-loader-generator",  # the sampler's generator is re-seeded on resume, not restored
    "restart-epoch",  # the resume starts the epoch's data order from its first batch again
)


def build(seed: int, samples: int, batch_size: int) -> tuple[nn.Module, torch.optim.Optimizer, Any, DataLoader, torch.Generator]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.9)
    data = torch.Generator().manual_seed(1234)
    inputs = torch.randn(samples, 8, generator=data)
    targets = inputs.sum(dim=1, keepdim=True)
    loader_generator = torch.Generator().manual_seed(seed)
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=batch_size, generator=loader_generator,
                        sampler=RandomSampler(range(samples), generator=loader_generator))
    return model, optimizer, scheduler, loader, loader_generator


def save(folder: Path, step: int, epoch: int, batch_in_epoch: int, epoch_generator_state: torch.Tensor,
         model: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any, bug: str | None, single: bool) -> Path:
    state: dict[str, Any] = {
        "model": model.state_dict(),
        "step": step + 1 if bug == "step-off-by-one" else step,
        "epoch": epoch,
        "batch_in_epoch": batch_in_epoch,
        "loader_generator": epoch_generator_state,
    }
    if bug != "no-optimizer":
        state["optimizer"] = optimizer.state_dict()
    if bug != "no-scheduler":
        state["scheduler"] = scheduler.state_dict()
    if bug != "no-rng":
        state["rng"] = {"python": str(random.getstate()), "numpy": torch.from_numpy(np.random.get_state()[1].copy()),
                        "torch": torch.get_rng_state()}
    final = folder / ("last.pt" if single else f"step-{step}.pt")
    temporary = final.with_name(final.name + ".tmp")
    with open(temporary, "wb") as handle:
        torch.save(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    kept = sorted(folder.glob("step-*.pt"), key=lambda path: int(path.stem.split("-")[1]))
    for old in kept[:-2]:
        old.unlink()
    return final


def newest_loadable(folder: Path, bug: str | None) -> tuple[Path, dict[str, Any]] | None:
    found = sorted(folder.glob("step-*.pt"), key=lambda path: int(path.stem.split("-")[1]), reverse=True)
    found += [path for path in [folder / "last.pt"] if path.is_file()]
    for path in found:
        try:
            return path, torch.load(path, weights_only=True)
        except Exception as error:
            if bug == "no-fallback":
                raise
            print(f"WARNING: could not load {path}: {type(error).__name__}; trying an older checkpoint", flush=True)
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--save-every", type=int, required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--bug", choices=BUGS)
    parser.add_argument("--single", action="store_true", help="keep one checkpoint, last.pt (written atomically)")
    parser.add_argument("--count-from-zero", action="store_true",
                        help="number the step lines from 0, as nanoGPT's `iter 0` after its first step")
    parser.add_argument("--step-time", type=float, default=0.0,
                        help="seconds each step takes at least, as a real model's steps do")
    parser.add_argument("--no-step-lines", action="store_true",
                        help="print only {'loss': L} per step, no step number, as a stock Trainer logs")
    parser.add_argument("--no-epoch-lines", action="store_true",
                        help="step lines without epoch=E, as many jobs print them (the epoch is only in the checkpoints)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    stop = {"requested": False}
    if args.bug != "no-sigterm-handler":
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))
    model, optimizer, scheduler, loader, loader_generator = build(args.seed, args.samples, args.batch_size)
    folder = Path(args.output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"training for {args.max_steps} steps, {len(loader)} steps an epoch, checkpoints every {args.save_every} "
          f"steps in {folder}", flush=True)
    step, epoch, skip = 0, 0, 0
    epoch_state = loader_generator.get_state()
    if args.resume:
        loaded = newest_loadable(folder, args.bug)
        if loaded is not None:
            path, state = loaded
            model.load_state_dict(state["model"])
            if "optimizer" in state:
                optimizer.load_state_dict(state["optimizer"])
            if "scheduler" in state:
                scheduler.load_state_dict(state["scheduler"])
            if "rng" in state:
                import ast
                version, internal, gauss = ast.literal_eval(state["rng"]["python"])
                random.setstate((version, tuple(internal), gauss))
                numpy_state = np.random.get_state()
                np.random.set_state((numpy_state[0], state["rng"]["numpy"].numpy(), *numpy_state[2:]))
                torch.set_rng_state(state["rng"]["torch"])
            step, epoch, skip = state["step"], state["epoch"], state["batch_in_epoch"]
            if args.bug == "no-loader-generator":
                loader_generator.manual_seed(args.seed)
            else:
                loader_generator.set_state(state["loader_generator"])
            if args.bug == "restart-epoch":
                skip = 0
            print(f"resumed from {path} at step {step}", flush=True)
    model.train()
    while step < args.max_steps:
        epoch_state = loader_generator.get_state()  # the order of this epoch is drawn from here
        for batch_index, (inputs, targets) in enumerate(loader):
            if batch_index < skip:
                continue
            loss = nn.functional.mse_loss(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if args.step_time:
                time.sleep(args.step_time)
            shown = "" if args.no_epoch_lines else f"epoch={epoch} "
            printed = step - 1 if args.count_from_zero else step
            if args.no_step_lines:
                print(f"{{'loss': {loss.item()!r}, 'learning_rate': {scheduler.get_last_lr()[0]:.6f}}}", flush=True)
            else:
                print(f"{shown}step={printed} loss={loss.item()!r} lr={scheduler.get_last_lr()[0]:.6f}", flush=True)
            position = batch_index + 1
            if step % args.save_every == 0 or stop["requested"]:
                saved = save(folder, step, epoch, position, epoch_state, model, optimizer, scheduler, args.bug,
                             args.single)
                print(f"Saving checkpoint at step {step} to {saved}", flush=True)
            if stop["requested"]:
                print(f"SIGTERM received: checkpoint of step {step} written, exiting", flush=True)
                return 143
            if step >= args.max_steps:
                break
        else:
            epoch, skip = epoch + 1, 0
            continue
        break
    print(f"done: {step} steps", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
