"""Checkpoint helpers for the classification trainer."""

from pathlib import Path

import torch


def save_full(model, optimizer, scheduler, epoch: int, path: Path) -> None:
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch}, path)


def save_step(model, optimizer, step: int, path: Path) -> None:
    torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
                "global_step": step}, path)


def save_ema(model, ema, optimizer, step: int, path: Path) -> None:
    checkpoint = {"state_dict": model.state_dict(), "ema": ema.state_dict(), "step": step}
    torch.save(checkpoint, path)  # expect: SPK403


def load(path: Path, model, optimizer) -> int:
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"]
