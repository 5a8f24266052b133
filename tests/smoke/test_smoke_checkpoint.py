from __future__ import annotations

import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from spikelint.smoke.checkpoint import CheckpointFile  # noqa: E402
from spikelint.smoke.checkpoint import CheckpointRefused  # noqa: E402
from spikelint.smoke.checkpoint import checkpoint_name  # noqa: E402
from spikelint.smoke.checkpoint import list_checkpoints  # noqa: E402
from spikelint.smoke.checkpoint import load_checkpoint  # noqa: E402
from spikelint.smoke.checkpoint import newest_valid  # noqa: E402
from spikelint.smoke.checkpoint import prune_checkpoints  # noqa: E402
from spikelint.smoke.checkpoint import quarantine  # noqa: E402
from spikelint.smoke.checkpoint import remove_stale_temporaries  # noqa: E402
from spikelint.smoke.checkpoint import save_atomically  # noqa: E402
from spikelint.smoke.checkpoint import write_checkpoint  # noqa: E402


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
    assert "truncated or incomplete" in refusals[0].reason


def test_all_checkpoints_damaged_means_nothing_to_resume_from(tmp_path: Path) -> None:
    write_steps(tmp_path, 4, 8)
    (tmp_path / checkpoint_name(8, 0)).write_bytes(b"")
    os.truncate(tmp_path / checkpoint_name(4, 0), 100)
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is None
    assert [refusal.step for refusal in refusals] == [8, 4]
    assert "empty file" in refusals[0].reason


def test_objects_the_weights_only_loader_refuses_are_named(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, 4, 0, 1, {"history": np.zeros(3)})
    loaded, refusals = newest_valid(tmp_path, 0, 1)
    assert loaded is None
    assert "weights_only=True" in refusals[0].reason and "numpy" in refusals[0].reason


def test_a_checkpoint_of_another_step_or_rank_is_refused(tmp_path: Path) -> None:
    write_steps(tmp_path, 4)
    os.replace(tmp_path / checkpoint_name(4, 0), tmp_path / checkpoint_name(8, 0))
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
    assert moved.name.endswith(".damaged") and list_checkpoints(tmp_path, 0) == []
