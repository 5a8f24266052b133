"""``ResumeCheckCallback`` against the real Transformers Trainer on the CPU: a tiny model built here, nothing downloaded."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from transformers import PretrainedConfig  # noqa: E402
from transformers import PreTrainedModel  # noqa: E402
from transformers import Trainer  # noqa: E402
from transformers import TrainerCallback  # noqa: E402
from transformers import TrainingArguments  # noqa: E402
from transformers.trainer_callback import ExportableState  # noqa: E402

from spikelint.smoke.integrations.hf import ResumeCheckCallback  # noqa: E402
from spikelint.smoke.integrations.hf import ResumeCheckError  # noqa: E402
from spikelint.smoke.integrations.hf import ResumeMismatch  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")
STEPS = 12
SAVE_EVERY = 4


class TinyConfig(PretrainedConfig):
    model_type = "spikelint-tiny"

    def __init__(self, width: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.width = width


class TinyModel(PreTrainedModel):
    """A linear regression that counts the batches it trained on (a buffer, or a plain attribute)."""

    config_class = TinyConfig

    def __init__(self, config: TinyConfig, counter: str = "buffer") -> None:
        super().__init__(config)
        self.layer = torch.nn.Linear(config.width, 1)
        self.counter = counter
        self.register_buffer("seen", torch.zeros((), dtype=torch.int64), persistent=counter != "unsaved buffer")
        self.batches_trained = 0

    def forward(self, x: Any, labels: Any = None) -> dict[str, Any]:
        prediction = self.layer(x)
        if self.training:
            self.seen += 1
            if self.counter == "attribute":
                self.batches_trained += 1
        return {"loss": torch.nn.functional.mse_loss(prediction, labels), "logits": prediction}


class Pairs(torch.utils.data.Dataset):  # type: ignore[type-arg]
    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(1)
        self.inputs = torch.randn(32, 4, generator=generator)
        self.targets = torch.randn(32, 1, generator=generator)

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"x": self.inputs[index], "labels": self.targets[index]}


class LossSpikes(TrainerCallback):
    """Counts the logged losses above a limit (a callback that would stop a run after too many)."""

    def __init__(self, limit: float = 1.0) -> None:
        self.limit = limit
        self.spikes = 0

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if (logs or {}).get("loss", 0.0) > self.limit:
            self.spikes += 1


class SavedLossSpikes(LossSpikes, ExportableState):
    """The same counter, saved in the checkpoint's trainer state, as Transformers restores callbacks."""

    def state(self) -> dict[str, Any]:
        return {"args": {"limit": self.limit}, "attributes": {"spikes": self.spikes}}


def trainer(output: Path, counter: str = "buffer", callbacks: tuple[Any, ...] = (), restore_callbacks: bool = True) -> Any:
    transformers.set_seed(0)
    transformers.logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    arguments = TrainingArguments(
        output_dir=str(output), max_steps=STEPS, per_device_train_batch_size=4, learning_rate=0.05,
        lr_scheduler_type="linear", warmup_steps=2, save_strategy="steps", save_steps=SAVE_EVERY, logging_steps=2,
        report_to=[], use_cpu=True, disable_tqdm=True, dataloader_num_workers=0, seed=0, remove_unused_columns=False,
        log_level="error", restore_callback_states_from_checkpoint=restore_callbacks,
    )
    model = TinyModel(TinyConfig(), counter=counter)
    return Trainer(model=model, args=arguments, train_dataset=Pairs(), callbacks=[type(c)() for c in callbacks])


def reference_and_resume(root: Path, attach: bool = True, **options: Any) -> dict[str, Any]:
    """The uninterrupted run saving every 4 steps, then a fresh Trainer resumed from checkpoint-4."""
    record = root / "record"
    for resume in (None, root / "out" / f"checkpoint-{SAVE_EVERY}"):
        run = trainer(root / "out", **options)
        if attach:
            ResumeCheckCallback.attach(run, record)
        else:
            run.add_callback(ResumeCheckCallback(record))
        run.train(resume_from_checkpoint=str(resume) if resume else None)
    return json.loads((record / "verdict.json").read_text(encoding="utf-8"))


def test_correct_resume_is_verified(tmp_path: Path) -> None:
    verdict = reference_and_resume(tmp_path, callbacks=(SavedLossSpikes(),))
    assert verdict["verdict"] == "verified", verdict["message"]
    assert verdict["resumed_from_step"] == SAVE_EVERY
    assert verdict["compared_points"][0] == "step-000004" and verdict["compared_points"][-1] == "end"
    assert len(verdict["compared_points"]) == STEPS - SAVE_EVERY + 1
    # The final train_loss averages only the resumed steps: a value beside the state, reported, not failed.
    assert any("values (state.log_history" in note for note in verdict["notes"])


@pytest.mark.parametrize(("counter", "where"), [
    ("unsaved buffer", "tensors (model.seen)"),
    ("attribute", "counters (model.batches_trained)"),
])
def test_model_state_outside_the_saved_weights_is_named(tmp_path: Path, counter: str, where: str) -> None:
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, counter=counter)
    verdict = caught.value.verdict
    assert verdict["verdict"] == "state_differs"
    assert [piece["where"] for piece in verdict["not_restored"]] == [where]
    assert verdict["failed_at"] == "step-000005"
    assert where in str(caught.value)


def test_callback_state_not_saved_is_named(tmp_path: Path) -> None:
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, callbacks=(LossSpikes(),))
    not_restored = [piece["where"] for piece in caught.value.verdict["not_restored"]]
    assert not_restored == ["counters (callbacks.LossSpikes.spikes)"]


def test_saved_callback_state_that_the_trainer_does_not_restore_is_named(tmp_path: Path) -> None:
    """Transformers saves an ExportableState callback but restores it only when asked to."""
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, callbacks=(SavedLossSpikes(),), restore_callbacks=False)
    not_restored = [piece["where"] for piece in caught.value.verdict["not_restored"]]
    assert not_restored == ["counters (callbacks.SavedLossSpikes.spikes)"]


def test_without_attach_the_callbacks_are_not_compared_and_it_says_so(tmp_path: Path) -> None:
    verdict = reference_and_resume(tmp_path, attach=False, callbacks=(LossSpikes(),))
    assert verdict["verdict"] == "verified"
    assert any("callbacks and grad scaler were not compared" in note for note in verdict["notes"])


def test_resume_without_a_recorded_run_says_what_to_do(tmp_path: Path) -> None:
    trainer(tmp_path / "out").train()
    resumed = trainer(tmp_path / "out")
    ResumeCheckCallback.attach(resumed, tmp_path / "record")
    with pytest.raises(ResumeCheckError, match="no uninterrupted run was recorded"):
        resumed.train(resume_from_checkpoint=str(tmp_path / "out" / f"checkpoint-{SAVE_EVERY}"))
