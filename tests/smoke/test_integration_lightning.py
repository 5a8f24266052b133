"""``ResumeCheck`` against the real Lightning on the CPU: a tiny module built here, nothing downloaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pl = pytest.importorskip("lightning.pytorch")

from lightning.pytorch.callbacks import ModelCheckpoint  # noqa: E402

from spikelint.smoke.integrations.lightning import ResumeCheck  # noqa: E402
from spikelint.smoke.integrations.lightning import ResumeCheckError  # noqa: E402
from spikelint.smoke.integrations.lightning import ResumeMismatch  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")
STEPS = 12
BATCHES_PER_EPOCH = 8


class TinyModule(pl.LightningModule):
    """A linear model with an AdamW, a step-wise StepLR and a hand-written EMA of its weights."""

    def __init__(self, save_ema: bool = True, ema_after_checkpoint: bool = False) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.ema = {key: value.detach().clone() for key, value in self.layer.state_dict().items()}
        self.save_ema = save_ema
        self.ema_after_checkpoint = ema_after_checkpoint

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        inputs, targets = batch
        return torch.nn.functional.mse_loss(self.layer(inputs), targets)

    def _update_ema(self) -> None:
        with torch.no_grad():
            for key, value in self.layer.state_dict().items():
                self.ema[key].mul_(0.9).add_(value, alpha=0.1)

    def optimizer_step(self, *args: Any, **kwargs: Any) -> None:
        super().optimizer_step(*args, **kwargs)
        if not self.ema_after_checkpoint:
            self._update_ema()

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        # The module's hook runs after the callbacks' one, where ModelCheckpoint has already saved.
        if self.ema_after_checkpoint:
            self._update_ema()

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.AdamW(self.parameters(), lr=0.05)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        if self.save_ema:
            checkpoint["ema"] = {key: value.clone() for key, value in self.ema.items()}

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        if "ema" in checkpoint:
            self.ema = {key: value.clone() for key, value in checkpoint["ema"].items()}


class WallClock(pl.Callback):
    """A callback holding a clock reading: differs between any two runs, training state or not."""

    def __init__(self) -> None:
        self.started_ns = 0

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.started_ns = time.perf_counter_ns()


def loader(own_generator: bool = True) -> Any:
    data = torch.Generator().manual_seed(1)
    dataset = torch.utils.data.TensorDataset(torch.randn(32, 4, generator=data), torch.randn(32, 1, generator=data))
    generator = torch.Generator().manual_seed(2) if own_generator else None
    return torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=False, generator=generator)


def fit(
    root: Path, callbacks: list[Any], ckpt: Path | None = None, own_generator: bool = True, seed: int = 0, **module: Any
) -> Any:
    pl.seed_everything(seed, verbose=False)
    trainer = pl.Trainer(
        max_steps=STEPS, accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
        enable_model_summary=False, limit_val_batches=0, num_sanity_val_steps=0, deterministic=True,
        default_root_dir=str(root), callbacks=callbacks,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(TinyModule(**module), loader(own_generator), ckpt_path=str(ckpt) if ckpt else None)
    return trainer


def reference_and_resume(
    root: Path, every: int = BATCHES_PER_EPOCH, calibrate: bool = False, extra: tuple[Any, ...] = (), **options: Any
) -> dict[str, Any]:
    """The uninterrupted run with checkpoints every ``every`` steps, then a resume from the first one."""
    record = root / "record"
    saves = ModelCheckpoint(dirpath=root / "ckpt", every_n_train_steps=every, save_top_k=-1)
    fit(root, [ResumeCheck(record), saves, *extra], **options)
    if calibrate:
        fit(root, [ResumeCheck(record, mode="calibrate"), *[type(item)() for item in extra]], **options)
    (checkpoint,) = (root / "ckpt").glob(f"*step={every}.ckpt")
    fit(root, [ResumeCheck(record), *[type(item)() for item in extra]], ckpt=checkpoint, **options)
    return json.loads((record / "verdict.json").read_text(encoding="utf-8"))


def test_correct_resume_is_verified(tmp_path: Path) -> None:
    verdict = reference_and_resume(tmp_path)
    assert verdict["verdict"] == "verified", verdict["message"]
    assert verdict["resumed_from_step"] == BATCHES_PER_EPOCH
    assert verdict["compared_points"] == ["step-000008", "step-000009", "step-000010", "step-000011", "end"]
    # Lightning's stale .grad of the last backward is there in one run and not in the other, then overwritten.
    assert any("gradients (pl_module" in note for note in verdict["notes"])


def test_ema_missing_from_the_checkpoint_is_named(tmp_path: Path) -> None:
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, save_ema=False)
    verdict = caught.value.verdict
    assert verdict["verdict"] == "state_differs"
    assert [piece["where"] for piece in verdict["not_restored"]] == ["tensors (pl_module.ema)"]
    assert verdict["not_restored"][0]["first_differing_leaf"].startswith("tensors:pl_module/ema.")
    assert verdict["failed_at"] == "step-000009"
    assert "not restored by the checkpoint: tensors (pl_module.ema)" in str(caught.value)
    on_disk = json.loads((tmp_path / "record" / "verdict.json").read_text(encoding="utf-8"))
    assert on_disk["verdict"] == "state_differs"


def test_ema_updated_after_the_save_is_named(tmp_path: Path) -> None:
    """EMA in the module's on_train_batch_end: ModelCheckpoint saved before the update, one step stale."""
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, ema_after_checkpoint=True)
    assert [piece["where"] for piece in caught.value.verdict["not_restored"]] == ["tensors (pl_module.ema)"]


