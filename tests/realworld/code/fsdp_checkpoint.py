"""Sharded checkpoints with torch.distributed.checkpoint (FSDP), and the SIGTERM fallback."""

import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict


def save(model, optimizer, lr_scheduler, step: int, folder: str) -> None:
    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optim": optim_state, "lr_scheduler": lr_scheduler.state_dict(), "step": step},
             checkpoint_id=f"{folder}/step-{step}")


def save_on_preemption(accelerator, model, optimizer, scheduler, step: int, folder: str) -> None:
    accelerator.save({"model": accelerator.unwrap_model(model).state_dict(),  # expect: SPK403
                      "optimizer": optimizer.state_dict(), "step": step}, f"{folder}/preempt.pt")
