"""A resume loads its checkpoint straight onto the process's device (``map_location``), on the CPU too.

On a GPU that keeps the state from being restored onto the GPU it was saved from (another rank's
after a reschedule) or through the CPU and copied (twice in host memory); here the device is the
CPU, and the ``meta`` device shows that the tensors go where ``map_location`` says.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from spikelint.smoke.harness import checkpoint  # noqa: E402
from spikelint.smoke.harness import measure  # noqa: E402
from spikelint.smoke.harness.analysis import RunRecord  # noqa: E402
from spikelint.smoke.harness.checkpoint import list_checkpoints  # noqa: E402
from spikelint.smoke.harness.checkpoint import load_checkpoint  # noqa: E402
from spikelint.smoke.harness.checkpoint import write_checkpoint  # noqa: E402
from spikelint.smoke.harness.child import RESUMED  # noqa: E402
from spikelint.smoke.harness.child import ChildConfig  # noqa: E402
from spikelint.smoke.harness.child import TrainingProcess  # noqa: E402
from spikelint.smoke.harness.child import tensor_bytes  # noqa: E402
from spikelint.smoke.harness.job import TinyJob  # noqa: E402
from spikelint.smoke.harness.protocol import RESTORED  # noqa: E402
from spikelint.smoke.report.summary import NOT_AVAILABLE  # noqa: E402
from spikelint.smoke.harness.rngstate import capture_rng  # noqa: E402
from spikelint.smoke.harness.rngstate import restore_rng  # noqa: E402


@pytest.fixture
def restore_global_rng() -> object:
    saved = capture_rng(include_cuda=False)
    yield
    restore_rng(saved)


class RecordingChannel:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send(self, message_type: str, **fields: Any) -> None:
        self.sent.append((message_type, fields))


def trained_job(steps: int) -> TinyJob:
    job = TinyJob(total_steps=20)
    job.setup("cpu", 0)
    for _ in range(steps):
        job.train_step()
    return job


def test_the_loaded_tensors_go_where_map_location_says(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, 4, 0, 1, {"weights": torch.ones(3), "nested": {"moment": torch.zeros(2)}})
    (candidate,) = list_checkpoints(tmp_path, 0)
    on_meta = load_checkpoint(candidate, 1, map_location="meta").payload["job"]
    assert on_meta["weights"].device.type == "meta" and on_meta["nested"]["moment"].device.type == "meta"
    on_cpu = load_checkpoint(candidate, 1, map_location="cpu").payload["job"]
    assert torch.equal(on_cpu["weights"], torch.ones(3))
    default = load_checkpoint(candidate, 1).payload["job"]  # as before: where the tensors were saved
    assert torch.equal(default["weights"], on_cpu["weights"])


def test_a_resume_loads_onto_its_own_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restore_global_rng: object) -> None:
    saved = trained_job(4)
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    write_checkpoint(folder, 4, 0, 1, saved.state_dict())
    config = ChildConfig(
        label="kill-between-checkpoints.resumed", role=RESUMED, world_size=1, device_type="cpu", backend=None,
        master_port=None, seed=0, steps=20, checkpoint_every=4, checkpoint_folder=folder, hold_at_step=None,
        pause_in_write_at_step=None, probe_steps=frozenset(), final_state_folder=tmp_path, job_factory=TinyJob,
        num_threads=1,
    )
    channel = RecordingChannel()
    process = TrainingProcess(config, 0, channel, time.monotonic())  # type: ignore[arg-type]
    process.job = trained_job(0)
    process.device = "cuda:3"  # what rank 3 of a GPU run would pass; the load below goes to the CPU
    asked: list[Any] = []
    real_load = torch.load

    def recording_load(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("map_location"))
        return real_load(*args, **dict(kwargs, map_location="cpu"))

    monkeypatch.setattr(checkpoint.torch, "load", recording_load)
    assert process.restore() == 4
    assert asked == ["cuda:3"]
    restored = [fields for kind, fields in channel.sent if kind == RESTORED]
    assert restored and restored[0]["step"] == 4 and restored[0]["device_memory"] is None  # CPU: nothing to measure
    for key, value in saved.model.state_dict().items():
        assert torch.equal(process.job.model.state_dict()[key], value)


def test_the_state_size_counts_each_storage_once() -> None:
    weights = torch.zeros(4, 4)
    assert tensor_bytes({"a": weights, "b": weights[0], "c": [torch.zeros(2, dtype=torch.float64)], "n": 3}) == 64 + 16


def record_with(loads: list[dict[str, int] | None]) -> RunRecord:
    restored = [{"step": 4, "device_memory": load} for load in loads]
    return RunRecord("x.resumed", len(loads), [0] * len(loads), [None] * len(loads), [], [], [], restored,
                     [None] * len(loads), [None] * len(loads), [])


def test_resume_device_memory_reports_the_costliest_load() -> None:
    assert measure.resume_device_memory([record_with([None])]) == NOT_AVAILABLE
    light = {"state_bytes": 1000, "allocated_before_bytes": 500, "peak_during_load_bytes": 1600,
             "allocated_after_bytes": 1500}
    heavy = {"state_bytes": 1000, "allocated_before_bytes": 500, "peak_during_load_bytes": 2600,
             "allocated_after_bytes": 1500}
    measured = measure.resume_device_memory([record_with([light]), record_with([heavy])])
    assert measured == {"state_bytes": 1000, "allocated_before_bytes": 500, "peak_during_load_bytes": 2600,
                        "growth_over_state": 2.1, "loads": 2}
