"""A tiny real training script for ``spikelint smoke --cmd``: what a team's ``train.py`` looks like.

    python -m spikelint.smoke.example_train --max-steps 20 --save-every 4 --ckpt-dir ckpt [--resume]
    torchrun --standalone --nproc_per_node 2 -m spikelint.smoke.example_train ...

It prints ``step=N loss=X`` per step (rank 0), saves ``step-N.pt`` atomically (model,
optimizer, scheduler, step; rank 0) with one ``step-N-rng-rankR.pt`` per rank (each rank's
RNG, which draws its own batches and dropout), and ``last.pt`` at the end. ``--resume``
loads the newest checkpoint every rank can load, refusing a damaged one with a message and
falling back to the one before it. On SIGTERM it saves at the next step boundary and exits
143; under torchrun (``WORLD_SIZE`` > 1, gloo) the ranks agree on that boundary with an
all-reduce, as they must, or one would wait forever in the next step's gradient all-reduce.
``--forget-optimizer`` leaves the optimizer out of the checkpoint, to see a broken resume caught.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--save-every", type=int, required=True)
    parser.add_argument("--ckpt-dir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--forget-optimizer", action="store_true")
    parser.add_argument("--step-time", type=float, default=0.0, help="extra seconds per step, as a bigger model takes")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    import torch

    args = parse(argv)
    stop = {"requested": False}
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    distributed = world > 1
    if distributed:
        import torch.distributed as dist

        dist.init_process_group("gloo")
    torch.manual_seed(args.seed + rank)
    random.seed(args.seed + rank)
    torch.set_num_threads(1)
    model: Any = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(32, 1))
    plain = model
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)  # broadcasts rank 0's weights
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.7)
    data = torch.Generator().manual_seed(args.seed)
    inputs, targets = torch.randn(512, 8, generator=data), torch.randn(512, 1, generator=data)
    folder = Path(args.ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    step = 0

    def agree(flag: bool, op: str) -> bool:
        """The same decision on every rank (any rank for MAX, all ranks for MIN)."""
        if not distributed:
            return flag
        value = torch.tensor([int(flag)])
        dist.all_reduce(value, op=dist.ReduceOp.MAX if op == "any" else dist.ReduceOp.MIN)
        return bool(value.item())

    def finish(code: int) -> int:
        if distributed:
            dist.destroy_process_group()
        return code

    def save_atomically(value: Any, name: str) -> None:
        temporary = folder / f".{name}.tmp"
        with open(temporary, "wb") as handle:
            torch.save(value, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, folder / name)

    def save(name: str) -> None:
        rng = {"torch_rng": torch.get_rng_state(), "python_rng": torch.tensor(random.getstate()[1])}
        save_atomically(rng, name.replace(".pt", f"-rng-rank{rank}.pt"))
        if rank == 0:
            saved = {"model": plain.state_dict(), "scheduler": scheduler.state_dict(), "step": step}
            if not args.forget_optimizer:
                saved["optimizer"] = optimizer.state_dict()
            save_atomically(saved, name)
        if distributed:
            dist.barrier()  # the checkpoint is complete on every rank before training goes on

    def load(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
        try:
            return (torch.load(path, weights_only=True),
                    torch.load(path.with_name(path.name.replace(".pt", f"-rng-rank{rank}.pt")), weights_only=True))
        except Exception as error:  # noqa: BLE001 - a torn or missing file: refuse it, fall back to the one before
            print(f"rank {rank}: refused {path.name}: {type(error).__name__}: {str(error)[:120]}", flush=True)
            return None

    if args.resume:
        found = sorted(((int(m.group(1)), p) for p in folder.glob("step-*.pt") if (m := re.match(r"step-(\d+)\.pt$", p.name))),
                       reverse=True)
        for _, path in found:
            loaded = load(path)
            if not agree(loaded is not None, "all") or loaded is None:
                continue
            state, rng = loaded
            plain.load_state_dict(state["model"])
            scheduler.load_state_dict(state["scheduler"])
            if "optimizer" in state:
                optimizer.load_state_dict(state["optimizer"])
            step = int(state["step"])
            torch.set_rng_state(rng["torch_rng"])
            random.setstate((3, tuple(int(v) for v in rng["python_rng"].tolist()), None))
            if rank == 0:
                print(f"resumed from {path.name}", flush=True)
            break
    while step < args.max_steps:
        if args.step_time:
            time.sleep(args.step_time)
        order = torch.randint(0, 512, (16,))
        loss = torch.nn.functional.mse_loss(model(inputs[order] * random.uniform(0.9, 1.1)), targets[order])
        optimizer.zero_grad()
        loss.backward()  # under DDP: gradients all-reduced across the ranks
        optimizer.step()
        scheduler.step()
        step += 1
        if rank == 0:
            print(f"step={step} loss={loss.item()!r}", flush=True)
        if step % args.save_every == 0:
            save(f"step-{step}.pt")
        if agree(stop["requested"], "any"):
            if step % args.save_every:
                save(f"step-{step}.pt")
            return finish(143)
    save("last.pt")
    return finish(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
