"""Forked training processes, one process group per run, and the parent's view of them.

The parent imports torch once and forks every training process before any CUDA
initialisation, so a child starts in milliseconds instead of the seconds a fresh
interpreter with ``import torch`` and deterministic mode costs. Each run's ranks share one
process group, so a kill reaches the whole group at once.
"""

from __future__ import annotations

import functools
import gc
import io
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterator

from spikelint.smoke.harness.protocol import EXIT_PREEMPTED
from spikelint.smoke.harness.protocol import RELEASE
from spikelint.smoke.harness.protocol import ChildChannel
from spikelint.smoke.harness.protocol import LineBuffer

EXIT_INTERNAL = 70
POLL_S = 0.1
EXIT_POLL_S = 0.002
PEER_FAILURE_GRACE_S = 3.0

ChildTarget = Callable[[int, ChildChannel, float], int]


@dataclass
class RankProcess:
    rank: int
    pid: int
    report_fd: int
    control_fd: int
    forked_at: float
    buffer: LineBuffer = field(default_factory=LineBuffer)
    messages: list[dict[str, Any]] = field(default_factory=list)
    pipe_closed: bool = False
    exit_code: int | None = None  # negative: killed by that signal
    exited_at: float | None = None


def _redirect_output(log_path: Path) -> None:
    """Everything the child (and the user's job) prints goes to its own log file."""
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    stream = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stdout = stream
    sys.stderr = stream


def _child(
    rank: int,
    target: ChildTarget,
    log_path: Path,
    report_fd: int,
    control_fd: int,
    close_fds: list[int],
    group_leader: int,
    forked_at: float,
) -> None:
    """Runs in the forked process and never returns into the caller's code."""
    code = EXIT_INTERNAL
    try:
        try:
            os.setpgid(0, group_leader)
        except OSError:
            pass
        for descriptor in close_fds:
            try:
                os.close(descriptor)
            except OSError:
                pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _redirect_output(log_path)
        code = target(rank, ChildChannel(report_fd, control_fd, rank), forked_at)
    except BaseException:  # noqa: BLE001 - the child must end here whatever happened
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code)


