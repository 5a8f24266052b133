"""Format-aware checkpoint loaders: each format equal on both sides, one changed piece named by its key, bad input."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import os
import pickle
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from spikelint.smoke.compare.loaders import LoadRefused  # noqa: E402
from spikelint.smoke.compare.loaders import checkpoint_files  # noqa: E402
from spikelint.smoke.compare.loaders import compare_checkpoints  # noqa: E402
from spikelint.smoke.compare.loaders import compare_folders  # noqa: E402
from spikelint.smoke.compare.loaders import compare_units  # noqa: E402
from spikelint.smoke.compare.loaders import load_checkpoint_file  # noqa: E402
from spikelint.smoke.compare.loaders import load_dcp_folder  # noqa: E402
from spikelint.smoke.compare.loaders import load_trainer_state  # noqa: E402
from spikelint.smoke.compare.loaders import units  # noqa: E402


@dataclasses.dataclass
class Record:
    step: int


def training_state(seed: int = 0) -> dict[str, Any]:
    """Model, AdamW, scheduler and RNG states after two real steps."""
    torch.manual_seed(seed)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)
    for _ in range(2):
        model(torch.ones(4, 3)).square().mean().backward()
        optimizer.step()
        scheduler.step()
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
            "rng": {"torch": torch.get_rng_state(), "python": random.Random(seed).getstate()}, "step": 2}


def differing_keys(reference: Path, other: Path, names: list[str]) -> list[str]:
    result = compare_checkpoints(reference, other, [Path(name) for name in names])
    assert result.problems == []
    return [f"{unit}:{difference.key}" for unit, difference in result.differences]


def two_folders(tmp_path: Path) -> tuple[Path, Path]:
    reference, other = tmp_path / "reference", tmp_path / "other"
    reference.mkdir()
    other.mkdir()
    return reference, other


def test_torch_files_equal_then_one_optimizer_moment_scheduler_and_rng_named(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    torch.save(training_state(), reference / "last.pt")
    torch.save(training_state(), other / "last.pt")
    assert differing_keys(reference, other, ["last.pt"]) == []

    changed = training_state()
    changed["optimizer"]["state"][0]["exp_avg"][1, 2] += 1e-6
    torch.save(changed, other / "last.pt")
    assert differing_keys(reference, other, ["last.pt"]) == ["last.pt:optimizer.state.0.exp_avg"]

    changed = training_state()
    changed["scheduler"]["last_epoch"] += 1
    torch.save(changed, other / "last.pt")
    assert differing_keys(reference, other, ["last.pt"]) == ["last.pt:scheduler.last_epoch"]

    changed = training_state()
    changed["rng"]["python"] = random.Random(1).getstate()
    torch.save(changed, other / "last.pt")
    keys = differing_keys(reference, other, ["last.pt"])
    assert keys and all(key.startswith("last.pt:rng.python.1.") for key in keys)


def test_numpy_rng_state_loads_as_hugging_face_allows_it(tmp_path: Path) -> None:
    path = tmp_path / "rng_state.pth"
    torch.save({"numpy": np.random.RandomState(3).get_state(), "cpu": torch.get_rng_state()}, path)
    state = load_checkpoint_file(path)
    assert state["numpy"][0] == "MT19937" and state["numpy"][1].dtype == np.uint32


class Phase(enum.Enum):
    FIT = "fit"


class FrameworkState:
    """A framework's own record, as Composer's ``State`` and ``Timestamp`` are: its code must never run."""

    def __init__(self, batch: int, rng: Any) -> None:
        self.batch, self.rng = batch, rng

    def __setstate__(self, state: dict[str, Any]) -> None:
        RAN.append("__setstate__")
        self.__dict__.update(state)


class RunsCode:
    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (RAN.append, ("__reduce__",))


RAN: list[str] = []


def framework_checkpoint(batch: int, wall_clock_s: float) -> dict[str, Any]:
    return {"model": {"weight": torch.arange(4.0)}, "state": FrameworkState(batch, np.arange(3, dtype=np.uint32)),
            "phase": Phase.FIT, "total_wct": datetime.timedelta(seconds=wall_clock_s), "hook": RunsCode(),
            "record": Record(batch)}


def test_a_file_weights_only_refuses_is_read_without_running_its_code(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    torch.save(framework_checkpoint(24, 3.5), reference / "ep1-ba24-rank0.pt")
    torch.save(framework_checkpoint(24, 9.25), other / "ep1-ba24-rank0.pt")  # another run: another wall clock
    RAN.clear()
    comparison = compare_checkpoints(reference, other, [Path("ep1-ba24-rank0.pt")])
    assert RAN == []  # neither __setstate__ nor the function a __reduce__ names ran
    assert comparison.problems == [] and comparison.differences == [] and comparison.leaves > 5
    assert any("read without running its code" in note and "FrameworkState" in note for note in comparison.notes)
    assert any("wall-clock values left out: total_wct" in note for note in comparison.notes)


def test_an_opaque_record_that_differs_is_named_by_its_field(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    torch.save(framework_checkpoint(24, 3.5), reference / "state.pt")
    torch.save(framework_checkpoint(23, 3.5), other / "state.pt")
    comparison = compare_checkpoints(reference, other, [Path("state.pt")])
    assert {difference.key for _, difference in comparison.differences} >= {"state.state.batch"}

def test_a_truncated_torch_file_is_refused_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "last.pt"
    torch.save(training_state(), path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(LoadRefused, match="cannot be read as a torch.save file .*is it complete"):
        load_checkpoint_file(path)


def test_safetensors_equal_then_one_tensor_and_the_header_metadata_named(tmp_path: Path) -> None:
    safetensors = pytest.importorskip("safetensors.torch")
    reference, other = two_folders(tmp_path)
    weights = training_state()["model"]
    safetensors.save_file(weights, str(reference / "model.safetensors"), metadata={"format": "pt"})
    safetensors.save_file(weights, str(other / "model.safetensors"), metadata={"format": "pt"})
    assert differing_keys(reference, other, ["model.safetensors"]) == []
    changed = {key: value.clone() for key, value in weights.items()}
    changed["bias"][0] += 1
    safetensors.save_file(changed, str(other / "model.safetensors"), metadata={"format": "np"})
    assert differing_keys(reference, other, ["model.safetensors"]) == [
        "model.safetensors:bias", "model.safetensors:__metadata__.format"]
    result = compare_checkpoints(reference, other, [Path("model.safetensors")])
    assert result.differences[0][1].max_abs_diff == pytest.approx(1.0)


def test_without_the_safetensors_package_the_file_is_compared_by_sha256_with_a_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference, other = two_folders(tmp_path)
    (reference / "model.safetensors").write_bytes(b"header-and-data")
    (other / "model.safetensors").write_bytes(b"header-and-date")
    monkeypatch.setitem(sys.modules, "safetensors", None)
    result = compare_checkpoints(reference, other, [Path("model.safetensors")])
    assert [(unit, d.key) for unit, d in result.differences] == [("model.safetensors", "sha256")]
    assert result.notes == ["model.safetensors: compared by SHA-256, not tensor by tensor: pip install safetensors"]


def test_a_damaged_safetensors_file_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(LoadRefused, match="cannot be read as a safetensors file"):
        load_checkpoint_file(path)


def test_json_values_named_and_broken_json_refused(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    (reference / "meta.json").write_text(json.dumps({"step": 8, "data": {"epoch": 1, "offset": 64}}))
    (other / "meta.json").write_text(json.dumps({"step": 8, "data": {"epoch": 1, "offset": 72}}))
    assert differing_keys(reference, other, ["meta.json"]) == ["meta.json:data.offset"]
    (other / "meta.json").write_text('{"step": 8, "data": ')
    result = compare_checkpoints(reference, other, [Path("meta.json")])
    assert result.differences == [] and "not valid JSON" in result.problems[0]


def test_trainer_state_leaves_out_timing_and_the_summary_train_loss_only(tmp_path: Path) -> None:
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({
        "global_step": 10, "best_model_checkpoint": "/runs/a/checkpoint-8", "total_flos": 9600.0,
        "log_history": [
            {"loss": 0.5, "step": 1},
            {"eval_loss": 0.4, "eval_runtime": 0.01, "eval_samples_per_second": 1600.0, "step": 3},
            {"train_loss": 0.7, "train_runtime": 0.1, "train_samples_per_second": 800.0,
             "train_steps_per_second": 100.0, "total_flos": 9600.0, "step": 10},
        ],
    }))
    state, left_out = load_trainer_state(path)
    assert left_out == ["eval_runtime", "eval_samples_per_second", "train_loss", "train_runtime",
                        "train_samples_per_second", "train_steps_per_second"]
    assert state["log_history"] == [{"loss": 0.5, "step": 1}, {"eval_loss": 0.4, "step": 3},
                                    {"total_flos": 9600.0, "step": 10}]
    assert state["best_model_checkpoint"] == "checkpoint-8" and state["total_flos"] == 9600.0


def test_the_per_step_loss_in_trainer_state_stays_compared(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    for folder, loss in ((reference, 0.5), (other, 0.25)):
        (folder / "trainer_state.json").write_text(json.dumps({"log_history": [
            {"loss": loss, "step": 1, "train_loss": 9.0}]}))  # not a summary entry: train_loss kept too
    assert differing_keys(reference, other, ["trainer_state.json"]) == ["trainer_state.json:log_history.0.loss"]


# --- a real Hugging Face Trainer, uninterrupted and killed + resumed --------------------------------------------


@pytest.fixture(scope="module")
def hf_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    import hf_tiny

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hf_tiny.uninterrupted_and_resumed(tmp_path_factory.mktemp("hf"))


def flat_json(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flat_json(item, f"{prefix}{key}.").items()}
    if isinstance(value, list):
        return {k: v for index, item in enumerate(value) for k, v in flat_json(item, f"{prefix}{index}.").items()}
    return {prefix.rstrip("."): value}


def test_hf_resumed_trainer_state_differs_only_in_timing_and_the_summary_train_loss(hf_runs: tuple[Path, Path]) -> None:
    """Measured: what differs between an uninterrupted Trainer run and one killed after step 7 and resumed."""
    reference, resumed = hf_runs
    for name in ("checkpoint-8/trainer_state.json", "checkpoint-10/trainer_state.json", "trainer_state.json"):
        left = flat_json(json.loads((reference / name).read_text()))
        right = flat_json(json.loads((resumed / name).read_text()))
        assert left.keys() == right.keys()
        differing = {key.rsplit(".", 1)[-1] for key in left if left[key] != right[key]}
        allowed = {"eval_runtime", "eval_samples_per_second", "eval_steps_per_second"}
        if name == "trainer_state.json":  # save_state() after train(): the end-of-training entry
            allowed |= {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss"}
        assert differing <= allowed, name
    # total_flos and every per-step loss, learning rate and grad norm are the same: they stay compared
    final = json.loads((resumed / "trainer_state.json").read_text())
    assert final["total_flos"] > 0 and sum("loss" in entry for entry in final["log_history"]) >= 10


def test_hf_checkpoint_folders_of_a_resumed_run_equal_the_uninterrupted_ones(hf_runs: tuple[Path, Path]) -> None:
    reference, resumed = hf_runs
    names = [name for name in checkpoint_files(resumed) if name.parts[0] in ("checkpoint-8", "checkpoint-10")]
    names.append(Path("trainer_state.json"))
    result = compare_checkpoints(reference, resumed, names)
    assert result.problems == [] and result.differences == []
    assert {"checkpoint-10/model.safetensors", "checkpoint-10/optimizer.pt", "checkpoint-10/scheduler.pt",
            "checkpoint-10/rng_state.pth", "checkpoint-10/trainer_state.json", "checkpoint-10/config.json"} <= set(
        result.compared)
    assert result.leaves > 100
    assert any("checkpoint-10/training_args.bin: not compared" in note for note in result.notes)
    assert any(note.startswith("checkpoint-10/trainer_state.json: left out") for note in result.notes)
    # the raw training_args.bin files differ (each run has its own output_dir): that is why it is left out
    assert (reference / "checkpoint-10/training_args.bin").read_bytes() != (resumed / "checkpoint-10/training_args.bin").read_bytes()


def test_hf_checkpoint_one_changed_piece_is_named(hf_runs: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    reference = hf_runs[0] / "checkpoint-10"
    names = [Path(name) for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "model.safetensors")]

    def broken(file: str, change: Any) -> list[str]:
        other = tmp_path / file
        shutil.copytree(reference, other)
        state = load_checkpoint_file(other / file)
        change(state)
        torch.save(state, other / file)
        return differing_keys(reference, other, [str(name) for name in names])

    def moment(state: Any) -> None:
        state["state"][0]["exp_avg"][0, 0] += 1e-4

    def schedule(state: Any) -> None:
        state["last_epoch"] -= 1

    def rng(state: Any) -> None:
        state["cpu"] = torch.manual_seed(5).get_state()

    assert broken("optimizer.pt", moment) == ["optimizer.pt:state.0.exp_avg"]
    assert broken("scheduler.pt", schedule) == ["scheduler.pt:last_epoch"]
    assert broken("rng_state.pth", rng) == ["rng_state.pth:cpu"]


# --- torch.distributed.checkpoint folders --------------------------------------------------------------------


def dcp_save(state: dict[str, Any], folder: Path) -> None:
    import torch.distributed.checkpoint as dcp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # single process: no process group is the intent
        dcp.save(state, checkpoint_id=str(folder))


def test_dcp_folder_loads_flat_in_one_process_and_one_changed_leaf_is_named(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    dcp_save(training_state(), reference / "step-8")
    dcp_save(training_state(), other / "step-8")
    state = load_dcp_folder(reference / "step-8")
    assert state["step"] == 2 and state["optimizer.state.0.exp_avg"].shape == (2, 3)
    assert state["scheduler.last_epoch"] == 2 and isinstance(state["rng.python"], tuple)
    files = checkpoint_files(other)
    assert [unit.name for unit in units(other, files)] == ["step-8"]
    assert differing_keys(reference, other, [str(name) for name in files]) == []

    changed = training_state()
    changed["optimizer"]["state"][1]["exp_avg_sq"][0] *= 2
    changed["step"] = 3
    dcp_save(changed, other / "step-8")
    assert differing_keys(reference, other, [str(name) for name in files]) == [
        "step-8:optimizer.state.1.exp_avg_sq", "step-8:step"]


def test_a_dcp_folder_given_as_the_root_is_one_unit(tmp_path: Path) -> None:
    reference, other = tmp_path / "a", tmp_path / "b"
    dcp_save({"w": torch.ones(3)}, reference)
    dcp_save({"w": torch.tensor([1.0, 1.0, 2.0])}, other)
    result = compare_units(reference, other, units(other, checkpoint_files(other)))
    assert [(unit, d.key, d.max_abs_diff) for unit, d in result.differences] == [(".", "w", 1.0)]


def test_dcp_object_that_weights_only_refuses_names_its_key(tmp_path: Path) -> None:
    dcp_save({"w": torch.ones(2), "meta": {"record": Record(1)}}, tmp_path / "ckpt")
    with pytest.raises(LoadRefused, match=r"the object at meta\.record is refused by weights_only=True \(it holds .*Record\)"):
        load_dcp_folder(tmp_path / "ckpt")


def test_dcp_metadata_with_foreign_code_is_refused_and_never_run(tmp_path: Path) -> None:
    folder = tmp_path / "ckpt"
    dcp_save({"w": torch.ones(2)}, folder)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {marker}",))

    (folder / ".metadata").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(LoadRefused, match=r"(posix|os|nt)\.system is not part of a DCP metadata file"):
        load_dcp_folder(folder)
    assert not marker.exists()


def test_dcp_missing_shard_or_torn_metadata_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ckpt"
    dcp_save({"w": torch.ones(2)}, folder)
    metadata = (folder / ".metadata").read_bytes()
    (folder / ".metadata").write_bytes(metadata[: len(metadata) // 2])
    with pytest.raises(LoadRefused, match="cannot be read as DCP metadata"):
        load_dcp_folder(folder)
    (folder / ".metadata").write_bytes(metadata)
    for shard in folder.glob("*.distcp"):
        shard.unlink()
    with pytest.raises(LoadRefused, match=r"the DCP checkpoint cannot be read .*every \*\.distcp file"):
        load_dcp_folder(folder)


def test_compare_folders_keeps_the_command_driver_shape(tmp_path: Path) -> None:
    reference, other = two_folders(tmp_path)
    torch.save(training_state(), other / "step-4.pt")
    leaves, differences, problems = compare_folders(reference, other, [Path("step-4.pt")])
    assert (leaves, differences) == (0, [])
    assert problems == ["step-4.pt was written by the resumed run but not by the uninterrupted one"]


def test_a_dcp_folder_and_its_metadata_are_one_unit(tmp_path: Path) -> None:
    """DCP's ``.metadata`` names the folder it was written to and a random save id: compared alone it
    would differ between two identical runs; it is read as part of the folder's state."""
    folder = tmp_path / "step-4"
    folder.mkdir()
    (folder / ".metadata").write_bytes(b"meta")
    (folder / "__0_0.distcp").write_bytes(b"shard")
    found = units(tmp_path, [Path("step-4/.metadata"), Path("step-4/__0_0.distcp")])
    assert [(unit.name, unit.format) for unit in found] == [("step-4", "dcp")]


