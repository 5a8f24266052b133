"""RNG capture, the built-in job's state and the live-state probe, in this process."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from spikelint.smoke.compare.leaves import compare_digests  # noqa: E402
from spikelint.smoke.compare.leaves import compare_states  # noqa: E402
from spikelint.smoke.harness.job import JobError  # noqa: E402
from spikelint.smoke.harness.job import TinyJob  # noqa: E402
from spikelint.smoke.harness.job import check_job  # noqa: E402
from spikelint.smoke.harness.job import resolve_job  # noqa: E402
from spikelint.smoke.harness.probe import describe_piece  # noqa: E402
from spikelint.smoke.harness.probe import live_digests  # noqa: E402
from spikelint.smoke.harness.probe import piece_of  # noqa: E402
from spikelint.smoke.harness.rngstate import capture_rng  # noqa: E402
from spikelint.smoke.harness.rngstate import restore_rng  # noqa: E402


def weights_only_round_trip(value: object) -> Any:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


@pytest.fixture
def restore_global_rng() -> object:
    saved = capture_rng(include_cuda=False)
    yield
    restore_rng(saved)


def test_rng_state_survives_the_weights_only_loader(restore_global_rng: object) -> None:
    state = weights_only_round_trip(capture_rng(include_cuda=False))
    expected = (random.random(), float(np.random.standard_normal()), float(torch.rand(1)))
    random.seed(99)
    np.random.seed(99)
    torch.manual_seed(99)
    restore_rng(state)
    assert (random.random(), float(np.random.standard_normal()), float(torch.rand(1))) == expected


@pytest.mark.skipif(torch.cuda.is_available(), reason="would initialise CUDA in the test process")
def test_cuda_rng_is_captured_only_when_asked_and_survives_the_loader() -> None:
    assert "cuda" not in capture_rng(include_cuda=False)
    state = weights_only_round_trip(capture_rng(include_cuda=True))
    assert isinstance(state["cuda"], list)  # one tensor per visible GPU; none here
    assert len(state["cuda"]) == torch.cuda.device_count()


def test_builtin_job_state_round_trips_bit_for_bit(restore_global_rng: object) -> None:
    trained = TinyJob(total_steps=30)
    trained.setup("cpu", seed=3)
    for _ in range(20):  # crosses the epoch boundary at 16
        trained.train_step()
    saved = weights_only_round_trip(trained.state_dict())
    resumed = TinyJob(total_steps=30)
    resumed.setup("cpu", seed=3)
    resumed.load_state_dict(saved)
    # Right after loading, only what the next step overwrites differs: the stale gradients of the last
    # backward and the last step's bookkeeping (indices, data wait).
    stale = {piece_of(d.key) for d in compare_digests(live_digests(trained, False), live_digests(resumed, False))}
    assert stale == {"gradients:model", "values:_last/0", "values:_last/1"}
    losses = [(trained.train_step(), trained.step_info()["indices"]) for _ in range(5)]
    restore_rng(saved["rng"])  # both jobs share this process's generators
    assert [(resumed.train_step(), resumed.step_info()["indices"]) for _ in range(5)] == losses
    assert compare_states(trained.state_dict(), resumed.state_dict())[1] == []


def test_probe_names_each_piece_of_live_state(restore_global_rng: object) -> None:
    job = TinyJob(total_steps=10)
    job.setup("cpu", seed=0)
    pieces = {piece_of(key) for key in live_digests(job, include_cuda=False)}
    for expected in ("model:model", "optimizer:optimizer", "scheduler:scheduler", "data position:loader",
                     "data position:batches", "rng:loader_generator", "rng:python", "rng:numpy", "rng:torch",
                     "counters:epoch", "counters:batch_in_epoch"):
        assert expected in pieces
    assert describe_piece("optimizer:optimizer") == "optimizer (job.optimizer)"
    assert describe_piece("rng:numpy") == "rng (numpy global)"


def test_resolve_job_reports_bad_specs() -> None:
    assert "built-in" in resolve_job(None, 10).label
    for spec, words in [("nocolon", "MODULE:FACTORY"), ("no_such_module_xyz:f", "importing"),
                        ("spikelint.smoke.harness.job:missing", "no attribute"), ("spikelint.smoke.harness.job:REQUIRED_METHODS", "not callable"),
                        ("/no/such/file.py:f", "no such file")]:
        with pytest.raises(JobError, match=words):
            resolve_job(spec, 10)
    with pytest.raises(JobError, match="has no train_step"):
        check_job(object())
