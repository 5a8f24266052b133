"""A read-only Lightning callback that the truth runs add from the command line (never spikelint's).

Lightning's imagenet.py example prints no step lines and no losses (logger=False, a tqdm bar
refreshed every 10 batches showing only accuracies), and keeps only its best checkpoint, so the
final weights of a run are nowhere on disk. To see the truth without editing the script, the
truth runner (bench/frameworks/truth.py) appends this callback through LightningCLI:

    python imagenet.py fit ... --trainer.callbacks+=lightning_probe.Probe \
        --trainer.callbacks.out_dir DIR        # with bench/frameworks on PYTHONPATH

It prints `probe global_step=N loss=L` (L as repr of the float) after every optimizer step and
(with out_dir) writes DIR/final.pt at the end of fit: the LightningModule's state_dict, each optimizer's and LR
scheduler's state_dict, and global_step / current_epoch. It draws no random numbers, and has no
state of its own in the checkpoint.
"""

import os

import torch
from lightning.pytorch.callbacks import Callback


class Probe(Callback):
    def __init__(self, out_dir: str = ""):
        self.out_dir = out_dir  # "" (the default): print only, write no file

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs
        print(f"probe epoch={trainer.current_epoch} batch={batch_idx} "
              f"global_step={trainer.global_step} loss={float(loss)!r}", flush=True)

    def on_fit_end(self, trainer, pl_module):
        if not self.out_dir:
            return
        os.makedirs(self.out_dir, exist_ok=True)
        torch.save({
            "model": pl_module.state_dict(),
            "optimizers": [o.state_dict() for o in trainer.optimizers],
            "schedulers": [c.scheduler.state_dict() for c in trainer.lr_scheduler_configs],
            "global_step": trainer.global_step,
            "current_epoch": trainer.current_epoch,
        }, os.path.join(self.out_dir, "final.pt"))
