from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from spikelint.smoke.harness.checkpoint import CheckpointFile  # noqa: E402
from spikelint.smoke.harness.checkpoint import CheckpointRefused  # noqa: E402
from spikelint.smoke.harness.checkpoint import checkpoint_name  # noqa: E402
from spikelint.smoke.harness.checkpoint import checksum_path  # noqa: E402
from spikelint.smoke.harness.checkpoint import tensor_layout_check  # noqa: E402
from spikelint.smoke.harness.checkpoint import weights_only_refusal  # noqa: E402
from spikelint.smoke.harness.checkpoint import list_checkpoints  # noqa: E402
from spikelint.smoke.harness.checkpoint import load_checkpoint  # noqa: E402
from spikelint.smoke.harness.checkpoint import newest_valid  # noqa: E402
from spikelint.smoke.harness.checkpoint import prune_checkpoints  # noqa: E402
from spikelint.smoke.harness.checkpoint import quarantine  # noqa: E402
from spikelint.smoke.harness.checkpoint import remove_stale_temporaries  # noqa: E402
from spikelint.smoke.harness.checkpoint import save_atomically  # noqa: E402
from spikelint.smoke.harness.checkpoint import write_checkpoint  # noqa: E402


def job_state(step: int) -> dict[str, object]:
    return {"weights": torch.full((3,), float(step)), "step": step}


def write_steps(folder: Path, *steps: int, rank: int = 0) -> None:
    for step in steps:
        write_checkpoint(folder, step, rank, 1, job_state(step))


def test_write_is_atomic_and_loadable_with_weights_only(tmp_path: Path) -> None:
    result = write_checkpoint(tmp_path, 4, 0, 1, job_state(4))
    assert result.path.name == checkpoint_name(4, 0) and result.size_bytes == result.path.stat().st_size
    assert not [entry for entry in tmp_path.iterdir() if ".tmp-" in entry.name]
    loaded = load_checkpoint(CheckpointFile(4, 0, result.path), 1)
    assert torch.equal(loaded.payload["job"]["weights"], torch.full((3,), 4.0))
    assert isinstance(loaded.payload["meta"]["torch"], str)


def test_keep_two_prunes_only_older_checkpoints(tmp_path: Path) -> None:
    write_steps(tmp_path, 4, 8, 12)
    write_steps(tmp_path, 4, 8, rank=1)
    removed = prune_checkpoints(tmp_path, rank=0)
    assert [path.name for path in removed] == [checkpoint_name(4, 0)]
    assert [item.step for item in list_checkpoints(tmp_path, 0)] == [12, 8]
    assert [item.step for item in list_checkpoints(tmp_path, 1)] == [8, 4]


