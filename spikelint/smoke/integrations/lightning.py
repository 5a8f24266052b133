"""``ResumeCheck``: a Lightning ``Callback`` that proves ``trainer.fit(ckpt_path=...)`` resumes bit for bit.

Attach the same callback to the uninterrupted run and to the run resumed from one of its
checkpoints::

    check = ResumeCheck("resume-record")
    pl.Trainer(max_steps=20, callbacks=[check, ModelCheckpoint(every_n_train_steps=5)]).fit(module, data)
    pl.Trainer(max_steps=20, callbacks=[ResumeCheck("resume-record")]).fit(module, data, ckpt_path=ckpt)

A point is taken at ``on_train_batch_start``, once per optimizer step (the first micro-batch of
an accumulation window), keyed by ``trainer.global_step``, and at ``on_train_end``. The first
point of the resumed run comes after Lightning restored the checkpoint (weights, optimizers,
schedulers, loops, callbacks, the module's ``on_load_checkpoint``), so it is the restore check.

What is compared: the LightningModule's ``state_dict()`` and ``.grad``, and everything it holds
beyond what ``LightningModule`` itself sets (a hand-written EMA, counters, tensors, modules kept
out of ``_modules``, non-persistent buffers, the same in its own submodules); each optimizer and
LR scheduler; the precision plugin's grad scaler; ``global_step``, ``current_epoch`` and the fit
loop's progress counters; the fields of every callback of your own, and ``state_dict()`` of
Lightning's callbacks; the Python, NumPy, torch and CUDA generators; and the batch the step
trains on (``data position``: a mid-epoch resume that replays the epoch from its start shows
there first). Left out: the trainer's loggers, profiler and paths, ``ModelCheckpoint`` and
``Timer`` (file names and clocks), progress bars, and whatever ``ignore`` patterns or a
``mode="calibrate"`` run mark as volatile.
"""

from __future__ import annotations

import functools
import os
from typing import Any
from typing import Iterable

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.callbacks import Timer
from lightning.pytorch.callbacks.progress.progress_bar import ProgressBar

from spikelint.smoke.integrations.core import LiveState
from spikelint.smoke.integrations.core import ResumeCheckError
from spikelint.smoke.integrations.core import ResumeMismatch
from spikelint.smoke.integrations.core import ResumeRecorder
from spikelint.smoke.integrations.core import point_name
from spikelint.smoke.harness.probe import COUNTERS
from spikelint.smoke.harness.probe import DATA_POSITION

__all__ = ["ResumeCheck", "ResumeCheckError", "ResumeMismatch"]

_FRAMEWORK_PACKAGES = ("lightning",)
# Callbacks whose state is file names, clocks or display, never training state.
_NOT_STATE_CALLBACKS = (ModelCheckpoint, Timer, ProgressBar)


@functools.lru_cache(maxsize=1)
def _module_base_names() -> frozenset[str]:
    """The attributes ``LightningModule.__init__`` sets on every module (``_trainer``, ``_device``)."""
    return frozenset(vars(pl.LightningModule()))


_TRANSITIONAL = ("ready", "started", "processed")


def _completed_counts(state: Any) -> Any:
    """A loop's progress without the ``ready``/``started``/``processed`` marks beside ``completed``.

    Lightning resets those marks to ``completed`` when it restarts from a checkpoint (a resumed
    epoch is "started" once, the uninterrupted run's twice), so they differ after every correct
    resume; the ``completed`` counts are what the loops act on.
    """
    if not isinstance(state, dict):
        return state
    transitional = "completed" in state
    return {key: _completed_counts(value) for key, value in state.items()
            if not (transitional and key in _TRANSITIONAL)}


class ResumeCheck(Callback):
    """Records the uninterrupted run's live state, then checks a resumed run against it step for step.

    ``mode``: ``"auto"`` records on a fresh run and checks on a run given ``ckpt_path``;
    ``"calibrate"`` is a second fresh run that marks what differs between two uninterrupted
    runs as volatile. ``every``: record every N steps (and always at each checkpoint's step).
    ``ignore``: ``fnmatch`` patterns of leaf keys left out (``"counters:trainer.fit_loop*"``).
    ``raise_on_mismatch``: raise :class:`ResumeMismatch` at the first differing step (default);
    either way the verdict is in ``RECORD_DIR/verdict.json`` and in ``self.verdict``.
    """

    def __init__(
        self,
        record_dir: str | os.PathLike[str],
        *,
        mode: str = "auto",
        every: int = 1,
        ignore: Iterable[str] = (),
        raise_on_mismatch: bool = True,
    ) -> None:
        super().__init__()
        self.recorder = ResumeRecorder(record_dir, mode=mode, every=every, ignore=ignore,
                                       raise_on_mismatch=raise_on_mismatch, framework="lightning")
        self._restored_step: int | None = None
        self._last_step: int | None = None

    @property
    def verdict(self) -> dict[str, Any] | None:
        return self.recorder.verdict

    @property
    def state_key(self) -> str:
        return f"spikelint.ResumeCheck[{self.recorder.record_dir}]"

    def on_load_checkpoint(self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict[str, Any]) -> None:
        self._restored_step = int(checkpoint.get("global_step", trainer.global_step))

    def on_save_checkpoint(self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict[str, Any]) -> None:
        self.recorder.saved_steps.add(trainer.global_step)

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        resumed = self._restored_step
        if resumed is None and getattr(trainer, "ckpt_path", None):
            resumed = trainer.global_step
        self.recorder.begin(resumed)
        self._last_step = None

    def on_train_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int) -> None:
        step = trainer.global_step
        if step == self._last_step:  # a later micro-batch of the same accumulation window
            return
        self._last_step = step
        if self.recorder.wants(step):
            self.recorder.observe(point_name(step), self._state(trainer, pl_module, batch))

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.recorder.end(self._state(trainer, pl_module, None))

    def _state(self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any) -> dict[str, Any]:
        live = LiveState()
        live.exclude(trainer, self)
        live.add_model("pl_module", pl_module, _module_base_names())
        live.add("optimizers", list(trainer.optimizers))
        live.add("lr_schedulers", [config.scheduler for config in trainer.lr_scheduler_configs])
        live.add("precision_plugin/scaler", getattr(trainer.precision_plugin, "scaler", None))
        live.add_piece(COUNTERS, "trainer", {
            "global_step": trainer.global_step,
            "current_epoch": trainer.current_epoch,
            "fit_loop": _completed_counts(trainer.fit_loop.state_dict()),
        })
        names: dict[str, int] = {}
        for callback in trainer.callbacks:  # type: ignore[attr-defined]
            if callback is self or isinstance(callback, (ResumeCheck, *_NOT_STATE_CALLBACKS)):
                continue
            name = type(callback).__name__
            names[name] = names.get(name, 0) + 1
            where = f"callbacks/{name}" if names[name] == 1 else f"callbacks/{name}_{names[name]}"
            package = (type(callback).__module__ or "").split(".")[0]
            live.add(where, callback.state_dict() if package in _FRAMEWORK_PACKAGES else callback)
        if batch is not None:
            live.add_piece(DATA_POSITION, "batch", batch)
        return live.result()