def test_a_checkpoint_saved_again_under_a_version_suffix_is_compared_with_its_name(tmp_path: Path) -> None:
    """Lightning's ModelCheckpoint names a checkpoint ``…-v1.ckpt`` when the interrupted run had already written
    the name before the kill: the same checkpoint, compared with the uninterrupted run's, not a stray file."""
    import torch

    (tmp_path / "reference").mkdir()
    (tmp_path / "resumed").mkdir()
    torch.save({"state_dict": {"w": torch.ones(2)}, "global_step": 48}, tmp_path / "reference" / "epoch=0-step=48.ckpt")
    torch.save({"state_dict": {"w": torch.ones(2)}, "global_step": 48}, tmp_path / "resumed" / "epoch=0-step=48-v1.ckpt")
    result = compare_checkpoints(tmp_path / "reference", tmp_path / "resumed", [Path("epoch=0-step=48-v1.ckpt")])
    assert result.problems == [] and result.differences == [] and result.leaves == 2
    assert "saved again under a new version suffix" in result.notes[-1]
    torch.save({"state_dict": {"w": torch.zeros(2)}, "global_step": 48}, tmp_path / "resumed" / "epoch=0-step=48-v1.ckpt")
    differing = compare_checkpoints(tmp_path / "reference", tmp_path / "resumed", [Path("epoch=0-step=48-v1.ckpt")])
    assert differing.differences


