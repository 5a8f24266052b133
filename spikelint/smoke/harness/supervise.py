"""Watching a smoke run's training processes: starting each run (forked or in a fresh
interpreter), waiting on what its ranks report, a heartbeat while one is slow, and the record
of how it ended.  Knows nothing of variants or verdicts."""

from __future__ import annotations

import errno
import os
import sys
import time
from pathlib import Path
from typing import Any

from spikelint.smoke.harness.analysis import RunRecord
from spikelint.smoke.result import describe_exit
from spikelint.smoke.harness.analysis import record_of
from spikelint.smoke.harness.child import ChildConfig
from spikelint.smoke.harness.child import child_target
from spikelint.smoke.harness.child import config_to_json
from spikelint.smoke.harness.determinism import nondeterministic_op
from spikelint.smoke.harness.determinism import nondeterministic_op_error
from spikelint.smoke.gpu import NoSampler
from spikelint.smoke.gpu import UtilisationSampler
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.preflight import DeviceChoice
from spikelint.smoke.harness.processes import ProcessGroup
from spikelint.smoke.harness.processes import launch
from spikelint.smoke.harness.processes import launch_exec
from spikelint.smoke.harness.protocol import CHECKPOINT
from spikelint.smoke.harness.protocol import DONE
from spikelint.smoke.harness.protocol import ERROR
from spikelint.smoke.harness.protocol import HANDLER
from spikelint.smoke.harness.protocol import HOLD
from spikelint.smoke.harness.protocol import NONDETERMINISTIC
from spikelint.smoke.harness.protocol import PREEMPTED
from spikelint.smoke.harness.protocol import READY
from spikelint.smoke.harness.protocol import RESTORED
from spikelint.smoke.harness.protocol import STEP
from spikelint.smoke.harness.protocol import WRITING
from spikelint.smoke.runfolder import Journal
from spikelint.smoke.runfolder import RunFolder
from spikelint.smoke.runfolder import write_json_atomically

HEARTBEAT_S = 5.0
LOG_TAIL_LINES = 8


class SetupError(Exception):
    """The smoke test cannot run here (exit 2), raised once a run folder exists."""