class ProcessGroup:
    """The ranks of one run (reference, interrupted or resumed) as the parent sees them."""

    def __init__(self, name: str, ranks: list[RankProcess], group_id: int) -> None:
        self.name = name
        self.ranks = ranks
        self.group_id = group_id

    def messages(self, message_type: str) -> list[dict[str, Any]]:
        return [m for rank in self.ranks for m in rank.messages if m.get("type") == message_type]

    def rank_messages(self, rank: int, message_type: str) -> list[dict[str, Any]]:
        return [m for m in self.ranks[rank].messages if m.get("type") == message_type]

    def every_rank_sent(self, message_type: str) -> bool:
        return all(any(m.get("type") == message_type for m in rank.messages) for rank in self.ranks)

    def exited(self) -> bool:
        return all(rank.exit_code is not None for rank in self.ranks)

    def poll(self, timeout: float) -> list[dict[str, Any]]:
        """Read whatever the ranks have written within ``timeout``; reap those that ended."""
        open_fds = {rank.report_fd: rank for rank in self.ranks if not rank.pipe_closed}
        fresh: list[dict[str, Any]] = []
        if open_fds:
            readable, _, _ = select.select(list(open_fds), [], [], timeout)
            for descriptor in readable:
                rank = open_fds[descriptor]
                chunk = os.read(descriptor, 1 << 16)
                if not chunk:
                    rank.pipe_closed = True
                    os.close(descriptor)
                    continue
                received = rank.buffer.feed(chunk)
                stamp = time.monotonic()
                for message in received:
                    message.setdefault("rank", rank.rank)
                    message["received_at"] = stamp
                rank.messages.extend(received)
                fresh.extend(received)
        elif timeout > 0:  # every pipe is closed: the processes are exiting, reap them promptly
            time.sleep(min(timeout, EXIT_POLL_S))
        self._reap(block=False)
        return fresh

    def _reap(self, block: bool) -> None:
        for rank in self.ranks:
            if rank.exit_code is not None:
                continue
            try:
                pid, status = os.waitpid(rank.pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                rank.exit_code, rank.exited_at = EXIT_INTERNAL, time.monotonic()
                continue
            if pid:
                rank.exit_code = os.waitstatus_to_exitcode(status)
                rank.exited_at = time.monotonic()

    def _drain(self) -> None:
        """Messages written just before exit (a job's own subprocesses may keep a pipe open)."""
        while True:
            open_fds = [rank.report_fd for rank in self.ranks if not rank.pipe_closed]
            if not open_fds or not select.select(open_fds, [], [], 0)[0]:
                return
            self.poll(0.0)

    def wait_until(
        self,
        condition: Callable[[], bool],
        deadline: float,
        tick: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> bool:
        """Serve the pipes until ``condition`` holds, every rank has ended, or the deadline passes.

        When one rank dies, the others would wait forever in a collective: they are killed
        after a short grace period.
        """
        failed_since: float | None = None
        while True:
            if condition():
                return True
            if self.exited():
                self._drain()
                return condition()
            now = time.monotonic()
            if now >= deadline:
                return False
            fresh = self.poll(min(POLL_S, deadline - now))
            if tick is not None:
                tick(fresh)
            if failed_since is None and any(rank.exit_code not in (None, 0, EXIT_PREEMPTED) for rank in self.ranks):
                failed_since = time.monotonic()
            if failed_since is not None and time.monotonic() - failed_since > PEER_FAILURE_GRACE_S:
                self.send_signal(signal.SIGKILL)

    def send_signal(self, signum: int) -> None:
        """Signal the whole group (only while one of its processes is still unreaped)."""
        if self.exited():
            return
        try:
            os.killpg(self.group_id, signum)
        except ProcessLookupError:
            pass

    def signal_ranks(self, signum: int) -> None:
        """Signal each training process only, as Kubernetes signals a container's main process.

        DataLoader workers and other helpers of the job are left to their parent, which must
        shut them down itself; signalling the group would kill them inside the preemption
        checkpoint.
        """
        for rank in self.ranks:
            if rank.exit_code is None:
                try:
                    os.kill(rank.pid, signum)
                except ProcessLookupError:
                    pass

    def release(self) -> None:
        """Tell held or paused ranks to go on."""
        for rank in self.ranks:
            try:
                os.write(rank.control_fd, RELEASE)
            except OSError:
                pass

    def reap(self, deadline: float) -> None:
        """Wait for every rank to end; SIGKILL the group at the deadline."""
        while not self.exited():
            now = time.monotonic()
            if now >= deadline:
                self.send_signal(signal.SIGKILL)
                self._reap(block=True)
                break
            self.poll(min(POLL_S, deadline - now))
        self._drain()

    def close(self) -> None:
        """Kill what is left and release every descriptor (also on errors in the parent)."""
        if not self.exited():
            self.send_signal(signal.SIGKILL)
            self._reap(block=True)
        for rank in self.ranks:
            for descriptor in ((rank.report_fd,) if not rank.pipe_closed else ()) + (rank.control_fd,):
                try:
                    os.close(descriptor)
                except OSError:
                    pass
            rank.pipe_closed = True


@contextmanager
def frozen_heap(keep_frozen: bool) -> Iterator[None]:
    """Move every object that exists now (torch's whole module graph) out of the garbage collector's reach.

    Forked children then never traverse, and so never copy, the parent's heap when they
    collect; the parent's objects go back under the collector at the end, unless the process
    exits next, where skipping that work saves seconds of interpreter shutdown.
    """
    gc.freeze()
    try:
        yield
    finally:
        if not keep_frozen:
            gc.unfreeze()


def launch_exec(
    name: str, world_size: int, command_for: Callable[[int, int, int, float], list[str]],
    log_path_for: Callable[[int], Path], environment: dict[str, str],
) -> ProcessGroup:
    """Start ``world_size`` ranks as fresh interpreters in a new process group led by rank 0.

    ``command_for(rank, report_fd, control_fd, started)`` is the argument vector; the two
    pipe ends are passed to the new process under the same numbers.
    """
    ranks: list[RankProcess] = []
    group_leader = 0
    for rank in range(world_size):
        report_read, report_write = os.pipe()
        control_read, control_write = os.pipe()
        started = time.monotonic()
        try:
            with open(log_path_for(rank), "ab") as log:
                process = subprocess.Popen(
                    command_for(rank, report_write, control_read, started),
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(report_write, control_read),
                    preexec_fn=functools.partial(os.setpgid, 0, group_leader), env=environment,
                )
        finally:
            os.close(report_write)
            os.close(control_read)
        if rank == 0:
            group_leader = process.pid
        ranks.append(RankProcess(rank, process.pid, report_read, control_write, started))
    return ProcessGroup(name, ranks, group_leader)


def launch(name: str, world_size: int, target: ChildTarget, log_path_for: Callable[[int], Path]) -> ProcessGroup:
    """Fork ``world_size`` ranks of one run into a new process group led by rank 0."""
    ranks: list[RankProcess] = []
    parent_fds: list[int] = []
    group_leader = 0
    for rank in range(world_size):
        report_read, report_write = os.pipe()
        control_read, control_write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        forked_at = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(
                rank,
                target,
                log_path_for(rank),
                report_write,
                control_read,
                parent_fds + [report_read, control_write],
                group_leader,
                forked_at,
            )
        os.close(report_write)
        os.close(control_read)
        if rank == 0:
            group_leader = pid
        try:
            os.setpgid(pid, group_leader)
        except OSError:  # the child already moved itself
            pass
        ranks.append(RankProcess(rank, pid, report_read, control_write, forked_at))
        parent_fds += [report_read, control_write]
    return ProcessGroup(name, ranks, group_leader)
