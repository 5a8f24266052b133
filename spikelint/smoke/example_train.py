"""A tiny real training script for ``spikelint smoke --cmd``: what a team's ``train.py`` looks like.

    python -m spikelint.smoke.example_train --max-steps 20 --save-every 4 --ckpt-dir ckpt [--resume]

It prints ``step=N loss=X`` per step, saves ``step-N.pt`` atomically (model, optimizer,
scheduler, step, RNG) and ``last.pt`` at the end, resumes from the newest ``step-N.pt`` with
``--resume``, and on SIGTERM saves at the next step boundary and exits 143.
``--forget-optimizer`` leaves the optimizer out of the checkpoint, to see a broken resume caught.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
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
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    import torch

    args = parse(argv)
    stop = {"requested": False}
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.7)
    data = torch.Generator().manual_seed(args.seed)
    inputs, targets = torch.randn(512, 8, generator=data), torch.randn(512, 1, generator=data)
    folder = Path(args.ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    step = 0

    def state() -> dict[str, Any]:
        saved = {"model": model.state_dict(), "scheduler": scheduler.state_dict(), "step": step,
                 "torch_rng": torch.get_rng_state(), "python_rng": torch.tensor(random.getstate()[1])}
        if not args.forget_optimizer:
            saved["optimizer"] = optimizer.state_dict()
        return saved

    def save(name: str) -> None:
        temporary = folder / f".{name}.tmp"
        with open(temporary, "wb") as handle:
            torch.save(state(), handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, folder / name)

    if args.resume:
        found = sorted((int(m.group(1)), p) for p in folder.glob("step-*.pt") if (m := re.match(r"step-(\d+)\.pt$", p.name)))
        if found:
            loaded = torch.load(found[-1][1], weights_only=True)
            model.load_state_dict(loaded["model"])
            scheduler.load_state_dict(loaded["scheduler"])
            if "optimizer" in loaded:
                optimizer.load_state_dict(loaded["optimizer"])
            step = int(loaded["step"])
            torch.set_rng_state(loaded["torch_rng"])
            random.setstate((3, tuple(int(v) for v in loaded["python_rng"].tolist()), None))
            print(f"resumed from {found[-1][1].name}", flush=True)
    while step < args.max_steps:
        order = torch.randint(0, 512, (16,))
        loss = torch.nn.functional.mse_loss(model(inputs[order] * random.uniform(0.9, 1.1)), targets[order])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        print(f"step={step} loss={loss.item()!r}", flush=True)
        if step % args.save_every == 0:
            save(f"step-{step}.pt")
        if stop["requested"]:
            if step % args.save_every:
                save(f"step-{step}.pt")
            return 143
    save("last.pt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
