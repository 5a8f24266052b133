"""A tiny Hugging Face Trainer job built in code (nothing downloaded), run uninterrupted or killed and resumed.

The model is a ``PreTrainedModel`` so that the Trainer writes ``config.json`` and counts FLOPs;
dropout, a cosine schedule with warm-up, gradient accumulation and evaluation make every piece of
a ``checkpoint-N/`` folder matter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import PretrainedConfig
from transformers import PreTrainedModel
from transformers import Trainer
from transformers import TrainerCallback
from transformers import TrainingArguments

MAX_STEPS = 10
SAVE_STEPS = 4


class TinyConfig(PretrainedConfig):
    model_type = "spikelint-tiny"

    def __init__(self, width: int = 4, **options: Any) -> None:
        self.width = width
        super().__init__(**options)


class TinyModel(PreTrainedModel):
    config_class = TinyConfig
    main_input_name = "x"

    def __init__(self, config: TinyConfig) -> None:
        super().__init__(config)
        self.lin = nn.Linear(config.width, 1)
        self.drop = nn.Dropout(0.1)
        self.post_init()

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        out = self.lin(self.drop(x)).squeeze(-1)
        assert labels is not None
        return {"loss": ((out - labels) ** 2).mean(), "logits": out}


class Samples(torch.utils.data.Dataset[dict[str, torch.Tensor]]):
    def __init__(self, count: int, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.x = torch.randn(count, 4, generator=generator)
        self.y = torch.randn(count, generator=generator)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"x": self.x[index], "labels": self.y[index]}


class Killed(Exception):
    """Stands for the SIGKILL: training stops dead after a step, nothing more is written."""


class KillAfter(TrainerCallback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.step:
            raise Killed(self.step)


def train(output_dir: Path, kill_after: int | None = None, resume: bool = False) -> None:
    """Train to MAX_STEPS (checkpoint every SAVE_STEPS), then ``save_state()`` as teams do at the end."""
    torch.manual_seed(0)
    args = TrainingArguments(
        output_dir=str(output_dir), max_steps=MAX_STEPS, save_steps=SAVE_STEPS, per_device_train_batch_size=4,
        gradient_accumulation_steps=2, eval_strategy="steps", eval_steps=3, per_device_eval_batch_size=8,
        learning_rate=1e-2, lr_scheduler_type="cosine", warmup_steps=2, logging_steps=1, report_to=[],
        use_cpu=True, seed=0, dataloader_num_workers=0, disable_tqdm=True,
    )
    callbacks: list[TrainerCallback] = [KillAfter(kill_after)] if kill_after is not None else []
    trainer = Trainer(model=TinyModel(TinyConfig()), args=args, train_dataset=Samples(64, 0),
                      eval_dataset=Samples(16, 1), callbacks=callbacks)
    trainer.train(resume_from_checkpoint=True if resume else None)
    trainer.save_state()


def uninterrupted_and_resumed(root: Path, kill_after: int = 7) -> tuple[Path, Path]:
    """Two output folders: one run straight through, one killed after ``kill_after`` and resumed."""
    reference, resumed = root / "reference", root / "resumed"
    train(reference)
    try:
        train(resumed, kill_after=kill_after)
    except Killed:
        pass
    train(resumed, resume=True)
    return reference, resumed