def test_the_checkpoint_of_a_step_under_another_epoch_is_compared_and_its_epoch_differs(tmp_path: Path) -> None:
    """A resume at an epoch's last batch that counts an empty epoch names the checkpoint of step 36
    ``epoch=3-step=36.ckpt`` where the uninterrupted run wrote ``epoch=2-step=36.ckpt``: the same step,
    compared by content (its epoch counter differs), not a stray file that fails the resume."""
    import torch

    (tmp_path / "reference").mkdir()
    (tmp_path / "resumed").mkdir()
    torch.save({"epoch": 2, "global_step": 36}, tmp_path / "reference" / "epoch=2-step=36.ckpt")
    torch.save({"epoch": 2, "global_step": 40}, tmp_path / "reference" / "epoch=2-step=40.ckpt")
    torch.save({"epoch": 3, "global_step": 36}, tmp_path / "resumed" / "epoch=3-step=36.ckpt")
    result = compare_checkpoints(tmp_path / "reference", tmp_path / "resumed", [Path("epoch=3-step=36.ckpt")])
    assert result.problems == []
    assert [(unit, difference.key) for unit, difference in result.differences] == [("epoch=3-step=36.ckpt", "epoch")]
    assert "the uninterrupted run named epoch=2-step=36.ckpt" in result.notes[-1]
    torch.save({"epoch": 3, "global_step": 44}, tmp_path / "resumed" / "epoch=3-step=44.ckpt")  # no such step there
    stray = compare_checkpoints(tmp_path / "reference", tmp_path / "resumed", [Path("epoch=3-step=44.ckpt")])
    assert stray.problems == ["epoch=3-step=44.ckpt was written by the resumed run but not by the uninterrupted one"]
