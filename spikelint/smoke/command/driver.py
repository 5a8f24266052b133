"""The smoke protocol for ``--cmd``: references, every interruption variant, resumes, comparison.

The parent never imports the job: every run is the team's command in a new process, so each
resume is a real restart. Only the comparison loads torch (for ``torch.save`` files).
"""

from __future__ import annotations

import math
import re
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from typing import Collection
from typing import TextIO

from spikelint.smoke.result import INCOMPLETE
from spikelint.smoke.result import VERIFIED
from spikelint.smoke.result import overall_verdict
from spikelint.smoke.result import VariantResult
from spikelint.smoke.command.process import CommandError
from spikelint.smoke.command.process import sigterm_ends_runs
from spikelint.smoke.command.process import CommandRun
from spikelint.smoke.command.process import expand
from spikelint.smoke.command.process import incomplete_steps_in
from spikelint.smoke.command.process import run_command
from spikelint.smoke.command.process import shift_steps
from spikelint.smoke.command.process import snapshot
from spikelint.smoke.command.process import partial_files
from spikelint.smoke.command.process import written_since
from spikelint.smoke.command.steplines import MAX_EXAMPLES
from spikelint.smoke.command.files import Damage
from spikelint.smoke.command.files import access_times
from spikelint.smoke.command.files import files_read
from spikelint.smoke.command.files import checkpoint_epoch_length
from spikelint.smoke.command.files import checkpoint_steps
from spikelint.smoke.command.files import is_state_file
from spikelint.smoke.command.files import step_of
from spikelint.smoke.command.files import truncate_newest
from spikelint.smoke.command.verdict import PREEMPTION_FIX
from spikelint.smoke.command.verdict import Runs
from spikelint.smoke.command.verdict import describe
from spikelint.smoke.command.reference import ended_badly
from spikelint.smoke.command.reference import unusable
from spikelint.smoke.command.budget import MAX_EPOCH_STEPS
from spikelint.smoke.command.budget import MIN_AIMED_STEP_S
from spikelint.smoke.command.budget import RUNS_PER_PLAN
from spikelint.smoke.command.budget import crosses
from spikelint.smoke.command.budget import median_step_s
from spikelint.smoke.command.budget import step_estimate
from spikelint.smoke.command.disagree import data_order_signature
from spikelint.smoke.command.disagree import why_disagree
from spikelint.smoke.command.verdict import empty_variant
from spikelint.smoke.command.verdict import judge
from spikelint.smoke.command.verdict import losses_by_step
from spikelint.smoke.plan import KILL_DURING_WRITE
from spikelint.smoke.plan import SIGTERM_MID_STEP
from spikelint.smoke.plan import SIGTERM_PREEMPTION
from spikelint.smoke.plan import TRUNCATED_NEWEST
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.plan import SmokePlan
from spikelint.smoke.plan import VariantSpec
from spikelint.smoke.plan import make_plan
from spikelint.smoke.plan import successive_variant
from spikelint.smoke.command.steplines import epoch_length
from spikelint.smoke.report.summary import base_summary
from spikelint.smoke.report.page import Curve
from spikelint.smoke.report.page import losses
from spikelint.smoke.report.page import render_page
from spikelint.smoke.report.summary import render_json
from spikelint.smoke.report.summary import render_text
from spikelint.smoke.report.summary import setup_error_summary
from spikelint.smoke.runfolder import Journal
from spikelint.smoke.runfolder import create_run_folder
from spikelint.smoke.runfolder import new_run_id
from spikelint.smoke.runfolder import write_json_atomically


def on_disk_text(folder: Path, steps: list[int]) -> str:
    """``8, 12`` for numbered checkpoints; the file names of a job that keeps one unnumbered file
    (nanoGPT's ``ckpt.pt``, rewritten in place); ``none``."""
    if steps:
        return ", ".join(map(str, steps))
    names = [str(name) for name in snapshot(folder) if is_state_file(name)]
    return ", ".join(names[:4]) + (" …" if len(names) > 4 else "") if names else "none"


