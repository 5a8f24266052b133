"""Smoke benchmark: wall time of ``spikelint smoke`` as a user runs it (a new process each time).

The budget in ``smoke.md``: the default CPU run, with every interruption variant, under 20 s
on a 2-core machine. Each repeat runs ``python -m spikelint smoke --device cpu`` in a fresh
interpreter and a fresh run folder, so interpreter start-up, ``import torch`` and
deterministic mode's one-off import are all included; the summary's own measurements split
that time into start-up, training processes and the rest.

    python bench/smoke_bench.py                    # default run, 3 repeats
    python bench/smoke_bench.py --repeat 5 --nproc 2
    python bench/smoke_bench.py --json             # one JSON object on stdout
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[1]
BUDGET_S = 20.0


@dataclass(frozen=True)
class Measurement:
    """One cold run: outside wall time, and what the run's summary says about its parts."""

    wall_s: float
    exit_code: int
    verdict: str
    import_torch_s: float | None
    deterministic_mode_s: float | None
    processes: int | None
    process_start_median_s: float | None
    step_time_median_s: float | None
    checkpoint_write_median_s: float | None
    checkpoint_read_median_s: float | None
    sigterm_exit_s: float | None
    inside_wall_s: float | None


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def run_once(extra: list[str], workdir: Path) -> Measurement:
    run_dir = workdir / f"run-{time.monotonic_ns()}"
    command = [sys.executable, "-m", "spikelint", "smoke", "--device", "cpu", "--run-dir", str(run_dir),
               "--format", "json", *extra]
    environment = dict(os.environ, PYTHONPATH=str(REPOSITORY) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=workdir, capture_output=True, text=True, env=environment, timeout=600)
    wall_s = time.perf_counter() - started
    try:
        summary = json.loads(completed.stdout)
    except ValueError:
        sys.stderr.write(completed.stderr[-4000:])
        raise SystemExit(f"the smoke run printed no summary (exit {completed.returncode})") from None
    measurements = summary["measurements"]
    return Measurement(
        wall_s=wall_s,
        exit_code=completed.returncode,
        verdict=summary["verdict"],
        import_torch_s=_get(measurements, "startup", "import_torch_s"),
        deterministic_mode_s=_get(measurements, "startup", "deterministic_mode_s"),
        processes=_get(measurements, "startup", "processes"),
        process_start_median_s=_get(measurements, "startup", "process_start_s", "median"),
        step_time_median_s=_get(measurements, "step_time_s", "median"),
        checkpoint_write_median_s=_get(measurements, "checkpoint_write_s", "median"),
        checkpoint_read_median_s=_get(measurements, "checkpoint_read_s", "median"),
        sigterm_exit_s=_get(measurements, "sigterm", "signal_to_exit_s"),
        inside_wall_s=measurements.get("total_wall_s"),
    )


def milliseconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f} ms"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nproc", type=int, default=1)
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds a run may take (default 20)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    extra = ["--nproc", str(args.nproc)] if args.nproc != 1 else []
    workdir = Path(tempfile.mkdtemp(prefix="spikelint-smoke-bench-"))
    try:
        runs = [run_once(extra, workdir) for _ in range(args.repeat)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    walls = [run.wall_s for run in runs]
    verified = all(run.verdict == "verified" and run.exit_code == 0 for run in runs)
    within = max(walls) < args.budget
    result = {
        "command": f"spikelint smoke --device cpu{' --nproc ' + str(args.nproc) if extra else ''}",
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "repeat": args.repeat,
        "wall_s": {"min": min(walls), "median": statistics.median(walls), "max": max(walls)},
        "budget_s": args.budget,
        "within_budget": within,
        "all_verified": verified,
        "runs": [asdict(run) for run in runs],
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['command']}  ({result['cpus']} CPUs, Python {result['python']}, {args.repeat} cold runs)")
        for index, run in enumerate(runs, 1):
            print(
                f"  run {index}: {seconds(run.wall_s)} wall, {run.verdict} (exit {run.exit_code}); "
                f"import torch {seconds(run.import_torch_s)}, deterministic mode {seconds(run.deterministic_mode_s)}, "
                f"{run.processes} processes started in {milliseconds(run.process_start_median_s)} (median), "
                f"step {milliseconds(run.step_time_median_s)}, checkpoint write {milliseconds(run.checkpoint_write_median_s)}"
                f" / read {milliseconds(run.checkpoint_read_median_s)}, SIGTERM to exit {milliseconds(run.sigterm_exit_s)}"
            )
        print(
            f"wall time: min {seconds(min(walls))}, median {seconds(statistics.median(walls))}, max {seconds(max(walls))}"
            f"; budget {args.budget:g} s: {'met' if within else 'EXCEEDED'}"
        )
    return 0 if verified and within else 1


if __name__ == "__main__":
    sys.exit(main())