def no_space(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines a process wrote (its stderr and stdout), for a failure message."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 16384))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept)


class Supervisor:
    """Starts and watches one smoke run's processes; keeps every run's record for the report."""

    def __init__(self, options: SmokeOptions, steps: int, torch: Any, device: DeviceChoice, folder: RunFolder,
                 journal: Journal, deadline: float) -> None:
        self.options = options
        self.steps = steps
        self.torch = torch
        self.device = device
        self.folder = folder
        self.journal = journal
        self.deadline = deadline
        self.sampler: UtilisationSampler = NoSampler()
        self.records: list[RunRecord] = []
        self.exec_labels: set[str] = set()  # runs started in a fresh interpreter
        self.last_heartbeat = time.monotonic()
        self.nondeterministic_ops: dict[str, str] = {}  # --warn-only: op -> where it was first seen

    def exec_environment(self, label: str) -> dict[str, str]:
        """The parent's environment, a different string-hash seed, and this spikelint importable."""
        environment = dict(os.environ)
        import spikelint

        package_root = str(Path(spikelint.__file__).resolve().parents[1])  # the folder that holds spikelint/
        paths = [package_root] + [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p]
        environment["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        current = environment.get("PYTHONHASHSEED", "")
        base = int(current) if current.isdigit() else 0
        environment["PYTHONHASHSEED"] = str((base + 1 + len(self.exec_labels)) % 4294967296)
        return environment

    def start(self, config: ChildConfig) -> ProcessGroup:
        if self.device.type == "cuda" and self.torch.cuda.is_initialized():
            raise SetupError("CUDA was initialised in the parent; the training processes could not use it")
        log_for = lambda rank: self.folder.log_for(config.label, rank)  # noqa: E731
        try:
            if config.restart == "exec":
                config_path = self.folder.root / "configs" / f"{config.label}.json"
                config_path.parent.mkdir(exist_ok=True)
                write_json_atomically(config_path, config_to_json(config))
                environment = self.exec_environment(config.label)
                self.exec_labels.add(config.label)

                def command(rank: int, report_fd: int, control_fd: int, started: float) -> list[str]:
                    return [sys.executable, "-m", "spikelint.smoke.harness.execchild", str(config_path), str(rank),
                            str(report_fd), str(control_fd), repr(started)]

                group = launch_exec(config.label, config.world_size, command, log_for, environment)
            else:
                group = launch(config.label, config.world_size, child_target(config), log_for)
        except OSError as error:  # fork or pipe refused: out of processes or descriptors
            if no_space(error):
                raise
            raise SetupError(f"cannot start a training process: {error}") from None
        self.journal.event("process_started", run=config.label, role=config.role, restart=config.restart,
                           pids=[r.pid for r in group.ranks])
        if config.restart == "exec":
            self.journal.progress(f"{config.label}: started in a fresh interpreter (PYTHONHASHSEED "
                                  f"{environment['PYTHONHASHSEED']})")
        return group

    def heartbeat(self, group: ProcessGroup) -> None:
        """A line every few seconds while a run is slow: which run, which stage, which step."""
        now = time.monotonic()
        if now - self.last_heartbeat < HEARTBEAT_S:
            return
        self.last_heartbeat = now
        steps = [int(m["step"]) for m in group.rank_messages(0, STEP)]
        ready = bool(group.rank_messages(0, READY))
        stage = f"step {max(steps)} of {self.steps}" if steps else ("set-up done" if ready else "starting")
        self.journal.progress(f"{group.name}: still running ({stage})")

    def tick(self, group: ProcessGroup) -> Any:
        """Runs on every wake-up of the wait loop: sample the GPU, journal what the children said."""

        def on_messages(fresh: list[dict[str, Any]]) -> None:
            self.sampler.poll()
            self.heartbeat(group)
            for message in fresh:
                kind = message.get("type")
                details = {"run": group.name, "rank": message.get("rank")}
                if kind == READY:
                    self.journal.event("process_ready", **details, start_s=message.get("start_s"))
                elif kind == CHECKPOINT:
                    self.journal.event("checkpoint_written", **details, step=message["step"],
                                       write_s=message["write_s"], size_bytes=message["size_bytes"])
                elif kind == RESTORED:
                    self.journal.event("resumed", **details, from_step=message["step"], checkpoint=message["path"],
                                       refused=message.get("refused"))
                elif kind in (HOLD, WRITING, PREEMPTED, DONE):
                    self.journal.event(f"process_{kind}", **details, step=message.get("step"))
                elif kind == ERROR:
                    self.journal.event("process_error", **details, stage=message.get("stage"),
                                       message=message.get("message"))
                    if message.get("no_space"):
                        raise OSError(errno.ENOSPC, f"{group.name} rank {message.get('rank')}: "
                                      f"{message.get('message')} (in {message.get('stage')})")
                elif kind == HANDLER:
                    self.journal.event("sigterm_handler_replaced", **details, handler=message.get("handler"))
                elif kind == NONDETERMINISTIC:
                    self.note_nondeterministic_op(group.name, message)

        return on_messages

    def note_nondeterministic_op(self, run: str, message: dict[str, Any]) -> None:
        """--warn-only: an op without a deterministic implementation ran; said once per op."""
        op = str(message.get("op"))
        self.journal.event("nondeterministic_op", run=run, rank=message.get("rank"), op=op, stage=message.get("stage"))
        if op not in self.nondeterministic_ops:
            self.nondeterministic_ops[op] = f"{message.get('stage')} of the {run} run"
            self.journal.progress(f"warning: {run}: {op} has no deterministic implementation; run anyway (--warn-only)")

    def refuse_nondeterministic_op(self, group: ProcessGroup, record: RunRecord) -> None:
        """An op that deterministic mode refused ends the whole smoke run as a setup error, with the fix."""
        for error in record.errors:
            op = nondeterministic_op(str(error.get("message") or ""))
            if op is not None:
                where = f"{error.get('stage') or 'set-up'} of the {group.name} run"
                raise SetupError(nondeterministic_op_error(op, where, self.device.type) + f" (see {self.folder.log_for(group.name, 0)})")

    def wait(self, group: ProcessGroup, condition: Any) -> bool:
        return group.wait_until(condition, self.deadline, self.tick(group))

    def finish_group(self, group: ProcessGroup, timed_out: bool = False) -> RunRecord:
        group.reap(min(self.deadline, time.monotonic() + 30))
        group.close()
        record = record_of(group, timed_out=timed_out)
        record.restart = "exec" if group.name in self.exec_labels else "fork"
        self.records.append(record)
        self.journal.event("process_ended", run=group.name, exits=[describe_exit(c) for c in record.exit_codes])
        if not self.options.warn_only:
            self.refuse_nondeterministic_op(group, record)
        return record

    def log_hint(self, group: ProcessGroup) -> str:
        log = self.folder.log_for(group.name, 0)
        tail = log_tail(log)
        return f"; last lines of {log.name}: {tail}" if tail else ""
