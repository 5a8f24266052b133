"""Splitting a run over processes: how many the work is worth, even shares, and running them.

On Linux the shares run in forked children while this process checks the first share itself:
a child inherits everything already imported and built (the engine, the plan, the catalog), so
nothing is pickled on the way in, and no process sits idle waiting.  Elsewhere (macOS and
Windows start processes with ``spawn``) a process pool runs every share.  A child that fails is
not the end of the run: its share is checked again in this process, where any error surfaces
with its usual message.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable
from typing import Sequence
from typing import TypeVar

Result = TypeVar("Result")

# What one file and one byte cost to check, and what a worker costs to start (fork, its own
# lazily compiled patterns and imports, results pickled back), in CPU seconds
# (bench/side_by_side.py measures them).
SECONDS_PER_FILE = 0.0012
SECONDS_PER_BYTE = 1 / 2_500_000
SECONDS_PER_WORKER = 0.08


def free_cpus() -> int:
    """CPUs this process may use, less those other processes are running on right now: on a
    shared CI runner a second worker on a taken CPU only adds its start-up cost.

    "Right now" is the kernel's count of runnable tasks (``/proc/loadavg``'s fourth field, this
    process included), not the load average: a run that follows another (a hook after a hook, a
    benchmark's next round) would otherwise see its predecessor's minute of load and stay
    in-process on an idle machine.
    """
    usable = usable_cpus()
    return max(1, usable - _others_running())


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, e.g. a container's cpuset)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _others_running(samples: int = 3, interval: float = 0.002) -> int:
    """Tasks runnable now besides this one (Linux: the fewest of a few samples, so that a kernel
    thread's or an exiting process's moment does not count); elsewhere the 1-minute load average."""
    try:
        counts = []
        for sample in range(samples):
            if sample:
                time.sleep(interval)
            with open("/proc/loadavg", encoding="ascii") as handle:
                counts.append(int(handle.read().split()[3].split("/")[0]))
        return max(0, min(counts) - 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(os.getloadavg()[0])
    except (AttributeError, OSError):
        return 0


def worker_count(jobs: int | None, files: int, size: int, cpus: int) -> int:
    """Processes for ``files`` files of ``size`` bytes: 1 (in-process) unless splitting the
    estimated work saves more than the workers cost to start; ``jobs`` is an upper bound, so
    ``--jobs N`` is never slower than ``--jobs 1`` by more than noise."""
    work = files * SECONDS_PER_FILE + size * SECONDS_PER_BYTE
    most = min(jobs if jobs is not None else cpus, cpus, files)
    best = 1
    for workers in range(2, most + 1):
        if work / workers + workers * SECONDS_PER_WORKER < work / best + best * SECONDS_PER_WORKER:
            best = workers
    return best


def file_cost(size: int) -> float:
    """The estimated CPU seconds of checking one file of ``size`` bytes."""
    return SECONDS_PER_FILE + size * SECONDS_PER_BYTE


def even_shares(costs: Sequence[float], workers: int) -> list[list[int]]:
    """Indices of ``costs`` in ``workers`` shares of about equal total cost (largest first, each
    to the share with the least so far), each share in index order; no share is empty."""
    count = max(1, min(workers, len(costs)))
    shares: list[list[int]] = [[] for _ in range(count)]
    totals = [0.0] * count
    for index in sorted(range(len(costs)), key=lambda position: -costs[position]):
        lightest = min(range(count), key=totals.__getitem__)
        shares[lightest].append(index)
        totals[lightest] += costs[index]
    return [sorted(share) for share in shares if share]


def run_shares(check: Callable[[list[int]], list[Result]], shares: list[list[int]]) -> list[Result]:
    """``check`` of every share, their results concatenated (in no particular order)."""
    if len(shares) <= 1:
        return check(shares[0]) if shares else []
    if sys.platform.startswith("linux") and hasattr(os, "fork"):
        return _forked(check, shares)
    return _pooled(check, shares)


def _forked(check: Callable[[list[int]], list[Result]], shares: list[list[int]]) -> list[Result]:
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, int, list[int]]] = []
    for share in shares[1:]:
        try:
            read_end, write_end = os.pipe()
            pid = os.fork()
        except OSError as error:  # no more processes: this one checks the rest
            print(f"spikelint: cannot start a worker process ({error}); checking in-process", file=sys.stderr)
            children.append((-1, -1, share))
            continue
        if pid == 0:
            _child(check, share, read_end, write_end)
        os.close(write_end)
        children.append((pid, read_end, share))
    results = check(shares[0])
    for pid, read_end, share in children:
        results.extend(_collect(check, pid, read_end, share))
    return results


def _child(check: Callable[[list[int]], list[Result]], share: list[int], read_end: int, write_end: int) -> None:
    """Check ``share``, send the pickled results down the pipe, and leave without running this
    process's exit handlers (they belong to the parent)."""
    import pickle

    status = 1
    try:
        os.close(read_end)
        payload = pickle.dumps(check(share), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as stream:
            stream.write(payload)
        status = 0
    except BaseException:  # noqa: BLE001 - the parent checks the share again and reports the error
        pass
    finally:
        os._exit(status)


def _collect(check: Callable[[list[int]], list[Result]], pid: int, read_end: int,
             share: list[int]) -> list[Result]:
    import pickle

    if pid < 0:
        return check(share)
    with os.fdopen(read_end, "rb") as stream:
        payload = stream.read()
    _, status = os.waitpid(pid, 0)
    if status == 0 and payload:
        try:
            results: list[Result] = pickle.loads(payload)
            return results
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            pass
    print("spikelint: a worker process stopped early; checking its files in-process", file=sys.stderr)
    return check(share)


def _pooled(check: Callable[[list[int]], list[Result]], shares: list[list[int]]) -> list[Result]:
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing costs ~15 ms to import

    try:
        with ProcessPoolExecutor(max_workers=len(shares)) as pool:
            futures = [pool.submit(check, share) for share in shares]
            return [result for future in futures for result in future.result()]
    except (OSError, RuntimeError) as error:  # no process support here: do it in-process
        print(f"spikelint: worker processes unavailable ({error}); checking in-process", file=sys.stderr)
        return [result for share in shares for result in check(share)]
