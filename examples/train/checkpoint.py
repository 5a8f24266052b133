"""Checkpointing for the fine-tuning loop."""

import torch


def save_checkpoint(model, optimizer, step, path):
    checkpoint = {"model": model.state_dict()}
    torch.save(checkpoint, path)


def save_full_checkpoint(model, optimizer, scheduler, step, path):
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "step": step,
        },
        path,
    )
