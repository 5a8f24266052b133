"""``--cmd`` reading what a real job prints and leaves on disk: step lines, partial writes, causes."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from spikelint.smoke.command.process import is_partial
from spikelint.smoke.command.process import snapshot
from spikelint.smoke.command.files import files_read
from spikelint.smoke.command.files import newest_checkpoint
from spikelint.smoke.command.files import step_of
from spikelint.smoke.command.budget import crosses
from spikelint.smoke.plan import DEFAULT_LOSS
from spikelint.smoke.plan import DEFAULT_PROGRESS
from spikelint.smoke.command.steplines import Mention
from spikelint.smoke.command.steplines import StepLine
from spikelint.smoke.command.steplines import epoch_length
from spikelint.smoke.command.steplines import output_lines
from spikelint.smoke.command.steplines import read_line

PROGRESS = re.compile(DEFAULT_PROGRESS)
LOSS = re.compile(DEFAULT_LOSS)


@pytest.mark.parametrize("line, step, loss, epoch", [
    ("epoch=0 step=25 loss=0.123 lr=0.01", 25, "0.123", 0),
    ("Step 5/40 | loss 1.5e-03", 5, "1.5e-03", None),
    ("{'loss': 0.25, 'step': 3}", 3, "0.25", None),
    ("global_step=7 loss=nan", 7, "nan", None),
    ("iteration 9: step: 9, loss: 2.5,", 9, "2.5", None),
    ("step=4", 4, "", None),
    ("step 12 | loss 0.5 | val_loss 0.6", 12, "0.5", None),  # a train step that also prints val_loss
    # a tqdm bar on stderr without its newline, the job's line glued after it in the merged output
    ("Epoch 0:   0%|          | 0/4 [00:00<?, ?it/s]epoch=0 step=1 loss=6.89", 1, "6.89", 0),
])
def test_step_lines_are_read_with_their_loss_and_epoch(line: str, step: int, loss: str, epoch: int | None) -> None:
    assert read_line(line, PROGRESS, LOSS) == StepLine(step, loss, epoch)


@pytest.mark.parametrize("line", [
    "resumed from /runs/a/step-24.pt at step 24",
    "Saving checkpoint at step 24 to /runs/a/step-24.pt",
    "Restoring states from the checkpoint path at step 24",
    "Loading model from checkpoint at step 24",
    "Epoch 1:  50%|#####     | 10/20 [00:01<00:00, 9.5it/s, step 30, loss=0.3]",
    "skipped step 12: overflow",
    "Continuing training from global step 24",  # the Trainer's resume line
    "step 0: train loss 4.2, val loss 4.3",  # an evaluation line
    "Evaluating at step 20: loss=0.4",
])
def test_lines_that_only_mention_a_step_move_nothing(line: str) -> None:
    assert isinstance(read_line(line, PROGRESS, LOSS), Mention)


@pytest.mark.parametrize("line", [
    "max_steps=40 save_steps=4",  # configuration, not progress
    "loading /runs/a/step-24.pt",  # a path
    "Epoch 0: 100%|##| 16/16 [00:00<00:00, train_loss_step=0.300]",  # Lightning's bar: loss_step is not a step
    "global_step24/mp_rank_00_model_states.pt",
])
def test_lines_that_are_no_step_at_all(line: str) -> None:
    assert read_line(line, PROGRESS, LOSS) is None


def test_carriage_return_rewrites_are_lines_of_their_own() -> None:
    assert output_lines(b"a 10%|#\rb 20%|##\nstep=1 loss=2") == ["a 10%|#", "b 20%|##", "step=1 loss=2"]


def test_epoch_length_from_the_step_lines_either_convention() -> None:
    assert epoch_length({step: (step - 1) // 16 for step in range(1, 41)}) == 16  # printed before the step ends it
    assert epoch_length({step: step // 16 for step in range(1, 41)}) == 16  # printed after (Hugging Face's float epoch)
    assert epoch_length({step: 0 for step in range(1, 41)}) is None  # longer than the run
    assert epoch_length({}) is None


def test_the_plan_must_resume_in_a_later_epoch_and_run_past_a_boundary() -> None:
    assert crosses([24], 40, 16)  # resume in the second epoch (17-32), 33 starts the third
    assert not crosses([24], 40, 128)
    assert not crosses([24], 40, 32)  # crosses 32, but resumes in the first epoch: a fresh generator passes
    assert not crosses([24], 40, 20)  # the boundary after 24 is 40: no step of the new epoch runs
    assert crosses([15, 24], 40, 20)


@pytest.mark.parametrize("name, partial", [
    ("step-28.pt.tmp", True), ("tmp-checkpoint-28/model.safetensors", True), (".step-28.pt", True),
    ("checkpoint-28/model.safetensors.partial", True), ("weights.incomplete", True), ("ckpt/x.pt.tmp.1234", True),
    ("step-28.pt", False), ("checkpoint-28/optimizer.pt", False), ("last.ckpt", False),
    ("temperature-sweep/step-4.pt", False),
    ("step-16/.metadata", False),  # DCP's commit marker, written last: the folder is complete with it
])
def test_partial_writes_are_not_checkpoints(name: str, partial: bool) -> None:
    assert is_partial(Path(name)) is partial


def test_a_kill_during_a_temporary_write_leaves_no_checkpoint_of_that_step(tmp_path: Path) -> None:
    for name in ("step-20.pt", "step-24.pt", "step-28.pt.tmp"):
        (tmp_path / name).write_bytes(b"x" * 10)
    assert sorted(map(str, snapshot(tmp_path))) == ["step-20.pt", "step-24.pt"]
    assert newest_checkpoint(tmp_path) == (24, [Path("step-24.pt")])


@pytest.mark.parametrize("name, step", [
    ("step-8.pt", 8), ("epoch=1-step=24.ckpt", 24), ("checkpoint-8/optimizer.pt", 8), ("iter_0000024/x.pt", 24),
    ("global_step8/mp_rank_00_model_states.pt", 8), ("model_00008.safetensors", 8), ("last.pt", None),
    ("ep1-ba24-rank0.pt", 24), ("ep0-ba8/rank0.pt", 8), ("ep3.pt", None), ("epoch_3.pt", None),
    ("epoch=3-step=120.ckpt", 120),
])
def test_the_step_of_a_checkpoint_name(name: str, step: int | None) -> None:
    assert step_of(Path(name)) == step


def test_the_loaded_file_is_the_one_the_job_names(tmp_path: Path) -> None:
    for name in ("epoch=1-step=24.ckpt", "last.ckpt"):
        (tmp_path / name).write_bytes(b"x")
    lines = [f"Restoring states from the checkpoint path at {tmp_path}/last.ckpt"]
    assert files_read(tmp_path, {}, [], lines) == [Path("last.ckpt")]


def test_without_words_the_loaded_file_is_the_one_whose_access_time_moved(tmp_path: Path) -> None:
    for name in ("step-20.pt", "step-24.pt"):
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, ns=(time.time_ns() - 10**10, time.time_ns()))  # read long before the write
    before = {Path(name): (tmp_path / name).stat().st_atime_ns for name in ("step-20.pt", "step-24.pt")}
    os.utime(tmp_path / "step-24.pt", ns=(time.time_ns(), (tmp_path / "step-24.pt").stat().st_mtime_ns))
    assert files_read(tmp_path, before, [], ["nothing said"]) == [Path("step-24.pt")]


@pytest.mark.parametrize("name, state", [
    ("checkpoint-8/model.safetensors", True), ("checkpoint-8/optimizer.pt", True),
    ("checkpoint-8/trainer_state.json", True), ("checkpoint-8/rng_state.pth", True), ("ep0-ba8-rank0.pt", True),
    ("last.ckpt", True), ("step-8/.metadata", True), ("lightning_logs/version_0/checkpoints/epoch=0-step=8.ckpt", True),
    # beside the checkpoints: a record of the run, not its state
    ("README.md", False), ("all_results.json", False), ("train_results.json", False), ("checkpoint-8/README.md", False),
    ("lightning_logs/version_0/hparams.yaml", False), ("runs/Dec02_07-00/events.out.tfevents.1.host", False),
    ("train.log", False),
])
def test_only_checkpoint_content_is_state(name: str, state: bool) -> None:
    from spikelint.smoke.command.files import is_state_file

    assert is_state_file(Path(name)) is state


@pytest.mark.parametrize("line, loss", [
    ("{'loss': '5.514', 'grad_norm': '1.3', 'learning_rate': '3.333e-05', 'epoch': '0.5625'}", "5.514"),
    ("{'loss': 0.25, 'epoch': 1.0}", "0.25"),
    ("{'eval_loss': 5.1, 'epoch': 1.0}", None),  # an evaluation, not a training step
    ("{'train_runtime': 12.0, 'train_loss': 5.2}", None),  # the end-of-training summary
    ("epoch 0: perplexity: 294.13 eval_loss: 5.68", None),
    (" 38%|###8      | 9/24 [00:03<00:05, 2.9it/s, loss=5.5]", None),  # a progress bar
    ("`loss_type=None` was set in the config but it is unrecognized. Using the default loss: `ForCausalLMLoss`.",
     None),  # names a loss function, not a value
])
def test_losses_on_lines_that_name_no_step(line: str, loss: str | None) -> None:
    from spikelint.smoke.command.steplines import loss_only

    assert loss_only(line, LOSS) == loss


@pytest.mark.parametrize("key, bookkeeping", [
    ("loops.fit_loop.epoch_progress.total.ready", True),
    ("loops.fit_loop.epoch_progress.total.started", True),
    ("loops.fit_loop.epoch_loop.val_loop.batch_progress.current.completed", True),
    ("loops.fit_loop.epoch_loop.batch_progress.total.processed", True),
    ("state_dict.net.0.weight", False), ("optimizer_states.0.state.0.exp_avg", False),
    ("loops.fit_loop.state_dict.combined_loader.0.served", False),  # the data position is state
    ("global_step", False), ("epoch", False),
])
def test_progress_bookkeeping_is_a_loop_counter(key: str, bookkeeping: bool) -> None:
    from spikelint.smoke.command.verdict import BOOKKEEPING

    assert bool(BOOKKEEPING.search(key)) is bookkeeping


def test_bookkeeping_is_excused_only_by_its_consequence() -> None:
    from spikelint.smoke.command.verdict import bookkeeping_only
    from spikelint.smoke.compare.leaves import Difference

    counter = ("epoch=0-step=28.ckpt", Difference("loops.fit_loop.epoch_progress.total.started", "value", 1.0, ""))
    weight = ("epoch=0-step=28.ckpt", Difference("state_dict.net.0.weight", "value", 0.1, ""))
    names = [Path("epoch=0-step=28.ckpt"), Path("epoch=0-step=32.ckpt")]
    assert bookkeeping_only([counter], names, None, with_loss=12)
    assert not bookkeeping_only([counter, weight], names, None, with_loss=12)  # a weight differs too
    assert not bookkeeping_only([counter], names, 29, with_loss=12)  # a loss differs
    assert not bookkeeping_only([counter], names, None, with_loss=0)  # no loss compared: consequence untested
    assert not bookkeeping_only([counter], names[:1], None, with_loss=12)  # nothing compared after it


@pytest.mark.parametrize("epochs, length", [
    ({4: 0.25, 8: 0.5, 12: 0.75, 16: 1.0, 20: 1.25}, 16),  # the Trainer's fractional epoch: exact
    ({4: 0, 8: 0, 12: 0, 16: 0, 20: 1, 24: 1, 28: 1, 32: 1, 36: 2}, 16),  # a whole-number counter: where it changes
    ({4: 0, 8: 0}, None),  # no change seen
])
def test_the_epoch_length_from_the_counter_checkpoints_hold(epochs: dict, length: int | None) -> None:
    from spikelint.smoke.command.files import checkpoint_epoch_length

    assert checkpoint_epoch_length(epochs) == length


def test_a_load_line_is_read_without_the_paths_it_names() -> None:
    """The successive-resume variant's folder is ``…/successive-resume/``: a line that only names a path in it
    (Accelerate's "Saving current state to …/successive-resume/step_24") says nothing of a resume."""
    from spikelint.smoke.command.steplines import says_it_loads

    assert says_it_loads("[RANK 0] Loading states from /run/checkpoints/successive-resume/step_16")
    assert says_it_loads("Restoring states from the checkpoint path at /run/last.ckpt")
    assert not says_it_loads("[RANK 0] Saving current state to /run/checkpoints/successive-resume/step_24")
    assert not says_it_loads("Sampler state for dataloader 0 saved in /run/reload/step_24/sampler.bin")


def test_a_loaded_link_names_the_checkpoint_it_points_at(tmp_path: Path) -> None:
    """Composer logs ``Loading checkpoint from …/latest-rank0.pt``, a link to its newest ``ep0-ba16-rank0.pt``."""
    for name in ("ep0-ba12-rank0.pt", "ep0-ba16-rank0.pt"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "latest-rank0.pt").symlink_to("ep0-ba16-rank0.pt")
    lines = [f"Loading checkpoint from {tmp_path}/latest-rank0.pt"]
    assert files_read(tmp_path, {}, [], lines) == [Path("ep0-ba16-rank0.pt")]


def test_the_epoch_counter_is_the_runs_own_not_one_in_a_record_of_saved_checkpoints(tmp_path: Path) -> None:
    """Composer's checkpoint also lists every checkpoint it saved, each with the epoch it was saved in: the
    first of those says epoch 0 for ever; the run's own counter is its timestamp's."""
    torch = pytest.importorskip("torch")
    from spikelint.smoke.command.files import checkpoint_epochs

    for batch, epoch in ((8, 0), (20, 1)):
        state = {"state": {"callbacks": {"CheckpointSaver": {"all_saved_checkpoints_to_timestamp": [
                     ["ep0-ba4-rank0.pt", {"epoch": 0, "batch": 4}]]}},
                           "timestamp": {"Timestamp": {"epoch": epoch, "batch": batch}}},
                 "rng": [{"torch": torch.zeros(2)}]}
        torch.save(state, tmp_path / f"ep{epoch}-ba{batch}-rank0.pt")
    assert checkpoint_epochs(tmp_path) == {8: 0, 20: 1}


def test_an_objects_address_in_a_saved_repr_is_not_state() -> None:
    pytest.importorskip("torch")
    from spikelint.smoke.compare.leaves import leaf_digest

    saved = "<composer.algorithms.gradient_clipping.GradientClipping object at 0x7f512a40e910>"
    assert leaf_digest(saved) == leaf_digest(saved.replace("7f512a40e910", "7f0c11d2a7d0"))
    assert leaf_digest("clip at 1.0") != leaf_digest("clip at 2.0")


def test_a_crash_shows_its_exception_even_when_shutdown_lines_follow(tmp_path: Path) -> None:
    from spikelint.smoke.command.process import CommandRun

    run = CommandRun("resumed", ["python", "train.py"], tmp_path / "resumed.log")
    run.log.write_text("step 1\nTraceback (most recent call last):\n  File \"train.py\", line 3\n"
                       "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\n"
                       + "".join(f"INFO engine closing {n}\n" for n in range(8)), encoding="utf-8")
    tail = run.tail()
    assert tail.startswith("RuntimeError: PytorchStreamReader failed reading zip archive") and "closing 7" in tail


def test_a_link_that_moved_on_to_a_later_checkpoint_names_nothing(tmp_path: Path) -> None:
    """After the resumed run, ``latest-rank0.pt`` points at the checkpoint that run wrote last: not what it
    loaded when it started. Then the access times tell."""
    for name in ("ep0-ba12-rank0.pt", "ep1-ba24-rank0.pt"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "latest-rank0.pt").symlink_to("ep1-ba24-rank0.pt")
    lines = [f"Loading checkpoint from {tmp_path}/latest-rank0.pt"]
    assert files_read(tmp_path, {}, [Path("ep1-ba24-rank0.pt")], lines) == []


def test_a_folder_deleted_while_it_is_listed_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Trainer with save_total_limit deletes checkpoint-6/ while the folder is watched: the listing goes
    on without it (it raised FileNotFoundError out of rglob and ended the smoke run as a setup error)."""
    (tmp_path / "checkpoint-6").mkdir()
    (tmp_path / "checkpoint-6" / "model.safetensors").write_bytes(b"x")
    (tmp_path / "checkpoint-9").mkdir()
    (tmp_path / "checkpoint-9" / "model.safetensors").write_bytes(b"y")
    real_scandir = os.scandir

    def vanishing(path):  # the job removes checkpoint-6 between the listing of its parent and its own
        if str(path).endswith("checkpoint-6"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", vanishing)
    assert list(snapshot(tmp_path)) == [Path("checkpoint-9/model.safetensors")]


def test_a_job_timed_by_its_checkpoints_is_budgeted_per_step(tmp_path: Path) -> None:
    """Checkpoints every 4 steps, 4 s apart: a step takes 1 s, not 4 (a budget four times too large made a
    loaded machine decline to run past the epoch of a job it could well afford)."""
    from spikelint.smoke.command.budget import step_estimate
    from spikelint.smoke.command.process import CommandRun

    run = CommandRun("reference", ["python", "train.py"], tmp_path / "reference.log")
    run.step_s = {4: 10.0, 8: 14.0, 12: 18.0, 16: 23.0}
    assert step_estimate(run) == 1.0
    run.step_s = {1: 0.5, 2: 0.7, 3: 0.9}
    assert step_estimate(run) == pytest.approx(0.2)


def test_resumes_that_pass_in_the_first_epoch_and_fail_in_a_later_one_name_the_data_order() -> None:
    """A job that keeps no loader generator in its checkpoints: no key's difference can name it, but the pattern
    can — every resume in the first epoch reproduced the run, every one in a later epoch did not."""
    from spikelint.smoke.command.disagree import data_order_signature
    from spikelint.smoke.result import VariantResult

    def result(name: str, step: int, verdict: str, message: str = "") -> VariantResult:
        return VariantResult(name, "SIGKILL", "", step, verdict=verdict, message=message, resumed_from_step=step)

    results = [result("kill-between-checkpoints", 12, "verified"), result("kill-off-period", 9, "verified"),
               result("sigterm", 27, "state_differs", "optimizer (step-28.pt:optimizer.state.0.exp_avg)"),
               result("successive-resume", 32, "state_differs", "model (step-36.pt:model.0.weight)"),
               result("truncated-newest", 8, "resume_failed")]
    said = data_order_signature(results, 24)
    assert said is not None and said.startswith("data order not restored: every resume inside the first epoch of 24")
    assert "(kill-between-checkpoints from step 12, kill-off-period from step 9)" in said
    assert data_order_signature(results, None) is None
    mixed = results[:2] + [result("sigterm", 18, "state_differs")] + results[3:]
    assert data_order_signature(mixed, 24) is None  # a failure inside the first epoch: another cause
    named = results[:2] + [result("sigterm", 27, "state_differs", "data position (step-28.pt:loader_generator)")]
    assert data_order_signature(named, 24) is None  # the checkpoints already name it
