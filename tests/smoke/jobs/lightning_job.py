"""A stock Lightning job for ``smoke --cmd``: a LightningModule with a tiny MLP built in code,
``ModelCheckpoint(every_n_train_steps=…, save_last=True, save_top_k=-1)`` and ``fit(ckpt_path="last")``
on resume. Two things a correct Lightning job needs to resume mid-epoch bit for bit are added, as
Lightning's documentation asks: a resumable DataLoader (``state_dict``/``load_state_dict``: the epoch's
shuffling generator and the batches already served), which Lightning saves in its loop state; and,
since Lightning's own SIGTERM handling stops without a checkpoint, a callback that saves ``last.ckpt``
at the next batch end and exits 143.

``--bug ema-outside-checkpoint`` keeps an exponential moving average of the weights in a callback
that does not save it (a real mistake: the EMA weights restart from the live weights on resume);
``--bug plain-loader`` trains from a plain shuffling DataLoader, which Lightning cannot resume mid-epoch
(it warns so in the log); ``--bug epoch-end-skip`` keeps the resumable loader but, resumed from a
checkpoint at an epoch's last batch, skips every batch of the next epoch (Lightning has moved on to
it already), which counts an empty epoch.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data import TensorDataset

BUGS = ("ema-outside-checkpoint", "plain-loader", "epoch-end-skip")


class Regression(L.LightningModule):
    def __init__(self, quiet_epochs: bool = False) -> None:
        super().__init__()
        self.quiet_epochs = quiet_epochs
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        self.register_buffer("ema", torch.zeros(1))

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        inputs, targets = batch
        loss = nn.functional.mse_loss(self.net(inputs), targets)
        shown = "" if self.quiet_epochs else f"epoch={self.current_epoch} "
        print(f"{shown}step={self.global_step + 1} loss={loss.item()!r}", flush=True)
        return loss

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.AdamW(self.parameters(), lr=0.01)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.9)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class ResumableLoader(DataLoader):
    """Shuffles with its own generator; its state is that generator at the epoch's start and the batches served.

    A checkpoint at an epoch's last batch has served every batch: its resume starts the next epoch with
    the generator as the finished epoch left it, not an empty epoch that skips them all again.
    """

    def __init__(self, dataset: TensorDataset, batch_size: int, seed: int, epoch_end_skip: bool = False) -> None:
        self.order = torch.Generator().manual_seed(seed)
        self.epoch_end_skip = epoch_end_skip
        super().__init__(dataset, batch_size=batch_size, shuffle=True, generator=self.order)
        self.epoch_start = self.order.get_state()
        self.served = 0
        self.resume_at = 0

    def __iter__(self) -> Any:
        if self.resume_at:
            self.order.set_state(self.epoch_start)
        else:
            self.epoch_start = self.order.get_state()
        skip, self.resume_at, self.served = self.resume_at, 0, 0
        for index, batch in enumerate(super().__iter__()):
            if index < skip:
                continue
            self.served = index + 1
            yield batch

    def state_dict(self) -> dict[str, Any]:
        return {"epoch_start": self.epoch_start, "served": self.served, "now": self.order.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["served"] >= len(self) and not self.epoch_end_skip:
            self.order.set_state(state["now"])
            self.resume_at = 0
            return
        self.epoch_start, self.resume_at = state["epoch_start"], state["served"]


class Preemption(L.Callback):
    """SIGTERM sets a flag; the next batch end saves ``last.ckpt`` and the process exits 143."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.requested = False

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(self, "requested", True))

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if self.requested:
            trainer.save_checkpoint(self.folder / "last.ckpt")
            print(f"SIGTERM: saved last.ckpt at step {trainer.global_step}", flush=True)
            sys.exit(143)


class WeightAverage(L.Callback):
    """An EMA of the first layer's weights, kept in the callback and never saved (the bug)."""

    def __init__(self) -> None:
        self.average: torch.Tensor | None = None

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: Any, *args: Any) -> None:
        weight = pl_module.net[0].weight.detach()
        self.average = weight.clone() if self.average is None else 0.9 * self.average + 0.1 * weight
        pl_module.ema.copy_(self.average.mean().reshape(1))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--save-every", type=int, required=True)
    parser.add_argument("--ckpt-dir", required=True)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bug", choices=BUGS)
    parser.add_argument("--samples", type=int, default=64, help="samples per epoch (4 a batch)")
    parser.add_argument("--no-epoch-lines", action="store_true",
                        help="step lines without epoch=E (the epoch is only in the checkpoints)")
    args = parser.parse_args(argv)
    logging.getLogger("lightning").setLevel(logging.WARNING)
    torch.set_num_threads(1)
    L.seed_everything(args.seed, workers=True, verbose=False)
    folder = Path(args.ckpt_dir)
    data = torch.Generator().manual_seed(1234)
    inputs = torch.randn(args.samples, 8, generator=data)
    dataset = TensorDataset(inputs, inputs.sum(dim=1, keepdim=True))
    loader = ResumableLoader(dataset, batch_size=4, seed=args.seed, epoch_end_skip=args.bug == "epoch-end-skip")
    if args.bug == "plain-loader":  # a plain shuffling DataLoader: Lightning cannot resume it mid-epoch
        loader = DataLoader(dataset, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(args.seed))
    checkpoints = L.pytorch.callbacks.ModelCheckpoint(dirpath=folder, every_n_train_steps=args.save_every,
                                                      save_last=True, save_top_k=-1)
    callbacks: list[L.Callback] = [checkpoints, Preemption(folder)]
    if args.bug == "ema-outside-checkpoint":
        callbacks.append(WeightAverage())
    trainer = L.Trainer(max_steps=args.max_steps, accelerator="cpu", devices=1, deterministic=True,
                        callbacks=callbacks, logger=False, enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0)
    trainer.fit(Regression(args.no_epoch_lines), loader, ckpt_path="last" if args.resume else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
