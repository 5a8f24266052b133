"""Measurements of a smoke run: step time, data wait, checkpoint cost, memory, start-up."""

from __future__ import annotations

import math
import resource
from typing import Any
from typing import Iterable

from spikelint.smoke.harness.analysis import RunRecord
from spikelint.smoke.report.summary import NOT_AVAILABLE

SIGTERM_GRACE_PERIOD_S = 30.0  # Kubernetes terminationGracePeriodSeconds and Run:ai's default


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (no interpolation: it is a value that was measured)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def stats(values: Iterable[float | None]) -> dict[str, Any] | None:
    present = [float(value) for value in values if value is not None]
    if not present:
        return None
    return {
        "median": percentile(present, 0.5),
        "p95": percentile(present, 0.95),
        "max": max(present),
        "count": len(present),
    }


def step_measurements(reference: RunRecord) -> dict[str, Any]:
    steps = [message for rank in reference.steps for message in rank.values()]
    waits = [float(message["data_wait_s"]) for message in steps if message.get("data_wait_s") is not None]
    times = [float(message["step_s"]) for message in steps]
    data_wait: float | str = NOT_AVAILABLE
    compute = sum(times)
    if steps and len(waits) == len(steps):  # only when every step told its data wait
        data_wait = sum(waits)
        compute = max(0.0, compute - data_wait)
    first = [float(rank[min(rank)]["step_s"]) for rank in reference.steps if rank]
    return {
        "step_time_s": dict(stats(times) or {}, first_step=max(first) if first else None) if times else None,
        "data_wait_s": data_wait,
        "compute_s": compute,
    }


def checkpoint_measurements(records: list[RunRecord]) -> dict[str, Any]:
    written = [m for record in records for rank in record.checkpoints for m in rank]
    restored = [m for record in records for m in record.restored if m is not None]
    return {
        "checkpoint_size_bytes": max((int(m["size_bytes"]) for m in written), default=None),
        "checkpoint_write_s": stats(m["write_s"] for m in written),
        "checkpoint_read_s": stats(m["read_s"] for m in restored),
    }


def memory_measurements(records: list[RunRecord]) -> dict[str, Any]:
    """Peak RSS of the largest training process (killed ones included) and peak device memory."""
    done = [m for record in records for m in record.done if m is not None]
    children = int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
    host = max([children] + [int(m.get("peak_rss_bytes") or 0) for m in done])
    device = [int(m["peak_device_memory_bytes"]) for m in done if m.get("peak_device_memory_bytes") is not None]
    return {
        "peak_host_memory_bytes": host,
        "peak_device_memory_bytes": max(device) if device else NOT_AVAILABLE,
    }


def resume_device_memory(records: list[RunRecord]) -> dict[str, Any] | str:
    """The costliest checkpoint load on the device: the loaded state's size and the peak while loading it.

    Loaded straight onto the device (``map_location``), the peak stays below what the job held
    before plus the state once; a load through the CPU or onto another GPU shows here.
    """
    loads = [m["device_memory"] for record in records for m in record.restored if m and m.get("device_memory")]
    if not loads:
        return NOT_AVAILABLE
    worst = max(loads, key=lambda load: int(load["peak_during_load_bytes"]) - int(load["allocated_before_bytes"]))
    growth = int(worst["peak_during_load_bytes"]) - int(worst["allocated_before_bytes"])
    state = int(worst["state_bytes"])
    return {
        "state_bytes": state,
        "allocated_before_bytes": int(worst["allocated_before_bytes"]),
        "peak_during_load_bytes": int(worst["peak_during_load_bytes"]),
        "growth_over_state": round(growth / state, 3) if state else None,
        "loads": len(loads),
    }


def startup_measurements(records: list[RunRecord], import_torch_s: float, deterministic_mode_s: float) -> dict[str, Any]:
    starts = [m.get("start_s") for record in records for m in record.ready if m is not None]
    return {
        "import_torch_s": import_torch_s,
        "deterministic_mode_s": deterministic_mode_s,
        "process_start_s": stats(starts),
        "processes": sum(record.world_size for record in records),
        "method": "fork of a parent that imported torch once (no CUDA initialised before the fork)",
    }


def sigterm_measurements(write_s: float | None, exit_s: float | None) -> dict[str, Any] | None:
    if exit_s is None:
        return None
    return {
        "grace_period_s": SIGTERM_GRACE_PERIOD_S,
        "checkpoint_write_s": write_s,
        "signal_to_exit_s": exit_s,
        "fits_grace_period": exit_s < SIGTERM_GRACE_PERIOD_S,
        "share_of_grace_period": exit_s / SIGTERM_GRACE_PERIOD_S,
    }
