"""Minimal DDP training loop for the CIFAR baseline."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from models import ResNet18
from data import build_loader


def save_snapshot(model: torch.nn.Module, epoch: int, path: Path) -> None:
    """Weights for the evaluation job only."""
    torch.save({"model": model.state_dict(), "epoch": epoch}, path)  # expect: SPK403


def save_checkpoint(model, optimizer, scheduler, scaler, epoch: int, step: int, path: Path) -> None:
    state = {
        "model": model.module.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "epoch": epoch,
        "step": step,
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all(),
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def export_weights(model: torch.nn.Module, path: Path) -> None:
    torch.save(model.state_dict(), path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint-dir", type=Path, default=Path("/mnt/ckpt/cifar"))
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = DDP(ResNet18().cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler()
    loader = build_loader(rank)
    step = 0
    for epoch in range(args.epochs):
        for images, labels in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1
        scheduler.step()
        if rank == 0:
            save_checkpoint(model, optimizer, scheduler, scaler, epoch, step, args.checkpoint_dir / "last.pt")
            save_snapshot(model.module, epoch, args.checkpoint_dir / f"epoch{epoch}.pt")
            ckpt = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
            torch.save(ckpt, args.checkpoint_dir / "legacy.pt")  # expect: SPK403


if __name__ == "__main__":
    main()
