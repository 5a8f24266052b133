"""The smallest faithful torchrun training script that checkpoints with torch.distributed.checkpoint.

    torchrun --standalone --nproc_per_node 2 bench/frameworks/dcp_train.py \
        --ckpt-dir DIR --steps 24 --save-every 4 [--resume] [--step-seeded-data]

Why our own: pytorch/tutorials' distributed_checkpoint_recipe.rst is an mp.spawn + NCCL snippet
that saves after one step and has no training loop or resume; pytorch/examples'
distributed/FSDP2/example.py exits without two GPUs and writes torch.save files (it uses only
DCP's state_dict helpers). This script follows the recipe's pattern in code of its own (a Stateful
holding the model's and optimizer's state through get_state_dict / set_state_dict, nothing else) with
a tiny model, on DDP with gloo on CPU, and a loop shaped like the FSDP2 example's: torch.manual_seed at start, a fresh random batch from
the global generator every step, Adam, the checkpoint folder's name telling the step.

* every --save-every steps and at the last step: dcp.save({"app": TrainingState}) to DIR/step-N/
  (DCP writes one __R_0.distcp per rank and .metadata last);
* --resume: dcp.load the newest DIR/step-N/ (by N) and continue at step N+1;
* rank 0 prints `step N loss L` after each step and `saved checkpoint DIR/step-N`,
  `resumed from DIR/step-N at step N`.
* --step-seeded-data draws each step's batch from torch.Generator().manual_seed(1000 * rank + step)
  instead of the global generator (a control whose resume can be exact).
"""

import argparse
import os
import re

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.nn.parallel import DistributedDataParallel as DDP


class TrainingState(Stateful):
    """What DCP saves and loads: the model's and the optimizer's state dicts through DCP's own helpers
    (the pattern the DCP recipe teaches), and nothing else: no RNG, no data position."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        weights, moments = get_state_dict(self.model, self.optimizer)
        return {"weights": weights, "optimizer": moments}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["weights"],
                       optim_state_dict=state_dict["optimizer"])


def tiny_model():
    return nn.Sequential(nn.Linear(16, 24), nn.Tanh(), nn.Linear(24, 8))


def newest_checkpoint(ckpt_dir):
    steps = [int(m.group(1)) for name in os.listdir(ckpt_dir) if (m := re.fullmatch(r"step-(\d+)", name))] \
        if os.path.isdir(ckpt_dir) else []
    return max(steps, default=None)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--save-every", type=int, default=4)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--step-seeded-data", action="store_true")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(tiny_model())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()

    start = 0
    if args.resume and (last := newest_checkpoint(args.ckpt_dir)) is not None:
        path = os.path.join(args.ckpt_dir, f"step-{last}")
        dcp.load({"app": TrainingState(model, optimizer)}, checkpoint_id=path)
        start = last
        if rank == 0:
            print(f"resumed from {path} at step {last}", flush=True)

    for step in range(start + 1, args.steps + 1):
        if args.step_seeded_data:
            g = torch.Generator().manual_seed(1000 * rank + step)
            x, y = torch.rand(8, 16, generator=g), torch.rand(8, 8, generator=g)
        else:
            x, y = torch.rand(8, 16), torch.rand(8, 8)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step} loss {loss.item()!r}", flush=True)
        if step % args.save_every == 0 or step == args.steps:
            path = os.path.join(args.ckpt_dir, f"step-{step}")
            dcp.save({"app": TrainingState(model, optimizer)}, checkpoint_id=path)
            if rank == 0:
                print(f"saved checkpoint {path}", flush=True)

    # Free DDP before its process group: with gloo, destroying the group first and letting DDP's
    # destructor run at return hangs rank 0 now and then (seen with torch 2.13 on a loaded CPU).
    del model, optimizer
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
