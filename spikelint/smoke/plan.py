"""Options of ``spikelint smoke`` and the interruption plan derived from them (no torch here).

The plan is computed before anything expensive starts, so that impossible combinations
(a kill step that is not between two checkpoints, too few steps) fail fast with exit 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple


SIGNAL_CHOICES = ("kill", "term", "both")
DEVICE_CHOICES = ("cpu", "cuda", "auto")
FORMAT_CHOICES = ("text", "json")

# --progress-regex / --loss-regex defaults: what a step line and a loss look like in most jobs' output.
# No letter, digit, dot, dash or slash just before "step": "loss_step=", "max_steps",
# "step-24.pt" in a path and "global_step24" are not the step of a step line.
DEFAULT_PROGRESS = r"(?i)(?<![\w./-])(?:global[_ ])?step['\"]?(?:\s*[=:]\s*|\s+)(\d+)"
DEFAULT_LOSS = r"(?i)(?<![\w./-])loss['\"]?(?:\s*[=:]\s*|\s+)['\"]?([^\s,;}'\"]+)"  # {'loss': '5.514'} too

KILL_BETWEEN = "kill-between-checkpoints"
KILL_DURING_WRITE = "kill-during-write"
TRUNCATED_NEWEST = "truncated-newest"
SIGTERM_PREEMPTION = "sigterm"
SIGTERM_MID_STEP = "sigterm-mid-step"  # --cmd only: the signal held back half a step after the step line
KILL_OFF_PERIOD = "kill-off-period"
SUCCESSIVE_RESUME = "successive-resume"  # --cmd only: the resumed run is killed again and resumed a second time
RESTART_CHOICES = ("fork", "exec")
SIGTERM_TARGETS = ("pid", "group")
OFF_PERIOD_INTERVALS = (3, 5, 7)  # odd, so resume points miss accumulation windows of 2, 4, 8, 16

MAX_SEED = 2**31 - 1 - 1024  # numpy seeds must stay below 2**32 even after adding the rank
MAX_NPROC = 64


# the built-in job keeps a value per step; a --cmd run replays the command about ten times
MAX_STEPS = 1_000_000


class PlanError(ValueError):
    """The options cannot describe a meaningful smoke test (exit 2)."""


@dataclass(frozen=True)
class SmokeOptions:
    """Every option of ``spikelint smoke`` as the user gave it (``None`` = default)."""

    device: str = "auto"
    steps: int = 40
    checkpoint_every: int = 4
    kill_at_step: int | None = None
    signal: str = "both"
    nproc: int = 1
    checkpoint_dir: str | None = None
    run_dir: str | None = None
    job: str | None = None
    seed: int = 0
    require_persistent: bool = False
    format: str = "text"
    timeout: float = 600.0
    restart: str = "fork"  # fork: every run forked from this parent; exec: a fresh interpreter each
    exec_check: bool = True  # with fork: one resume in a fresh interpreter, to catch import-time state
    sigterm_to: str = "pid"  # pid: the training process only, as Kubernetes does; group: every process
    cmd: str | None = None  # --cmd: the team's own command line with placeholders
    resume_arg: str = "--resume"
    progress_regex: str = DEFAULT_PROGRESS
    loss_regex: str = DEFAULT_LOSS
    steps_per_epoch: int | None = None  # --cmd: the epoch length, when the step lines do not print the epoch
    warn_only: bool = False  # deterministic algorithms in warn-only mode: ops without one warn instead of raising
    grace_period: float = 30.0  # --cmd: seconds from SIGTERM to SIGKILL (Kubernetes terminationGracePeriodSeconds)


class VariantSpec(NamedTuple):
    """One interruption and the checkpoint the resume is expected to start from."""

    name: str
    signal: str  # "SIGKILL" or "SIGTERM"
    description: str
    hold_at_step: int | None  # the child waits after this step until it is signalled
    pause_in_write_at_step: int | None  # the child stops half-way through this checkpoint
    truncate_newest: bool  # the parent damages the newest checkpoint before the resume
    expected_resume_step: int
    checkpoint_every: int | None = None  # a variant's own interval (None: the plan's)
    again_at_step: int | None = None  # the resumed run is SIGKILLed again after this step, then resumed once more


class SmokePlan(NamedTuple):
    steps: int
    checkpoint_every: int
    kill_at_step: int
    variants: tuple[VariantSpec, ...]
    probe_steps: frozenset[int]  # steps at which the reference records its live state


def kill_step_candidates(steps: int, every: int, need_kill: bool) -> list[int]:
    """Steps where an interruption exercises the protocol.

    A SIGKILL must land after two checkpoints (so a damaged newest one has a predecessor)
    and between two checkpoints (so the resume replays lost steps).
    """
    if need_kill:
        return [step for step in range(2 * every + 1, steps) if step % every]
    return list(range(1, steps))


def default_kill_step(steps: int, every: int, need_kill: bool) -> int | None:
    """About 60 % into the run, half a checkpoint interval past a checkpoint."""
    candidates = kill_step_candidates(steps, every, need_kill)
    if not candidates:
        return None
    target = max(2 * every, (steps * 3 // 5) // every * every) + max(1, every // 2)
    return min(candidates, key=lambda step: (abs(step - target), step))


def _check_ranges(options: SmokeOptions) -> None:
    if options.device not in DEVICE_CHOICES:
        raise PlanError(f"--device must be one of {', '.join(DEVICE_CHOICES)}")
    if options.signal not in SIGNAL_CHOICES:
        raise PlanError(f"--signal must be one of {', '.join(SIGNAL_CHOICES)}")
    if options.restart not in RESTART_CHOICES:
        raise PlanError(f"--restart must be one of {', '.join(RESTART_CHOICES)}")
    if options.sigterm_to not in SIGTERM_TARGETS:
        raise PlanError(f"--sigterm-to must be one of {', '.join(SIGTERM_TARGETS)}")
    if options.format not in FORMAT_CHOICES:
        raise PlanError(f"--format must be one of {', '.join(FORMAT_CHOICES)}")
    if options.steps_per_epoch is not None and options.steps_per_epoch < 1:
        raise PlanError("--steps-per-epoch must be at least 1")
    if options.steps < 2:
        raise PlanError("--steps must be at least 2")
    if options.steps > MAX_STEPS:
        raise PlanError(f"--steps must be at most {MAX_STEPS:,}: a smoke test replays the run several times, and "
                        "a resume is proven within a few checkpoints (--checkpoint-every sets how far apart)")
    if options.checkpoint_every < 1:
        raise PlanError("--checkpoint-every must be at least 1")
    if not 1 <= options.nproc <= MAX_NPROC:
        raise PlanError(f"--nproc must be between 1 and {MAX_NPROC}")
    if not 0 <= options.seed <= MAX_SEED:
        raise PlanError(f"--seed must be between 0 and {MAX_SEED}")
    if not options.timeout > 0:
        raise PlanError("--timeout must be a positive number of seconds")


def _kill_step(options: SmokeOptions, need_kill: bool) -> int:
    steps, every = options.steps, options.checkpoint_every
    if options.kill_at_step is None:
        chosen = default_kill_step(steps, every, need_kill)
        if chosen is None:
            raise PlanError(
                f"--steps {steps} is too short for --checkpoint-every {every}: a SIGKILL between "
                f"checkpoints after two of them needs --checkpoint-every of at least 2 and "
                f"--steps of at least {2 * max(every, 2) + 2}"
            )
        return chosen
    step = options.kill_at_step
    if step not in kill_step_candidates(steps, every, need_kill):
        if need_kill:
            raise PlanError(
                f"--kill-at-step {step} must lie between two checkpoints (not a multiple of "
                f"--checkpoint-every {every}), after at least two of them (> {2 * every}) and "
                f"before the last step (< {steps})"
            )
        raise PlanError(f"--kill-at-step {step} must be between 1 and {steps - 1}")
    return step


def make_plan(options: SmokeOptions) -> SmokePlan:
    """The interruption variants for ``--signal`` and the steps they happen at."""
    _check_ranges(options)
    need_kill = options.signal in ("kill", "both")
    every = options.checkpoint_every
    kill_at = _kill_step(options, need_kill)
    last_checkpoint = kill_at // every * every
    variants: list[VariantSpec] = []
    if need_kill:
        variants += [
            VariantSpec(
                KILL_BETWEEN,
                "SIGKILL",
                f"SIGKILL at step {kill_at}, between the checkpoints at steps {last_checkpoint} "
                f"and {last_checkpoint + every}",
                hold_at_step=kill_at,
                pause_in_write_at_step=None,
                truncate_newest=False,
                expected_resume_step=last_checkpoint,
            ),
            VariantSpec(
                KILL_DURING_WRITE,
                "SIGKILL",
                f"SIGKILL half-way through writing the checkpoint of step {last_checkpoint}",
                hold_at_step=None,
                pause_in_write_at_step=last_checkpoint,
                truncate_newest=False,
                expected_resume_step=last_checkpoint - every,
            ),
            VariantSpec(
                TRUNCATED_NEWEST,
                "SIGKILL",
                f"SIGKILL at step {kill_at}, then the newest checkpoint (step {last_checkpoint}) "
                f"is truncated on disk",
                hold_at_step=kill_at,
                pause_in_write_at_step=None,
                truncate_newest=True,
                expected_resume_step=last_checkpoint - every,
            ),
        ]
    off_period = off_period_variant(options.steps, every) if need_kill else None
    if off_period is not None:
        variants.append(off_period)
    if options.signal in ("term", "both"):
        variants.append(
            VariantSpec(
                SIGTERM_PREEMPTION,
                "SIGTERM",
                f"SIGTERM after step {kill_at}: checkpoint at the next step boundary, exit 143",
                hold_at_step=kill_at,
                pause_in_write_at_step=None,
                truncate_newest=False,
                expected_resume_step=kill_at,
            )
        )
    checkpoints = range(every, options.steps + 1, every)
    extra = {off_period.expected_resume_step, off_period.hold_at_step or 0} if off_period else set()
    return SmokePlan(
        steps=options.steps,
        checkpoint_every=every,
        kill_at_step=kill_at,
        variants=tuple(variants),
        probe_steps=frozenset(checkpoints) | {kill_at} | (extra - {0}),
    )


def successive_variant(plan: SmokePlan, epoch_length: int | None = None) -> VariantSpec | None:
    """Kill, resume, kill the resumed run after a checkpoint of its own, resume a second time.

    A first resume loads a checkpoint the uninterrupted process wrote; only the second loads one a
    resumed process wrote, so state that a resume restores but does not save back (a data position
    counted since the process started, a counter re-created at start) shows here and nowhere else.
    Where the epoch length is known and a checkpoint falls on an epoch's last step, the second
    resume starts there: a loader position saved as "every batch served" must start the next
    epoch, not an empty one. ``None`` when the run is too short for a second kill between two checkpoints.
    """
    if not any(spec.name == KILL_BETWEEN for spec in plan.variants):
        return None
    every = plan.checkpoint_every
    resumed_from = plan.kill_at_step // every * every
    second_from = resumed_from + every
    if epoch_length:
        ends = [step for step in range(second_from, plan.steps, every)
                if step % epoch_length == 0 and step + max(1, every // 2) < plan.steps]
        second_from = ends[0] if ends else second_from
    again = second_from + max(1, every // 2)
    if again >= plan.steps:
        return None
    where = f", the last step of epoch {second_from // epoch_length - 1} (counted from 0)" \
        if epoch_length and second_from % epoch_length == 0 else ""
    return VariantSpec(
        SUCCESSIVE_RESUME,
        "SIGKILL",
        f"SIGKILL at step {plan.kill_at_step}, resume from step {resumed_from}, SIGKILL again at step {again} "
        f"(after the resumed run's own checkpoint of step {second_from}{where}), resume a second time",
        hold_at_step=plan.kill_at_step,
        pause_in_write_at_step=None,
        truncate_newest=False,
        expected_resume_step=second_from,
        again_at_step=again,
    )


def off_period_variant(steps: int, every: int) -> VariantSpec | None:
    """A SIGKILL with an odd checkpoint interval, resuming from an odd step that no period shares.

    Checkpoints every ``--checkpoint-every`` steps land where a job's own period (gradient
    accumulation, a logging or EMA interval) often lands too, so state that lives only inside
    that period is never lost there; this variant resumes from a step that is a multiple of
    neither ``--checkpoint-every`` nor 2.
    """
    for interval in OFF_PERIOD_INTERVALS:
        if interval == every or math.gcd(interval, every) != 1 and every != 1:
            continue
        candidates = [
            step for step in range(interval, steps - 1, interval)
            if step % 2 and (every == 1 or step % every) and step + 1 < steps
        ]
        if not candidates:
            continue
        target = steps * 2 // 5
        resume = min(candidates, key=lambda step: (abs(step - target), step))
        return VariantSpec(
            KILL_OFF_PERIOD,
            "SIGKILL",
            f"SIGKILL at step {resume + 1} with a checkpoint every {interval} steps, so the resume starts at "
            f"step {resume}, off the period of --checkpoint-every {every} and of any even accumulation window",
            hold_at_step=resume + 1,
            pause_in_write_at_step=None,
            truncate_newest=False,
            expected_resume_step=resume,
            checkpoint_every=interval,
        )
    return None
