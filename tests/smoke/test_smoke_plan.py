from __future__ import annotations

import pytest

pytest.importorskip("torch")

from spikelint.smoke.plan import KILL_BETWEEN
from spikelint.smoke.plan import KILL_DURING_WRITE
from spikelint.smoke.plan import KILL_OFF_PERIOD
from spikelint.smoke.plan import off_period_variant
from spikelint.smoke.plan import SIGTERM_PREEMPTION
from spikelint.smoke.plan import TRUNCATED_NEWEST
from spikelint.smoke.plan import PlanError
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.plan import default_kill_step
from spikelint.smoke.plan import make_plan


def test_default_plan_kills_between_checkpoints_after_two_of_them() -> None:
    plan = make_plan(SmokeOptions())
    assert (plan.steps, plan.checkpoint_every, plan.kill_at_step) == (40, 4, 26)
    by_name = {variant.name: variant for variant in plan.variants}
    assert list(by_name) == [KILL_BETWEEN, KILL_DURING_WRITE, TRUNCATED_NEWEST, KILL_OFF_PERIOD, SIGTERM_PREEMPTION]
    off = by_name[KILL_OFF_PERIOD]
    assert (off.checkpoint_every, off.expected_resume_step, off.hold_at_step) == (3, 15, 16)
    assert by_name[KILL_BETWEEN].expected_resume_step == 24
    assert by_name[KILL_DURING_WRITE].pause_in_write_at_step == 24
    assert by_name[KILL_DURING_WRITE].expected_resume_step == 20
    assert by_name[TRUNCATED_NEWEST].truncate_newest and by_name[TRUNCATED_NEWEST].expected_resume_step == 20
    assert by_name[SIGTERM_PREEMPTION].signal == "SIGTERM"
    assert by_name[SIGTERM_PREEMPTION].expected_resume_step == 26
    assert plan.probe_steps == frozenset({4, 8, 12, 15, 16, 20, 24, 28, 32, 36, 40, 26})


@pytest.mark.parametrize("every", [1, 2, 3, 4, 5, 6, 8, 10, 16])
def test_the_off_period_variant_resumes_where_no_even_window_or_the_interval_ends(every: int) -> None:
    off = off_period_variant(60, every)
    assert off is not None and off.checkpoint_every in (3, 5, 7) and off.checkpoint_every != every
    resume = off.expected_resume_step
    assert resume % off.checkpoint_every == 0 and resume % 2 == 1 and (every == 1 or resume % every)
    assert off.hold_at_step == resume + 1 and off.hold_at_step % off.checkpoint_every


@pytest.mark.parametrize(("steps", "every"), [(20, 4), (40, 4), (13, 3), (100, 10), (10, 2)])
def test_default_kill_step_is_always_valid(steps: int, every: int) -> None:
    step = default_kill_step(steps, every, need_kill=True)
    assert step is not None
    assert 2 * every < step < steps and step % every


def test_signal_selects_variants() -> None:
    assert [v.name for v in make_plan(SmokeOptions(signal="term")).variants] == [SIGTERM_PREEMPTION]
    assert len(make_plan(SmokeOptions(signal="kill")).variants) == 4


def test_sigterm_alone_accepts_any_step_before_the_last() -> None:
    plan = make_plan(SmokeOptions(signal="term", steps=5, checkpoint_every=1, kill_at_step=4))
    assert plan.kill_at_step == 4


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (SmokeOptions(kill_at_step=24), "between two checkpoints"),
        (SmokeOptions(kill_at_step=6), "after at least two"),
        (SmokeOptions(kill_at_step=41), "before the last step"),
        (SmokeOptions(steps=9, checkpoint_every=4), "too short"),
        (SmokeOptions(checkpoint_every=1), "too short"),
        (SmokeOptions(seed=-1), "--seed"),
        (SmokeOptions(nproc=0), "--nproc"),
    ],
)
def test_impossible_plans_are_refused(options: SmokeOptions, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        make_plan(options)