def test_truncated_newest_is_refused_with_a_reason_and_the_previous_one_used(tmp_path: Path) -> None:
    write_steps(tmp_path, 4, 8)
    newest = tmp_path / checkpoint_name(8, 0)
    os.truncate(newest, newest.stat().st_size // 2)
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is not None and loaded.step == 4
    assert [refusal.step for refusal in refusals] == [8]
    assert "truncated or extended" in refusals[0].reason and "recorded at write time" in refusals[0].reason


def test_all_checkpoints_damaged_means_nothing_to_resume_from(tmp_path: Path) -> None:
    write_steps(tmp_path, 4, 8)
    (tmp_path / checkpoint_name(8, 0)).write_bytes(b"")
    os.truncate(tmp_path / checkpoint_name(4, 0), 100)
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is None
    assert [refusal.step for refusal in refusals] == [8, 4]
    assert "0 bytes on disk" in refusals[0].reason


def test_objects_the_weights_only_loader_refuses_are_named(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, 4, 0, 1, {"history": np.zeros(3)})
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is None
    assert "weights_only=True" in refusals[0].reason and "numpy" in refusals[0].reason


def test_a_checkpoint_of_another_step_or_rank_is_refused(tmp_path: Path) -> None:
    write_steps(tmp_path, 4)
    os.replace(tmp_path / checkpoint_name(4, 0), tmp_path / checkpoint_name(8, 0))
    os.replace(checksum_path(tmp_path / checkpoint_name(4, 0)), checksum_path(tmp_path / checkpoint_name(8, 0)))
    with pytest.raises(CheckpointRefused, match="records step 4, expected 8"):
        load_checkpoint(CheckpointFile(8, 0, tmp_path / checkpoint_name(8, 0)), 1)


def test_newest_valid_respects_an_upper_bound(tmp_path: Path) -> None:
    write_steps(tmp_path, 4, 8)
    loaded, refusals = newest_valid(tmp_path, 0, 1, at_most=7)
    assert loaded is not None and loaded.step == 4 and not refusals


def test_a_write_interrupted_by_the_pause_leaves_only_a_temporary_file(tmp_path: Path) -> None:
    seen: list[str] = []

    class Killed(Exception):
        pass

    def pause(temporary: str) -> None:
        seen.append(temporary)
        raise Killed  # stands in for SIGKILL while the child waits

    with pytest.raises(Killed):
        save_atomically(tmp_path / checkpoint_name(4, 0), {"job": {}}, pause)
    assert list_checkpoints(tmp_path, 0) == []
    assert Path(seen[0]).exists() and 0 < Path(seen[0]).stat().st_size
    assert remove_stale_temporaries(tmp_path, 0) == [Path(seen[0])]
    assert not Path(seen[0]).exists()


def test_quarantine_moves_a_refused_checkpoint_out_of_the_way(tmp_path: Path) -> None:
    write_steps(tmp_path, 4)
    moved = quarantine(tmp_path / checkpoint_name(4, 0))
    assert moved is not None and moved.name.endswith(".damaged") and list_checkpoints(tmp_path, 0) == []
    assert checksum_path(moved).exists()


def test_every_checkpoint_records_its_sha256_before_the_rename(tmp_path: Path) -> None:
    result = write_checkpoint(tmp_path, 4, 0, 1, job_state(4))
    record = json.loads(checksum_path(result.path).read_text())
    assert record["sha256"] == hashlib.sha256(result.path.read_bytes()).hexdigest()
    assert record["size_bytes"] == result.size_bytes


@pytest.mark.parametrize("offset_fraction", [0.1, 0.5, 0.9])
def test_a_flipped_byte_is_refused_by_its_checksum_and_the_previous_one_used(
    tmp_path: Path, offset_fraction: float
) -> None:
    write_steps(tmp_path, 4, 8)
    newest = tmp_path / checkpoint_name(8, 0)
    data = bytearray(newest.read_bytes())
    data[int(len(data) * offset_fraction)] ^= 0x01
    newest.write_bytes(bytes(data))
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is not None and loaded.step == 4
    assert "SHA-256 mismatch" in refusals[0].reason and "changed after the write" in refusals[0].reason


def test_a_checkpoint_without_its_checksum_record_is_refused(tmp_path: Path) -> None:
    write_steps(tmp_path, 4, 8)
    checksum_path(tmp_path / checkpoint_name(8, 0)).unlink()
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is not None and loaded.step == 4
    assert "no SHA-256 recorded" in refusals[0].reason


@pytest.mark.parametrize("kind", ["directory", "fifo", "device", "symlink"])
def test_something_other_than_a_file_under_the_newest_name_is_refused_not_opened(tmp_path: Path, kind: str) -> None:
    write_steps(tmp_path, 4, 8)
    newest = tmp_path / checkpoint_name(12, 0)
    if kind == "directory":
        newest.mkdir()
        (newest / "inside").write_text("x")
    elif kind == "fifo":
        os.mkfifo(newest)  # opening it for reading would block forever
    elif kind == "device":
        newest.symlink_to("/dev/zero")
    else:
        newest.symlink_to(tmp_path / checkpoint_name(8, 0))
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is not None and loaded.step == 8
    expected = {"directory": "is a directory", "fifo": "is a FIFO", "device": "is a symbolic link",
                "symlink": "is a symbolic link"}[kind]
    assert refusals[0].step == 12 and expected in refusals[0].reason
    write_steps(tmp_path, 16)
    assert [path.name for path in prune_checkpoints(tmp_path, 0)] == [checkpoint_name(4, 0)]
    assert os.path.lexists(newest)  # never deleted or followed by pruning
    assert quarantine(newest) is not None or os.path.lexists(newest)


def test_tensors_of_the_wrong_shape_dtype_or_non_finite_are_refused_against_the_job_state(tmp_path: Path) -> None:
    fresh = {"weights": torch.zeros(3), "step": 0, "history": torch.zeros(0)}
    validate = tensor_layout_check(fresh)
    for state, words in [
        ({"weights": torch.zeros(3, dtype=torch.float64)}, "is torch.float64, the job's state has torch.float32"),
        ({"weights": torch.zeros(4)}, "has shape [4], the job's state has [3]"),
        ({"weights": torch.tensor([0.0, float("nan"), 1.0])}, "NaN or infinite"),
    ]:
        write_checkpoint(tmp_path, 8, 0, 1, state)
        with pytest.raises(CheckpointRefused, match=re.escape(words)):
            load_checkpoint(CheckpointFile(8, 0, tmp_path / checkpoint_name(8, 0)), 1, validate)
    write_checkpoint(tmp_path, 8, 0, 1, {"weights": torch.ones(3), "history": torch.ones(5), "extra": torch.ones(2)})
    load_checkpoint(CheckpointFile(8, 0, tmp_path / checkpoint_name(8, 0)), 1, validate)  # growing and extra keys pass


def test_the_first_state_the_safe_loader_refuses_is_named_by_its_key() -> None:
    assert weights_only_refusal({"model": {"w": torch.ones(2)}, "step": 3, "names": ["a"]}) is None
    key, reason = weights_only_refusal({"model": {"w": torch.ones(2)}, "extra": {"history": np.zeros(3)}}) or ("", "")
    assert key == "extra.history" and "numpy.ndarray" in reason