def test_mid_epoch_resume_of_a_plain_loader_is_named(tmp_path: Path) -> None:
    """Lightning restarts a plain DataLoader from the start of the epoch: the batch of step 5 differs."""
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, every=4)
    verdict = caught.value.verdict
    assert [piece["where"] for piece in verdict["not_restored"]] == ["data position (the batch the step trains on)"]
    assert "model (pl_module)" in [piece["where"] for piece in verdict["differs_later"]]


def test_global_rng_that_lightning_does_not_save_is_named(tmp_path: Path) -> None:
    """A loader without its own generator draws from the torch generator at iter(); the resume draws once less."""
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path, own_generator=False)
    assert [piece["where"] for piece in caught.value.verdict["not_restored"]] == ["rng (torch global)"]


def test_calibration_leaves_out_a_clock(tmp_path: Path) -> None:
    verdict = reference_and_resume(tmp_path, calibrate=True, extra=(WallClock(),))
    assert verdict["verdict"] == "verified", verdict["message"]
    assert "counters:callbacks/WallClock/started_ns" in verdict["left_out"]


def test_calibration_run_that_trains_differently_is_not_deterministic(tmp_path: Path) -> None:
    fit(tmp_path, [ResumeCheck(tmp_path / "record")])
    with pytest.raises(ResumeMismatch, match="not deterministic") as caught:
        fit(tmp_path, [ResumeCheck(tmp_path / "record", mode="calibrate")], seed=1)
    assert caught.value.verdict["verdict"] == "nondeterministic"
    assert "model (pl_module)" in str(caught.value)


def test_clock_without_calibration_fails_and_ignore_leaves_it_out(tmp_path: Path) -> None:
    with pytest.raises(ResumeMismatch) as caught:
        reference_and_resume(tmp_path / "plain", extra=(WallClock(),))
    assert "counters (callbacks.WallClock.started_ns)" in str(caught.value)
    record = tmp_path / "ignored" / "record"
    saves = ModelCheckpoint(dirpath=tmp_path / "ignored" / "ckpt", every_n_train_steps=8, save_top_k=-1)
    fit(tmp_path / "ignored", [ResumeCheck(record), saves, WallClock()])
    (checkpoint,) = (tmp_path / "ignored" / "ckpt").glob("*step=8.ckpt")
    check = ResumeCheck(record, ignore=["counters:callbacks/WallClock/*"])
    fit(tmp_path / "ignored", [check, WallClock()], ckpt=checkpoint)
    assert check.verdict is not None and check.verdict["verdict"] == "verified"


def test_raise_on_mismatch_false_records_the_verdict_and_finishes(tmp_path: Path) -> None:
    record = tmp_path / "record"
    fit(tmp_path, [ResumeCheck(record), ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=8,
                                                        save_top_k=-1)], save_ema=False)
    (checkpoint,) = (tmp_path / "ckpt").glob("*step=8.ckpt")
    check = ResumeCheck(record, raise_on_mismatch=False)
    trainer = fit(tmp_path, [check], ckpt=checkpoint, save_ema=False)
    assert trainer.global_step == STEPS
    assert check.verdict is not None and check.verdict["verdict"] == "state_differs"


def test_resume_without_a_recorded_run_says_what_to_do(tmp_path: Path) -> None:
    fit(tmp_path, [ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=8, save_top_k=-1)])
    (checkpoint,) = (tmp_path / "ckpt").glob("*step=8.ckpt")
    with pytest.raises(ResumeCheckError, match="no uninterrupted run was recorded"):
        fit(tmp_path, [ResumeCheck(tmp_path / "record")], ckpt=checkpoint)


def test_spikelint_imports_no_framework() -> None:
    code = ("import sys, spikelint.cli, spikelint.smoke.integrations; "
            "print(sorted(m for m in ('torch', 'lightning', 'transformers') if m in sys.modules))")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "[]"
