"""A stock Hugging Face Trainer job for ``smoke --cmd``: the tiny ``PreTrainedModel`` of ``hf_tiny.py``
(built in code, nothing downloaded), ``save_steps`` checkpoints in ``checkpoint-N/`` folders, ``resume_from_checkpoint=True`` on
resume, and the callback a preemptible Trainer job needs: SIGTERM sets a flag, the next step end saves
and stops, and the process exits 143. A step line is printed from ``on_log`` (``logging_steps=1``).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path
from typing import Any

import torch
from transformers import Trainer
from transformers import TrainerCallback
from transformers import TrainingArguments
from transformers import set_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tiny model of the --job tests, shared
from hf_tiny import Samples
from hf_tiny import TinyConfig
from hf_tiny import TinyModel


class StepLines(TrainerCallback):
    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if logs and "loss" in logs:
            print(f"epoch={int(state.epoch or 0)} step={state.global_step} loss={logs['loss']!r}", flush=True)


class Preemption(TrainerCallback):
    """SIGTERM sets a flag; the next step end saves a checkpoint and stops training."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(self, "requested", True))

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.requested:
            control.should_save = True
            control.should_training_stop = True
        return control


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--save-every", type=int, required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    training = TrainingArguments(
        output_dir=args.output_dir, max_steps=args.max_steps, save_steps=args.save_every, save_total_limit=3,
        logging_steps=1, per_device_train_batch_size=4, learning_rate=0.05, lr_scheduler_type="cosine",
        warmup_steps=2, seed=args.seed, data_seed=args.seed, use_cpu=True, report_to=[], disable_tqdm=True,
        dataloader_num_workers=0, full_determinism=True)
    set_seed(args.seed)  # before the model is built: its initial weights are drawn from the global RNG
    preemption = Preemption()
    trainer = Trainer(model=TinyModel(TinyConfig()), args=training, train_dataset=Samples(64, 1234),
                      callbacks=[StepLines(), preemption])
    trainer.train(resume_from_checkpoint=True if args.resume else None)
    return 143 if preemption.requested else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