def first_resume_step(step_lines: Collection[int], by_checkpoints: bool, on_disk: list[int], planned: int) -> int:
    """Where a resumed run started: the step before its first step line; for a job whose progress is read
    from its checkpoints, the newest checkpoint on disk when it started (what its resume loads: a kill a
    loaded machine delivered a save late leaves a later one than planned); else the planned resume step."""
    if step_lines and not by_checkpoints:
        return min(step_lines) - 1
    return on_disk[-1] if on_disk else planned


class ReferenceFailed(Exception):
    """The uninterrupted command failed: nothing can be compared against it."""


class CommandSmoke:
    """Every variant of the plan on the team's command, each run a new process.

    ``kill-during-write`` is not run: an opaque command cannot be paused inside its write, and
    a kill timed by watching its folder would land at a different point each time. What such a
    kill leaves is either a torn file under the final name (a writer without temporary file
    and rename), which ``truncated-newest`` makes on purpose, or an unfinished temporary file,
    which only the job's own loader knows to ignore.

    ``kill-off-period`` runs the command with an odd ``{every}`` and against its own
    uninterrupted run with that ``{every}``: the resumed run's files are then compared with
    files of the same names, written on the same schedule; a reference with another interval
    would compare checkpoints that were never written at the same steps.
    """

    def __init__(self, options: SmokeOptions, plan: SmokePlan, root: Path, journal: Journal) -> None:
        assert options.cmd is not None
        self.options = options
        self.plan = plan
        self.root = root
        self.journal = journal
        self.deadline = time.monotonic() + options.timeout
        self.progress = re.compile(options.progress_regex)
        self.loss = re.compile(options.loss_regex)
        self.references: dict[int, tuple[CommandRun, Path]] = {}
        self.not_applicable: list[dict[str, str]] = []
        self.epoch_length: int | None = None
        self.has_epochs = False  # the job shows epochs: --steps-per-epoch, epoch= on its lines, or in its checkpoints
        self.step_offset: int | None = None  # 1 for a job whose first step line is step 0, found by the first run
        self.by_checkpoints = False  # the job prints no step lines: its progress is the checkpoints it writes
        self.curves: list[Curve] = []  # each variant's losses, for report.html
        self.reference_losses: dict[int, float] = {}
        self.epoch_probed_to: int | None = None  # the steps a probe ran to find the epoch length
        self.crossed: bool | None = None
        (root / "checkpoints").mkdir(exist_ok=True)

    def argv(self, folder: Path, resume: bool, every: int, steps: int | None = None) -> list[str]:
        assert self.options.cmd is not None
        on_disk = checkpoint_steps(folder) if resume else []
        values = {"steps": str(steps or self.plan.steps), "every": str(every), "ckpt": str(folder),
                  "seed": str(self.options.seed), "resume": self.options.resume_arg if resume else "",
                  "step": str(on_disk[-1]) if on_disk else ""}
        return expand(self.options.cmd, values)

    def heartbeat(self, run: CommandRun, silent_s: float) -> None:
        """A line every few seconds while a command runs: which run, which step, how long it has been quiet."""
        last = run.last_step()
        stage = f"step {last} of {self.plan.steps}" if last is not None else "no step line yet"
        if run.signalled_at_step is not None:
            stage += f", signalled after step {run.signalled_at_step}"
        quiet = f"; no output for {silent_s:.0f} s" if silent_s >= 1 else ""
        self.journal.progress(f"{run.label}: still running ({stage}{quiet})")

    def run(self, label: str, folder: Path, resume: bool, every: int, stop_at: int | None = None,
            signum: int = signal.SIGKILL, delay_s: float = 0.0, steps: int | None = None,
            read_epochs: bool = False) -> CommandRun:
        folder.mkdir(parents=True, exist_ok=True)
        run = CommandRun(label, self.argv(folder, resume, every, steps), self.root / "logs" / f"{label}.log")
        self.journal.progress(f"{label}: {' '.join(run.argv)}")
        run_command(run, self.progress, self.loss, self.deadline, stop_at, signum,
                    to_group=self.options.sigterm_to == "group" and signum == signal.SIGTERM,
                    grace_s=self.options.grace_period, heartbeat=self.heartbeat, signal_delay_s=delay_s,
                    step_offset=self.step_offset or 0, watch=folder, steps_from_checkpoints=self.by_checkpoints,
                    read_epochs=read_epochs,
                    reference_folder=self.references[every][1] if every in self.references else None)
        if self.step_offset is None and run.steps:
            # the first uninterrupted run tells how the job counts: its first step line is step 1, or 0
            # (nanoGPT's ``iter 0`` after one step): from then on step N means N steps done
            self.step_offset = 1 if min(run.steps) == 0 else 0
            if self.step_offset:
                shift_steps(run, self.step_offset)
                self.journal.progress(f"{label}: the job counts its steps from 0 (its first step line says "
                                      "step 0): step N is read as N + 1 steps done")
        self.journal.event("command_ended", run=label, exit_code=run.exit_code, steps=len(run.steps),
                           signalled_at_step=run.signalled_at_step, wall_s=round(run.wall_s, 3),
                           grace_expired=run.grace_expired, timed_out=run.timed_out)
        return run

    def reference(self, every: int) -> tuple[CommandRun, Path]:
        """The uninterrupted command with this ``{every}`` (run once per interval)."""
        if every in self.references:
            return self.references[every]
        label = self.fresh_label("reference" if every == self.plan.checkpoint_every else f"reference-every-{every}")
        folder = self.root / "checkpoints" / label
        reference = self.run(label, folder, False, every, read_epochs=True)
        where = "" if label == "reference" else f" (with {{every}} = {every})"
        problem = ended_badly(reference, where, self.options.timeout)
        if problem is not None:
            raise ReferenceFailed(problem)
        if not reference.steps and reference.checkpoints_seen:
            # a stock script that prints no step (the Trainer's {'loss': …} lines, a bar): its checkpoints are its steps
            self.by_checkpoints = True
            reference.steps = {step: "" for step in reference.checkpoints_seen}
            reference.step_s = dict(reference.checkpoints_seen)
            self.journal.progress(f"{label}: no line matched --progress-regex; progress is read from the checkpoints "
                                  f"it wrote (steps {', '.join(map(str, sorted(reference.steps)))}): each signal goes "
                                  "out half a checkpoint period after the checkpoint before the planned step")
        problem = unusable(reference, where, folder, self.options.progress_regex)
        if problem is not None:
            raise ReferenceFailed(problem)
        self.references[every] = reference, folder
        return reference, folder

    def fresh_label(self, label: str) -> str:
        """A run's name whose folder does not exist yet: a reference run again with a longer plan gets a
        new folder, so a job that resumes by itself from its folder (autoresume, ``ckpt_path="last"``)
        never finds an older reference's checkpoints."""
        taken = self.root / "checkpoints"
        if not (taken / label).exists():
            return label
        return next(f"{label}-{n}" for n in range(2, 10_000) if not (taken / f"{label}-{n}").exists())

    def variant(self, spec: VariantSpec, reaimed: bool = False) -> VariantResult:
        every = spec.checkpoint_every or self.plan.checkpoint_every
        result = empty_variant(spec)
        try:
            reference, reference_folder = self.reference(every)
        except ReferenceFailed as error:
            result.message = str(error)
            return result
        folder = self.root / "checkpoints" / self.fresh_label(spec.name)
        aimed_between = spec.signal == "SIGKILL" and not spec.truncate_newest and not self.by_checkpoints and not reaimed
        signum = signal.SIGTERM if spec.signal == "SIGTERM" else signal.SIGKILL
        step_s = median_step_s(reference)
        delay = step_s / 2 if spec.name == SIGTERM_MID_STEP and step_s is not None else 0.0
        hold_at, again_at = spec.hold_at_step, spec.again_at_step
        if self.by_checkpoints and hold_at is not None:
            # steps are checkpoints here: signal after the checkpoint the resume is meant to start from (the one
            # before the planned step for a torn newest and SIGTERM), half a period on (three quarters for
            # sigterm-mid-step), so the kill lands between two checkpoints
            plain_kill = spec.signal == "SIGKILL" and not spec.truncate_newest and again_at is None
            hold_at = spec.expected_resume_step if plain_kill else max(every, hold_at // every * every)
            again_at = again_at // every * every if again_at is not None else None
            delay = (step_s or 0.0) * (0.75 if spec.name == SIGTERM_MID_STEP else 0.5)
        interrupted = self.run(f"{folder.name}.interrupted", folder, False, every, hold_at, signum, delay)
        result.interrupted_exit = [describe(interrupted.exit_code)]
        result.interrupted_at_step = interrupted.signalled_at_step
        if spec.signal == "SIGTERM":
            result.sigterm = {"checkpoint_write_s": None, "signal_to_exit_s": interrupted.signal_to_exit_s}
        if interrupted.signalled_at_step is None:
            reached = (f"writing the checkpoint of step {hold_at}" if self.by_checkpoints
                       else f"printing step {spec.hold_at_step}")
            result.message = f"the command ended ({describe(interrupted.exit_code)}) before {reached}"
            if interrupted.exit_code == 0:  # it finished: the plan asked for a step it never reaches, nothing failed
                result.verdict = INCOMPLETE
                result.message += ("; no signal was sent, so this variant tested nothing: give it more --steps, or a "
                                   "--checkpoint-every the job saves at")
            result.message += f"; last output: {interrupted.tail()}"
            return result
        if interrupted.grace_expired:
            result.message = (
                f"the command did not exit within the {self.options.grace_period:g} s grace period after SIGTERM "
                f"(sent {interrupted.signal_point()}), "
                "so it was SIGKILLed as Kubernetes does after terminationGracePeriodSeconds: it ignores SIGTERM, "
                f"or its preemption checkpoint takes too long; {PREEMPTION_FIX}; last output: {interrupted.tail()}")
            return result
        if interrupted.exit_code == 0 and (interrupted.last_step() or 0) >= self.plan.steps:
            if spec.signal == "SIGTERM" and (interrupted.delivered_at_step or 0) >= self.plan.steps - 1:
                result.verdict = INCOMPLETE
                result.message = (
                    f"the SIGTERM went out {interrupted.signal_point()}, inside the last step, and the command "
                    "finished and exited 0: nothing was left to preempt; give it more --steps")
            elif spec.signal == "SIGTERM":
                result.message = (
                    f"after SIGTERM (sent {interrupted.signal_point()}) the command went on to step "
                    f"{interrupted.last_step()} and exited 0: it ignores SIGTERM, and a scheduler would SIGKILL it "
                    f"after the grace period; {PREEMPTION_FIX}")
            else:
                result.verdict = INCOMPLETE
                result.message = (
                    f"the command finished (step {interrupted.last_step()}) before the SIGKILL sent after step "
                    f"{interrupted.signalled_at_step} landed: this variant tested nothing; give it more --steps")
            return result
        late = self.torn_by_kill(folder, reference_folder, hold_at) if aimed_between else None
        again = self.reaim(spec, interrupted, late) if late is not None else None
        if again is not None:
            return again
        interrupted_from = 0
        if again_at is not None:
            loadable = checkpoint_steps(folder)  # what the first resume loads: a kill delivered late left a later one
            self.journal.progress(f"{spec.name}: SIGKILL to the command {interrupted.signal_point()} (checkpoints on "
                                  f"disk: {on_disk_text(folder, loadable)}); resuming it to kill it again")
            first = self.run(f"{folder.name}.resumed-first", folder, True, every, again_at, signal.SIGKILL, delay)
            if first.signalled_at_step is None or first.exit_code == 0:
                result.message = (f"the first resumed command ended ({describe(first.exit_code)}) before the SIGKILL "
                                  f"planned after step {spec.again_at_step} landed; last output: {first.tail()}")
                return result
            interrupted_from = first_resume_step(first.steps, self.by_checkpoints, loadable,
                                                 (spec.hold_at_step or 0) // every * every)
            result.notes = [f"SIGKILL {interrupted.signal_point()}; the resumed run SIGKILLed again "
                            f"{first.signal_point()}; resumed a second time"]
            late = self.torn_by_kill(folder, reference_folder, again_at) if aimed_between else None
            again = self.reaim(spec, first, late) if late is not None else None
            if again is not None:
                return again
            interrupted = first
        on_disk = checkpoint_steps(folder)
        result.checkpoints_before_interruption = on_disk
        whom = "the resumed command" if interrupted_from else "the command"
        self.journal.progress(f"{spec.name}: {spec.signal} to {whom} {interrupted.signal_point()} "
                              f"(checkpoints on disk: {on_disk_text(folder, on_disk)})")
        damage: Damage | None = None
        if spec.truncate_newest:
            torn = truncate_newest(folder, reference_folder)
            if isinstance(torn, str):
                result.message = torn
                return result
            damage = torn
            self.journal.event("checkpoint_damaged", variant=spec.name, path=damage.path, step=damage.step,
                               size_bytes=damage.size_bytes, truncated_to=damage.truncated_to)
            self.journal.progress(f"{spec.name}: truncated the newest checkpoint {damage.path} to "
                                  f"{damage.truncated_to} of {damage.size_bytes} bytes")
        before_resume = snapshot(folder)
        read_before = access_times(folder)
        resumed = self.run(f"{folder.name}.resumed", folder, True, every)
        loaded = files_read(folder, read_before, written_since(folder, before_resume),
                            resumed.load_lines + [mention.text for mention in resumed.mentions])
        if spec.name == SIGTERM_MID_STEP and self.by_checkpoints:
            result.notes = [f"SIGTERM sent {delay * 1000:.1f} ms after checkpoint {interrupted.signalled_at_step} "
                               "appeared, three quarters of the uninterrupted run's checkpoint period (the job prints "
                               "no step lines)"]
        elif spec.name == SIGTERM_MID_STEP:
            aim = (f"SIGTERM sent {delay * 1000:.1f} ms after the step {interrupted.signalled_at_step} line, half the "
                   f"uninterrupted run's median step")
            if step_s is None or step_s < MIN_AIMED_STEP_S:
                aim += ": steps this short cannot be aimed into, so it may have landed between two steps"
            result.notes = [aim]
        runs = Runs(reference, reference_folder, interrupted, resumed, folder, before_resume, damage, every,
                    self.plan.checkpoint_every, self.plan.steps, self.options.resume_arg, loaded, self.by_checkpoints,
                    interrupted_from)
        judged = judge(spec, result, runs, on_disk)
        drawn_reference, drawn_resumed, drawn_interrupted = losses_by_step(runs, judged.resumed_from_step or 0)
        if every == self.plan.checkpoint_every:
            self.reference_losses = losses(drawn_reference)
        self.curves.append(Curve(spec.name, judged.verdict, losses(drawn_interrupted), losses(drawn_resumed),
                                 interrupted.signalled_at_step, judged.resumed_from_step))
        return judged

    @staticmethod
    def torn_by_kill(folder: Path, reference_folder: Path, aimed_at: int | None) -> int | None:
        """The checkpoint a SIGKILL aimed between two of them left half-written (some of its files, or only its
        folder): it reached a job whose steps take milliseconds a step or two late, inside its next save
        (``None``: it landed where it was aimed)."""
        empty = {step for entry in folder.iterdir() if entry.is_dir() and not any(entry.iterdir())
                 and (step := step_of(Path(entry.name))) is not None}
        late = [step for step in incomplete_steps_in(folder, reference_folder) | empty if step > (aimed_at or 0)]
        return max(late) if late else None

    def reaim(self, spec: VariantSpec, missed: CommandRun, torn: int) -> VariantResult:
        """Run a between-checkpoints variant again with its kill right after a checkpoint, once: a kill that
        lands inside a save tests a torn write (``truncated-newest`` does that), not the resume it was meant for.
        A kill aimed right after a checkpoint already (kill-off-period) is sent again with the same aim: the
        lag that carried it into the next save was the loaded machine's."""
        every = spec.checkpoint_every or self.plan.checkpoint_every
        # both kills of the successive variant: the lag that carried one into a save carries the other too
        hold_at = (spec.hold_at_step or 0) // every * every + 1
        again_at = None if spec.again_at_step is None else spec.again_at_step // every * every + 1
        aimed = f"step {hold_at}" if again_at is None else f"steps {hold_at} and {again_at}"
        how = (f"once more with the same aim ({aimed}, right after a checkpoint already)"
               if (hold_at, again_at) == (spec.hold_at_step, spec.again_at_step)
               else f"with each kill right after a checkpoint ({aimed})")
        note = (f"the SIGKILL aimed after step {missed.signalled_at_step} reached the job inside its save of step {torn} "
                f"(left incomplete there: a kill inside a save is what truncated-newest tests, not this variant), "
                f"so the variant was run again {how}")
        self.journal.progress(f"{spec.name}: {note}")
        result = self.variant(spec._replace(hold_at_step=hold_at, again_at_step=again_at), reaimed=True)
        result.notes.insert(0, note)
        return result

    def variants(self) -> list[VariantSpec]:
        """The plan's variants, the successive resume, and with a SIGTERM one the same signal half a step later.

        The plain ``sigterm`` lands as the step line is read, between two steps; a handler that
        saves (or exits) at once passes there and fails inside a step, where half of it is done.
        """
        specs = list(self.plan.variants)
        successive = successive_variant(self.plan, self.epoch_length)
        if successive is not None:
            specs.append(successive)
        for spec in self.plan.variants:
            if spec.name == SIGTERM_PREEMPTION:
                specs.append(spec._replace(
                    name=SIGTERM_MID_STEP, expected_resume_step=spec.expected_resume_step + 1,
                    description=f"SIGTERM half a step after step {spec.hold_at_step}, inside the next step: checkpoint "
                                "at the next step boundary, exit 143"))
        return specs

    def runnable(self, spec: VariantSpec) -> str | None:
        """Why a variant of the plan cannot be run on a command (``None``: it can)."""
        assert self.options.cmd is not None
        if spec.name == KILL_DURING_WRITE:
            return ("an opaque command cannot be paused inside its checkpoint write; the torn file such a kill "
                    f"leaves is what {TRUNCATED_NEWEST} makes on purpose")
        if spec.checkpoint_every is not None and "{every}" not in self.options.cmd:
            return "--cmd has no {every} placeholder, so its checkpoint interval cannot be set off the period"
        return None

    def epoch_plan(self) -> list[str]:
        """Make the plan cross an epoch boundary where the epoch length is known; warnings where it cannot.

        A loader generator or sampler left out of the checkpoint only shows once a resumed run
        draws an epoch's order: the plan is lengthened so that the SIGKILL lands in the second
        epoch (its resume draws that epoch's order again) and the off-period resume, in the
        first epoch, runs past the boundary. The reference is run again with the new length.
        """
        reference, reference_folder = self.references[self.plan.checkpoint_every]
        saved = reference.checkpoint_epochs  # the epoch counter the checkpoints held, where no line prints one
        self.has_epochs = bool(self.options.steps_per_epoch or reference.epochs or saved)
        self.epoch_length = (self.options.steps_per_epoch or epoch_length(reference.epochs)
                             or checkpoint_epoch_length(saved))
        if self.epoch_length is None and (len(set(reference.epochs.values())) == 1
                                          or len({int(epoch) for epoch in saved.values()}) == 1):
            self.epoch_length = self.probe_epoch(reference)
        length = self.epoch_length
        if length is None:
            self.crossed = None if not self.has_epochs else False
            seen = set(reference.epochs.values()) or {int(epoch) for epoch in saved.values()}
            where = "step lines" if reference.epochs else "checkpoints"
            printed = " (neither the step lines nor the checkpoints show an epoch)" if not seen else (
                f" (the {where} show epoch {min(seen)} all the plan long, and a longer run did not fit the time "
                "limit: the epoch is longer than the plan)" if len(seen) == 1
                else f" (the epoch in the {where} does not change at a steady interval)")
            return [f"no epoch boundary was crossed: data-order bugs at an epoch end were not tested{printed}; "
                    f"pass --steps-per-epoch N (or print epoch=E on the step lines) and the plan runs past one"]
        resume_points = [spec.expected_resume_step for spec in self.plan.variants if spec.signal == "SIGKILL"]
        if crosses(resume_points, self.plan.steps, length):
            self.crossed = True
            return []
        every = self.plan.checkpoint_every
        steps = math.ceil((length + every) / 0.6) + every
        step_s = step_estimate(reference)
        budget_s = (self.deadline - time.monotonic()) / 2
        if steps > MAX_EPOCH_STEPS or step_s * steps * RUNS_PER_PLAN > budget_s:
            self.crossed = False
            return [f"no epoch boundary was crossed: an epoch is {length} steps, and a plan that runs past one "
                    f"({steps} steps) does not fit the time limit; data-order bugs at an epoch end were not tested: "
                    f"raise --timeout or shorten the epoch (a smaller data set) for the smoke test"]
        self.plan = make_plan(replace(self.options, steps=steps, kill_at_step=None))
        self.references.clear()
        self.journal.progress(f"plan: an epoch is {length} steps; {steps} steps so that the kill lands in the "
                              f"second epoch and a resume runs past the boundary")
        self.reference(self.plan.checkpoint_every)
        self.crossed = crosses([spec.expected_resume_step for spec in self.plan.variants if spec.signal == "SIGKILL"],
                               self.plan.steps, length)
        return []

    def probe_epoch(self, reference: CommandRun) -> int | None:
        """The epoch length of a job whose step lines print one epoch all the plan long: the
        uninterrupted command run again with twice the steps, and twice again, until its epoch
        changes (within ``MAX_EPOCH_STEPS`` and half the time left)."""
        step_s = step_estimate(reference)
        steps = self.plan.steps * 2
        while steps <= MAX_EPOCH_STEPS and step_s * steps * (RUNS_PER_PLAN + 2) <= (self.deadline - time.monotonic()) / 2:
            label = f"epoch-probe-{steps}"
            probe = self.run(label, self.root / "checkpoints" / label, False, self.plan.checkpoint_every, steps=steps,
                             read_epochs=True)
            if probe.exit_code != 0:
                return None
            found = epoch_length(probe.epochs) or checkpoint_epoch_length(probe.checkpoint_epochs)
            if found is not None:
                self.journal.progress(f"plan: an epoch is {found} steps (the command run to step {steps} to find "
                                      "it, its epoch read from the step lines or the checkpoints)")
                self.epoch_probed_to = steps
                return found
            steps *= 2
        return None

    def coverage_gaps(self, results: list[VariantResult]) -> list[str]:
        """What the plan could not test that the job has: VERIFIED claims every part of the plan ran and
        every compared state and loss was equal, so each gap makes the verdict INCOMPLETE (exit 3)."""
        gaps = []
        if self.has_epochs and not self.crossed:
            gaps.append("no resume ran past an epoch end, so a data order that is not restored was not tested "
                        "(pass --steps-per-epoch N, a smaller data set, or a longer --timeout)")
        unread = [r.name for r in results if r.leaves_compared == 0]
        if unread:
            gaps.append(f"no checkpoint content was compared in {', '.join(unread)} (none written after the resume, "
                        "or none readable: the notes say which), so only losses were")
        return gaps

    def observed(self) -> dict[str, Any]:
        """What the uninterrupted run showed: the lines read as steps, the epoch, the checkpoint layout."""
        if self.plan.checkpoint_every not in self.references:
            return {}
        reference, folder = self.references[self.plan.checkpoint_every]
        mentions = [mention.text for mention in reference.mentions]
        complete = [str(name) for name in snapshot(folder)]
        numbered = checkpoint_steps(folder)
        layout = "numbered" if numbered else "single" if complete else "none"
        return {"steps_per_epoch": self.epoch_length, "epoch_boundary_crossed": self.crossed,
                "epoch_probed_to_step": self.epoch_probed_to,
                "step_lines": {"examples": reference.examples, "not_steps": mentions[:MAX_EXAMPLES],
                               "not_steps_count": len(mentions)},
                "checkpoints_seen": {"complete": complete[:20], "partial": [str(name) for name in partial_files(folder)][:20],
                                     "layout": layout}}

    def execute(self) -> dict[str, Any]:
        try:
            self.reference(self.plan.checkpoint_every)
            warnings = self.epoch_plan()
        except ReferenceFailed as error:
            return setup_error_summary(str(error))
        results = []
        for spec in self.variants():
            reason = self.runnable(spec)
            if reason is not None:
                self.not_applicable.append({"name": spec.name, "reason": reason})
                self.journal.progress(f"{spec.name}: not run with --cmd: {reason}")
                continue
            if time.monotonic() >= self.deadline:
                result = empty_variant(spec)
                result.verdict = INCOMPLETE
                result.message = "not run: the time limit (--timeout) was reached before it; a longer --timeout runs it"
            else:
                result = self.variant(spec)
            self.journal.progress(f"compared {result.name}: {result.verdict}: {result.message}")
            results.append(result)
        verdict = overall_verdict(results)
        failing = [r for r in results if r.verdict not in (VERIFIED, INCOMPLETE)]
        untested = [f"{r.name}: {r.message}" for r in results if r.verdict == INCOMPLETE] + \
            self.coverage_gaps(results)
        if failing:
            message = f"{len(failing)} of {len(results)} variants failed; {failing[0].name}: {failing[0].message}"
            order = data_order_signature(results, self.epoch_length)
            if order is not None:  # the cause, before the differences it leaves
                message = f"{len(failing)} of {len(results)} variants failed; {order}; {failing[0].name}: " \
                          f"{failing[0].message}"
            why = why_disagree(results)
            if why:
                message += f". {why}"
        elif untested:
            verdict = INCOMPLETE
            passed = sum(1 for r in results if r.verdict == VERIFIED)
            message = (f"{passed} of {len(results)} variants passed and none failed, but the plan did not test "
                       f"everything the job has: {'; '.join(untested)}")
        else:
            message = (f"resume of the command verified bit for bit in all {len(results)} variants "
                       "(every run a new process)")
        summary = base_summary(verdict, message)
        summary["warnings"] += warnings
        summary["variants"] = [result.to_json() for result in results]
        summary["differences"] = [d for r in results for d in r.differences]
        return summary


def run_command_smoke(options: SmokeOptions, plan: SmokePlan, stdout: TextIO, stderr: TextIO, started: float) -> int:
    run_id = new_run_id()
    early = Journal(None, None, stderr, started)
    try:
        folder = create_run_folder(options.run_dir, run_id)
    except OSError as error:
        summary = setup_error_summary(f"cannot create the run folder: {error}")
        early.progress(f"setup error: {summary['message']}")
        stdout.write(render_json(summary) if options.format == "json" else render_text(summary))
        return 2
    journal = Journal(folder.events, folder.logs / "spikelint.log", stderr, started)
    smoke: CommandSmoke | None = None
    default_sigterm = sigterm_ends_runs()
    try:
        try:
            smoke = CommandSmoke(options, plan, folder.root, journal)
            summary = smoke.execute()
        except KeyboardInterrupt:
            journal.progress(f"interrupted: the command was stopped; what ran so far is in {folder.root}")
            raise
        except CommandError as error:
            summary = setup_error_summary(str(error))
        except OSError as error:
            summary = setup_error_summary(f"{error.strerror or error}: {getattr(error, 'filename', '') or ''}".strip())
        summary["run_id"] = run_id
        summary["run_dir"] = str(folder.root)
        summary["job"] = options.cmd
        summary["device"] = {"type": "cuda" if options.device == "cuda" else "cpu", "processes": 1}
        used = smoke.plan if smoke else plan
        summary["plan"] = {"steps": used.steps, "checkpoint_every": used.checkpoint_every, "kill_at_step": used.kill_at_step,
                           "signal": options.signal, "seed": options.seed, "nproc": 1,
                           "variants": [v["name"] for v in summary["variants"]], "restart": "exec",
                           "not_applicable": smoke.not_applicable if smoke else [],
                           "sigterm_to": options.sigterm_to, **(smoke.observed() if smoke else {})}
        summary["measurements"]["total_wall_s"] = time.monotonic() - started
        summary["checkpoints_kept"] = True
        try:
            write_json_atomically(folder.summary, summary)
            page = render_page(summary, smoke.reference_losses if smoke else {}, smoke.curves if smoke else [])
            folder.page.write_text(page, encoding="utf-8")
        except OSError as error:
            summary = setup_error_summary(f"cannot write {folder.summary}: {error.strerror or error}")
        journal.progress(f"finished: {summary['verdict']} (exit {summary['exit_code']}), run folder {folder.root} "
                         f"(the losses drawn in {folder.page.name})")
    finally:
        if default_sigterm is not None:
            signal.signal(signal.SIGTERM, default_sigterm)
        journal.close()
    stdout.write(render_json(summary) if options.format == "json" else render_text(summary))
    return int(summary["exit_code"])
