"""Interrupting a training run as a variant says: SIGKILL after a step or half-way through a
checkpoint write, SIGTERM with the scheduler's grace period, and a torn newest checkpoint as a
non-atomic writer would leave it."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from spikelint.smoke.harness import measure
from spikelint.smoke.harness.analysis import Interruption
from spikelint.smoke.result import describe_exit
from spikelint.smoke.harness.analysis import record_of
from spikelint.smoke.harness.checkpoint import list_checkpoints
from spikelint.smoke.harness.child import ChildConfig
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.plan import VariantSpec
from spikelint.smoke.harness.processes import ProcessGroup
from spikelint.smoke.harness.protocol import CHECKPOINT
from spikelint.smoke.harness.protocol import ERROR
from spikelint.smoke.harness.protocol import EXIT_PREEMPTED
from spikelint.smoke.harness.protocol import HANDLER
from spikelint.smoke.harness.protocol import HOLD
from spikelint.smoke.harness.protocol import PREEMPTED
from spikelint.smoke.harness.protocol import WRITING
from spikelint.smoke.runfolder import Journal
from spikelint.smoke.harness.supervise import Supervisor


def steps_list(steps: list[int]) -> str:
    return ", ".join(str(step) for step in steps) if steps else "none"


class Interrupter:
    """Runs the interrupted half of each variant; the resume is the caller's."""

    def __init__(self, processes: Supervisor, options: SmokeOptions, checkpoint_root: Path, journal: Journal) -> None:
        self.processes = processes
        self.options = options
        self.checkpoint_root = checkpoint_root
        self.journal = journal

    def interrupt(self, spec: VariantSpec, config: ChildConfig) -> Interruption:
        """Start the run that gets interrupted (``config``) and interrupt it as ``spec`` says."""
        interruption = Interruption(spec)
        assert self.checkpoint_root is not None
        (self.checkpoint_root / spec.name).mkdir(parents=True, exist_ok=True)
        group = self.processes.start(config)
        timed_out = False
        try:
            if spec.pause_in_write_at_step is not None:
                self.journal.progress(f"{spec.name}: training; will stop half-way through checkpoint {spec.pause_in_write_at_step}")
                reached = self.processes.wait(group, lambda: group.every_rank_sent(WRITING))
                point: int | None = spec.pause_in_write_at_step
            else:
                self.journal.progress(f"{spec.name}: training until step {spec.hold_at_step}")
                reached = self.processes.wait(group, lambda: group.every_rank_sent(HOLD))
                point = spec.hold_at_step
            timed_out = not reached and time.monotonic() >= self.processes.deadline
            interruption.checkpoints_before = sorted(
                {int(m["step"]) for m in group.rank_messages(0, CHECKPOINT)}
            )
            if not reached:
                record = record_of(group, timed_out)
                interruption.failure = (
                    f"the run to be interrupted never reached step {point}: {record.failure_reason()}"
                    + self.processes.log_hint(group)
                )
            elif spec.signal == "SIGTERM":
                self.preempt(group, interruption)
            else:
                group.send_signal(signal.SIGKILL)
                interruption.interrupted_at_step = point
                where = "half-way through writing its checkpoint" if spec.pause_in_write_at_step else "after step"
                self.journal.event("child_killed", variant=spec.name, signal="SIGKILL", step=point,
                                   during_checkpoint_write=spec.pause_in_write_at_step is not None)
                self.journal.progress(
                    f"{spec.name}: SIGKILL to the process group {where} {point} "
                    f"(durable checkpoints: {steps_list(interruption.checkpoints_before)})"
                )
                if not interruption.checkpoints_before:
                    interruption.failure = "no checkpoint was written before the kill"
        finally:
            group.close()
        interruption.record = self.processes.finish_group(group, timed_out)
        if spec.truncate_newest and interruption.failure is None:
            self.truncate_newest(spec, interruption)
        return interruption

    def preempt(self, group: ProcessGroup, interruption: Interruption) -> None:
        """SIGTERM as a scheduler sends it; the process must checkpoint and exit 143 within the grace period."""
        spec = interruption.spec
        signalled = time.monotonic()
        if self.options.sigterm_to == "group":
            group.send_signal(signal.SIGTERM)
            target = "the process group"
        else:
            group.signal_ranks(signal.SIGTERM)
            target = "the training process" if len(group.ranks) == 1 else "each training process"
        group.release()
        interruption.interrupted_at_step = spec.hold_at_step
        self.journal.event("child_signalled", variant=spec.name, signal="SIGTERM", step=spec.hold_at_step,
                           to=self.options.sigterm_to)
        self.journal.progress(f"{spec.name}: SIGTERM to {target} after step {spec.hold_at_step}")
        grace_deadline = min(self.processes.deadline, signalled + measure.SIGTERM_GRACE_PERIOD_S)
        exited = group.wait_until(group.exited, grace_deadline, self.processes.tick(group))
        if not exited:
            group.send_signal(signal.SIGKILL)
            interruption.failure = (
                f"the process did not exit within the {measure.SIGTERM_GRACE_PERIOD_S:g} s grace period after "
                "SIGTERM (a scheduler would SIGKILL it now)"
            )
            return
        ended = [rank.exited_at for rank in group.ranks if rank.exited_at is not None]
        interruption.sigterm_exit_s = max(ended) - signalled if ended else None
        preempted = group.messages(PREEMPTED)
        interruption.sigterm_write_s = max((float(m.get("write_s") or 0.0) for m in preempted), default=None)
        codes = [rank.exit_code for rank in group.ranks]
        if any(code != EXIT_PREEMPTED for code in codes) or len(preempted) < len(group.ranks):
            endings = ", ".join(describe_exit(code) for code in codes)
            reason = f"after SIGTERM (to {target}) the process ended with {endings} instead of a checkpoint and exit {EXIT_PREEMPTED}"
            handler = group.messages(HANDLER)
            if handler:
                reason += (
                    f"; the job replaced the SIGTERM handler with {handler[0].get('handler')} (in "
                    f"{handler[0].get('stage')}), so its own code ran on SIGTERM: let the handler only set a flag, "
                    f"then checkpoint at the next step boundary and exit {EXIT_PREEMPTED}"
                )
            errors = group.messages(ERROR)
            if errors:
                reason += f"; the process reported: {errors[0].get('message')} (in {errors[0].get('stage')})"
                if "DataLoader worker" in str(errors[0].get("message")):
                    reason += (
                        "; the DataLoader workers got SIGTERM too and died inside the preemption checkpoint: a "
                        "scheduler signals only the container's main process (--sigterm-to pid); where the whole "
                        "group is signalled, ignore SIGTERM in the workers (worker_init_fn: "
                        "signal.signal(signal.SIGTERM, signal.SIG_IGN))"
                    )
            if any(code == 1 for code in codes) and not errors:
                reason += "; exit 1 is Python's exit on an uncaught exception"
            interruption.failure = reason + self.processes.log_hint(group)
            return
        checkpoint_step = int(preempted[0]["step"])
        interruption.checkpoints_before = sorted(set(interruption.checkpoints_before) | {checkpoint_step})
        self.journal.event("child_preempted", variant=spec.name, step=checkpoint_step,
                           exit_s=interruption.sigterm_exit_s, write_s=interruption.sigterm_write_s)
        self.journal.progress(
            f"{spec.name}: checkpoint at the step {checkpoint_step} boundary, exit {EXIT_PREEMPTED} "
            f"{interruption.sigterm_exit_s:.3f} s after SIGTERM"
        )

    def truncate_newest(self, spec: VariantSpec, interruption: Interruption) -> None:
        """A torn, non-atomic write as another tool would leave it: the loader must refuse it."""
        assert self.checkpoint_root is not None
        newest = list_checkpoints(self.checkpoint_root / spec.name, 0)
        if not newest:
            interruption.failure = "no checkpoint on disk to truncate"
            return
        target = newest[0]
        try:
            if not target.path.is_file() or target.path.is_symlink():
                interruption.failure = f"the newest checkpoint {target.path.name} is not a regular file; not truncated"
                return
            size = target.path.stat().st_size
            os.truncate(target.path, size // 2)
        except OSError as error:
            interruption.failure = f"could not truncate the newest checkpoint {target.path.name}: {error.strerror}"
            return
        interruption.damaged_steps.append(target.step)
        self.journal.event("checkpoint_damaged", variant=spec.name, path=str(target.path), step=target.step,
                           size_bytes=size, truncated_to=size // 2)
        self.journal.progress(f"{spec.name}: truncated the newest checkpoint {target.path.name} to {size // 2} of {size} bytes")
