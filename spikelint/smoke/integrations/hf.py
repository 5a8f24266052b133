"""``ResumeCheckCallback``: a Hugging Face ``TrainerCallback`` that proves ``trainer.train(resume_from_checkpoint=...)``.

Attach the same callback to the uninterrupted run and to the run resumed from one of its
``checkpoint-N/`` folders; ``attach`` also lets it see the trainer's other callbacks and its
grad scaler, which ``TrainerCallback`` hooks are not given::

    ResumeCheckCallback.attach(trainer, "resume-record")
    trainer.train()
    ...
    ResumeCheckCallback.attach(resumed_trainer, "resume-record")
    resumed_trainer.train(resume_from_checkpoint="out/checkpoint-4")

A point is taken at ``on_step_begin`` (once per optimizer step, keyed by ``state.global_step``)
and at ``on_train_end``. The Trainer loads the model, optimizer, scheduler, scaler, trainer
state and callback states before training starts and the RNG states after skipping the
trained batches, just before the first ``on_step_begin``: the resumed run's first point is the
restore check, against the uninterrupted run's state before the same step. A run is a resume
when its ``state.global_step`` is above 0 at ``on_train_begin``.

What is compared: the model's ``state_dict()`` and ``.grad``, and what it holds beyond them and
beyond what ``PreTrainedModel`` sets (``config``, ``name_or_path``): an EMA, counters, tensors,
non-persistent buffers, the same in its own submodules; the optimizer and LR scheduler; the
``TrainerState`` (``global_step`` and the other counters; ``epoch``, ``log_history`` and other
floats are values, reported but never a failure on their own); with ``attach``, the fields of
every callback of your own, the ``state()`` of Transformers' stateful callbacks and the
accelerator's grad scaler; the Python, NumPy, torch and CUDA generators. Left out: the
arguments, paths, loggers and the trainer's logging accumulators, Transformers' flow, progress
and printer callbacks, and whatever ``ignore`` patterns or a ``mode="calibrate"`` run mark as
volatile. The data position is not observed directly (the hooks are not given the batch); a
wrong one shows in the model after the first resumed step.
"""

from __future__ import annotations

import functools
import os
from typing import Any
from typing import Iterable

import torch
from transformers import PretrainedConfig
from transformers import PreTrainedModel
from transformers import TrainerCallback
from transformers import TrainerControl
from transformers import TrainerState
from transformers import TrainingArguments
from transformers import trainer_callback

from spikelint.smoke.integrations.core import LiveState
from spikelint.smoke.integrations.core import ResumeCheckError
from spikelint.smoke.integrations.core import ResumeMismatch
from spikelint.smoke.integrations.core import ResumeRecorder
from spikelint.smoke.integrations.core import point_name

__all__ = ["ResumeCheckCallback", "ResumeCheckError", "ResumeMismatch"]

_FRAMEWORK_PACKAGES = ("transformers", "accelerate")
# Callbacks whose state the Trainer saves (``ExportableState``, Transformers 4.41 and later).
_EXPORTABLE: tuple[type, ...] = tuple(
    kind for kind in [getattr(trainer_callback, "ExportableState", None)] if isinstance(kind, type)
)
# Attributes PreTrainedModel sets on every model when its own base-class probe cannot be built.
_KNOWN_BASE_NAMES = frozenset({"config", "name_or_path", "generation_config", "warnings_issued", "loss_type",
                               "kernel_config", "_keep_in_fp32_modules", "_no_split_modules"})


@functools.lru_cache(maxsize=1)
def _model_base_names() -> frozenset[str]:
    """The attributes ``PreTrainedModel.__init__`` sets on every model, measured on an empty one."""

    class _Bare(PreTrainedModel):
        config_class = PretrainedConfig

    try:
        return frozenset(vars(_Bare(PretrainedConfig()))) | _KNOWN_BASE_NAMES
    except Exception:  # noqa: BLE001 - a future version that cannot build a bare model: fall back to the names known here
        return _KNOWN_BASE_NAMES


