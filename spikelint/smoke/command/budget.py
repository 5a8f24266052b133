"""How long a command's steps take, for the plan's time budget, and whether a plan reaches past an epoch."""

from __future__ import annotations

from spikelint.smoke.command.process import CommandRun

MAX_EPOCH_STEPS = 2000  # a plan lengthened to cross an epoch stays a smoke test
RUNS_PER_PLAN = 12  # references and interrupted and resumed runs of every variant, roughly
MIN_AIMED_STEP_S = 0.01  # shorter steps cannot be aimed into: half a step is lost in process scheduling


def median_step_s(run: CommandRun) -> float | None:
    """The median time between two step lines of a run."""
    times = [run.step_s[step] for step in sorted(run.step_s)]
    gaps = sorted(later - earlier for earlier, later in zip(times, times[1:]))
    return gaps[len(gaps) // 2] if gaps else None


def step_estimate(run: CommandRun) -> float:
    """Seconds a step takes, for the time budget: the median step (between two checkpoints, their time over the
    steps between them), else the run's wall time over its steps (a job whose only progress is one checkpoint
    gives no step time, and must not look free)."""
    steps = sorted(run.step_s)
    # per step: a job that prints no step is timed by its checkpoints, several steps apart
    rates = sorted((run.step_s[later] - run.step_s[earlier]) / (later - earlier)
                   for earlier, later in zip(steps, steps[1:]) if later > earlier)
    if rates:
        return rates[len(rates) // 2]
    last = max(run.steps, default=0)
    return run.wall_s / last if last > 0 else run.wall_s


def crosses(resume_points: list[int], steps: int, length: int) -> bool:
    """The plan tests what breaks at epochs: a resume inside a later epoch than the first (whose order
    must be restored, not drawn again from a fresh generator, which gives the first epoch's order), and
    a resume followed, within the run, by the first step of a new epoch."""
    later = any(point >= length for point in resume_points)
    return later and any((point // length + 1) * length < steps for point in resume_points)
