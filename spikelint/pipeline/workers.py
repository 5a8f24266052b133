"""Splitting a run over processes: how many the work is worth, even shares, and running them.

On Linux the work runs in forked children and in this process alike, each taking batches from
one queue as it finishes the last: a child inherits everything already imported and built (the
engine, the plan, the catalog), so nothing is pickled on the way in, no process sits idle
waiting, and a batch slower than its estimate does not hold up the others.  Elsewhere (macOS and
Windows start processes with ``spawn``) a process pool runs every share.  A child that fails is
not the end of the run: the batches it took are checked again in this process, where any
error surfaces with its usual message.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable
from typing import Iterable
from typing import Iterator
from typing import Sequence
from typing import TypeVar

Result = TypeVar("Result")

# What one file and one byte cost to check, and what a worker costs to start (fork, its own
# lazily compiled patterns and imports, results pickled back), in CPU seconds
# (bench/side_by_side.py measures them).
SECONDS_PER_FILE = 0.0012
SECONDS_PER_BYTE = 1 / 2_500_000
SECONDS_PER_WORKER = 0.08
# The batch queue is written whole before the fork; a pipe holds one page even where the user's
# pipe buffers are exhausted (64 KiB otherwise), and there are at most ~8 batches per worker.
QUEUE_BYTES = 4096


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


def batches_by_cost(costs: Sequence[float], workers: int, per_worker: int = 8) -> list[list[int]]:
    """Indices of ``costs`` in batches of about ``1 / (workers * per_worker)`` of the total cost,
    the costliest first (a file costlier than that is a batch of its own), each in index order."""
    order = sorted(range(len(costs)), key=lambda position: -costs[position])
    target = sum(costs) / max(1, workers * per_worker)
    batches: list[list[int]] = []
    batch: list[int] = []
    weight = 0.0
    for index in order:
        batch.append(index)
        weight += costs[index]
        if weight >= target:
            batches.append(sorted(batch))
            batch, weight = [], 0.0
    if batch:
        batches.append(sorted(batch))
    return batches


def run_split(check: Callable[[Iterable[int]], list[Result]], costs: Sequence[float], workers: int) -> list[Result]:
    """``check`` over every index of ``costs`` in ``workers`` processes, results concatenated (in
    no particular order).  ``check`` is called once per process with the indices it is to do.

    With fork, the processes take batches from one queue as they finish the last, so a share
    that turns out slower than its estimate does not hold up the run; elsewhere each process of
    the pool gets an even share by estimated cost.
    """
    if workers <= 1 or len(costs) <= 1:
        return check(range(len(costs)))
    batches = batches_by_cost(costs, workers)
    if sys.platform.startswith("linux") and hasattr(os, "fork") and len(batches) * 4 <= QUEUE_BYTES:
        if _other_threads():
            return check(range(len(costs)))  # a fork would copy the locks those threads hold
        return _forked(check, batches, workers)
    return _pooled(check, even_shares(costs, workers))


def _other_threads() -> bool:
    """Whether this process runs threads besides the main one (spikelint used as a library)."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def _forked(check: Callable[[Iterable[int]], list[Result]], batches: list[list[int]], workers: int) -> list[Result]:
    """This process and ``workers - 1`` forked children take batches from one pipe of batch
    numbers (every number written before the fork, four bytes each: a read of four bytes takes
    exactly one, and the kernel hands each to one reader)."""
    queue_read, queue_write = os.pipe()
    records = memoryview(b"".join(number.to_bytes(4, "little") for number in range(len(batches))))
    while records:
        records = records[os.write(queue_write, records):]
    os.close(queue_write)  # drained, the queue reads as end-of-file
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, int]] = []
    for _ in range(workers - 1):
        try:
            read_end, write_end = os.pipe()
            pid = os.fork()
        except OSError as error:  # no more processes: the others take its batches
            print(f"spikelint: cannot start a worker process ({error}); checking in-process", file=sys.stderr)
            break
        if pid == 0:
            os.close(read_end)
            _child(check, batches, queue_read, write_end)
        os.close(write_end)
        children.append((pid, read_end))
    taken: list[int] = []
    results = check(_pulled(queue_read, batches, taken))
    os.close(queue_read)
    done = set(taken)
    failed = False
    for pid, read_end in children:
        outcome: tuple[list[int], list[Result]] | None = _collect(pid, read_end)
        if outcome is None:
            failed = True
            continue
        child_taken, child_results = outcome
        done.update(child_taken)
        results.extend(child_results)
    if failed:
        print("spikelint: a worker process stopped early; checking its files in-process", file=sys.stderr)
        left = [index for number, batch in enumerate(batches) if number not in done for index in batch]
        results.extend(check(left))
    return results


def _pulled(queue: int, batches: list[list[int]], taken: list[int]) -> Iterator[int]:
    """The indices of every batch this process takes from ``queue``, noted in ``taken``."""
    while True:
        record = os.read(queue, 4)
        if len(record) < 4:
            return
        number = int.from_bytes(record, "little")
        taken.append(number)
        yield from batches[number]


def _child(check: Callable[[Iterable[int]], list[Result]], batches: list[list[int]], queue: int,
           write_end: int) -> None:
    """Check the batches this child takes, send them and the pickled results down the pipe, and
    leave without running this process's exit handlers (they belong to the parent)."""
    import pickle

    status = 1
    try:
        taken: list[int] = []
        results = check(_pulled(queue, batches, taken))
        payload = pickle.dumps((taken, results), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as stream:
            stream.write(payload)
        status = 0
    except BaseException:  # noqa: BLE001 - the parent checks the batches again and reports the error
        pass
    finally:
        os._exit(status)


def _collect(pid: int, read_end: int) -> tuple[list[int], list[Result]] | None:
    """A child's batches and results, or ``None`` when it did not finish."""
    import pickle

    with os.fdopen(read_end, "rb") as stream:
        payload = stream.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not payload:
        return None
    try:
        taken, results = pickle.loads(payload)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None
    return list(taken), list(results)


def _pooled(check: Callable[[Iterable[int]], list[Result]], shares: list[list[int]]) -> list[Result]:
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing costs ~15 ms to import

    try:
        with ProcessPoolExecutor(max_workers=len(shares)) as pool:
            futures = [pool.submit(check, share) for share in shares]
            return [result for future in futures for result in future.result()]
    except (OSError, RuntimeError) as error:  # no process support here: do it in-process
        print(f"spikelint: worker processes unavailable ({error}); checking in-process", file=sys.stderr)
        return [result for share in shares for result in check(share)]