def _plain_scheduler(scheduler: Any) -> Any:
    """Accelerate's ``AcceleratedScheduler`` wraps the scheduler whose state is saved."""
    inner = getattr(scheduler, "scheduler", None)
    return inner if inner is not None and hasattr(inner, "state_dict") else scheduler


class ResumeCheckCallback(TrainerCallback):
    """Records the uninterrupted run's live state, then checks a resumed run against it step for step.

    ``mode``: ``"auto"`` records on a fresh run and checks on a resumed one; ``"calibrate"`` is a
    second fresh run that marks what differs between two uninterrupted runs as volatile.
    ``every``: record every N steps (and always at each checkpoint's step). ``ignore``:
    ``fnmatch`` patterns of leaf keys left out. ``raise_on_mismatch``: raise
    :class:`ResumeMismatch` at the first differing step (default); either way the verdict is in
    ``RECORD_DIR/verdict.json`` and in ``self.verdict``.
    """

    def __init__(
        self,
        record_dir: str | os.PathLike[str],
        *,
        trainer: Any = None,
        mode: str = "auto",
        every: int = 1,
        ignore: Iterable[str] = (),
        raise_on_mismatch: bool = True,
    ) -> None:
        self.recorder = ResumeRecorder(record_dir, mode=mode, every=every, ignore=ignore,
                                       raise_on_mismatch=raise_on_mismatch, framework="transformers")
        self.trainer = trainer
        self._last_step: int | None = None

    @classmethod
    def attach(cls, trainer: Any, record_dir: str | os.PathLike[str], **options: Any) -> ResumeCheckCallback:
        """Add a check to ``trainer`` that also sees its callbacks and grad scaler."""
        callback = cls(record_dir, trainer=trainer, **options)
        trainer.add_callback(callback)
        return callback

    @property
    def verdict(self) -> dict[str, Any] | None:
        return self.recorder.verdict

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                       **kwargs: Any) -> None:
        self.recorder.begin(state.global_step if state.global_step > 0 else None)
        if self.trainer is None:
            self.recorder.note("the trainer was not attached: its callbacks and grad scaler were not compared")
        self._last_step = None

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        self.recorder.saved_steps.add(state.global_step)

    def on_step_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                      **kwargs: Any) -> None:
        step = state.global_step
        if step == self._last_step:
            return
        self._last_step = step
        if self.recorder.wants(step):
            self.recorder.observe(point_name(step), self._state(state, kwargs))

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                     **kwargs: Any) -> None:
        self.recorder.end(self._state(state, kwargs))

    def _state(self, state: TrainerState, hooks: dict[str, Any]) -> dict[str, Any]:
        live = LiveState()
        live.exclude(self.trainer, self)
        model = hooks.get("model")
        if isinstance(model, torch.nn.Module):
            live.add_model("model", model, _model_base_names())
        live.add("optimizer", hooks.get("optimizer"))
        scheduler = hooks.get("lr_scheduler")
        live.add("lr_scheduler", _plain_scheduler(scheduler) if scheduler is not None else None)
        live.add("state", state)
        if self.trainer is not None:
            live.add("grad_scaler", getattr(getattr(self.trainer, "accelerator", None), "scaler", None))
            self._add_callbacks(live)
        return live.result()

    def _add_callbacks(self, live: LiveState) -> None:
        names: dict[str, int] = {}
        for callback in self.trainer.callback_handler.callbacks:
            if isinstance(callback, ResumeCheckCallback):
                continue
            framework = (type(callback).__module__ or "").split(".")[0] in _FRAMEWORK_PACKAGES
            if framework and not isinstance(callback, _EXPORTABLE):
                continue
            name = type(callback).__name__
            names[name] = names.get(name, 0) + 1
            where = f"callbacks/{name}" if names[name] == 1 else f"callbacks/{name}_{names[name]}"
            live.add(where, callback.state() if framework else callback)
