"""From what the processes reported to a verdict per interruption variant.

Four independent checks, each naming what it found: the final state (every leaf, bit for
bit), the per-step losses after the resume, the data position (the sample indices the
resumed run consumed, none repeated and none skipped), and the restore check (the live
state right after ``load_state_dict`` against the reference at the same step), which names
the piece a checkpoint is missing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import torch

from spikelint.smoke.compare.leaves import compare_digests
from spikelint.smoke.compare.leaves import compare_states
from spikelint.smoke.compare.leaves import leaf_from_json
from spikelint.smoke.plan import VariantSpec
from spikelint.smoke.harness.probe import GRADIENTS
from spikelint.smoke.harness.probe import LATENT_PIECES
from spikelint.smoke.harness.probe import describe_piece
from spikelint.smoke.harness.probe import piece_of
from spikelint.smoke.harness.processes import ProcessGroup
from spikelint.smoke.harness.protocol import CHECKPOINT
from spikelint.smoke.harness.protocol import DONE
from spikelint.smoke.harness.protocol import ERROR
from spikelint.smoke.harness.protocol import PREEMPTED
from spikelint.smoke.harness.protocol import PROBE
from spikelint.smoke.harness.protocol import READY
from spikelint.smoke.harness.protocol import RESTORED
from spikelint.smoke.harness.protocol import STEP
from spikelint.smoke.result import STATE_DIFFERS
from spikelint.smoke.result import VERIFIED
from spikelint.smoke.result import VariantResult
from spikelint.smoke.result import describe_exit
from spikelint.smoke.result import difference_json

MAX_DIFFERENCES_PER_RANK = 25


@dataclass
class RunRecord:
    """What one run's ranks reported, indexed by rank."""

    label: str
    world_size: int
    exit_codes: list[int | None]
    ready: list[dict[str, Any] | None]
    steps: list[dict[int, dict[str, Any]]]
    probes: list[dict[int, dict[str, Any]]]
    checkpoints: list[list[dict[str, Any]]]
    restored: list[dict[str, Any] | None]
    preempted: list[dict[str, Any] | None]
    done: list[dict[str, Any] | None]
    errors: list[dict[str, Any]]
    timed_out: bool = False
    restart: str = "fork"
    log_tail: str = ""

    @property
    def completed(self) -> bool:
        return all(done is not None for done in self.done) and all(code == 0 for code in self.exit_codes)

    def failure_reason(self) -> str:
        """The first error a rank reported, else how the processes ended."""
        if self.errors:
            first = self.errors[0]
            tail = f"; last output: {self.log_tail}" if self.log_tail and first.get("job_exit") is None else ""
            return f"rank {first.get('rank', 0)} failed in {first.get('stage', '?')}: {first.get('message', '')}{tail}"
        if self.timed_out:
            return "the time limit (--timeout) was reached"
        endings = ", ".join(f"rank {rank}: {describe_exit(code)}" for rank, code in enumerate(self.exit_codes))
        tail = f"; last output: {self.log_tail}" if self.log_tail else ""
        return f"processes ended without finishing ({endings}){tail}"




def _last(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    return messages[-1] if messages else None


def record_of(group: ProcessGroup, timed_out: bool = False) -> RunRecord:
    world = len(group.ranks)
    return RunRecord(
        label=group.name,
        world_size=world,
        exit_codes=[rank.exit_code for rank in group.ranks],
        ready=[_last(group.rank_messages(r, READY)) for r in range(world)],
        steps=[{int(m["step"]): m for m in group.rank_messages(r, STEP)} for r in range(world)],
        probes=[{int(m["step"]): m["probe"] for m in group.rank_messages(r, PROBE)} for r in range(world)],
        checkpoints=[group.rank_messages(r, CHECKPOINT) for r in range(world)],
        restored=[_last(group.rank_messages(r, RESTORED)) for r in range(world)],
        preempted=[_last(group.rank_messages(r, PREEMPTED)) for r in range(world)],
        done=[_last(group.rank_messages(r, DONE)) for r in range(world)],
        errors=group.messages(ERROR),
        timed_out=timed_out,
    )


@dataclass
class Interruption:
    """What happened to the interrupted run of one variant (filled in by the orchestrator)."""

    spec: VariantSpec
    record: RunRecord | None = None
    interrupted_at_step: int | None = None
    checkpoints_before: list[int] = field(default_factory=list)
    damaged_steps: list[int] = field(default_factory=list)  # checkpoints the parent truncated
    sigterm_exit_s: float | None = None
    sigterm_write_s: float | None = None
    failure: str | None = None


def first_differing_step(
    reference: dict[int, dict[str, Any]], other: dict[int, dict[str, Any]], steps: range, field_name: str
) -> int | None:
    for step in steps:
        expected, actual = reference.get(step), other.get(step)
        if expected is None or actual is None or expected.get(field_name) != actual.get(field_name):
            return step
    return None


def data_position(
    reference: dict[int, dict[str, Any]],
    before: dict[int, dict[str, Any]],
    resumed: dict[int, dict[str, Any]],
    resume_step: int,
    last_step: int,
) -> dict[str, Any]:
    """Sample indices of the resumed steps against the reference; the whole run as multisets."""
    have_indices = all(reference.get(step, {}).get("indices") is not None for step in range(1, last_step + 1))
    if not have_indices:
        return {"available": False, "equal": None, "repeated_samples": None, "skipped_samples": None,
                "first_differing_step": None}
    resumed_range = range(resume_step + 1, last_step + 1)
    first = first_differing_step(reference, resumed, resumed_range, "indices")
    expected: Counter[int] = Counter()
    actual: Counter[int] = Counter()
    for step in range(1, last_step + 1):
        expected.update(reference[step]["indices"])
        source = before if step <= resume_step else resumed
        actual.update((source.get(step) or {}).get("indices") or [])
    repeated = sum((actual - expected).values())
    skipped = sum((expected - actual).values())
    return {
        "available": True,
        "equal": first is None and repeated == 0 and skipped == 0,
        "repeated_samples": repeated,
        "skipped_samples": skipped,
        "first_differing_step": first,
    }


def final_piece(key: str) -> str:
    """The top-level piece a final-state key belongs to (``state.optimizer.state.0`` -> ``optimizer``)."""
    parts = key.split(".")
    if parts[0] == "state" and len(parts) > 1:
        return parts[1]
    if parts[0] == "rng" and len(parts) > 1:
        return f"rng ({parts[1]} global)"
    return parts[0]




class FinalStates:
    """Final-state files loaded once (weights-only, on the CPU) and kept for every comparison."""

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def load(self, path: str) -> Any:
        if path not in self._cache:
            self._cache[path] = torch.load(Path(path), weights_only=True, map_location="cpu")
        return self._cache[path]


def volatile_leaves(reference: RunRecord, interrupted: RunRecord | None) -> set[str]:
    """Live-state leaves that differ between two runs that were never interrupted (timers, clocks).

    The interrupted run equals the reference step for step until it is stopped, so a leaf that
    differs between them at the same step depends on something other than the training state.
    """
    volatile: set[str] = set()
    if interrupted is None:
        return volatile
    for rank in range(min(reference.world_size, interrupted.world_size)):
        for step, probe in interrupted.probes[rank].items():
            expected = reference.probes[rank].get(step)
            if expected is None:
                continue
            volatile.update(key for key, leaf in probe.items() if expected.get(key) != leaf)
            volatile.update(key for key in expected if key not in probe)
    return volatile


def live_differences(
    expected_by_rank: list[dict[str, Any] | None], actual_by_rank: list[dict[str, Any] | None], volatile: set[str]
) -> tuple[bool, list[dict[str, Any]]]:
    """(checked, pieces whose live leaves differ) over every rank, volatile leaves left out."""
    pieces: dict[str, dict[str, Any]] = {}
    checked = False
    for rank, (expected, actual) in enumerate(zip(expected_by_rank, actual_by_rank)):
        if expected is None or actual is None:
            continue
        checked = True
        reference_leaves = {key: leaf_from_json(value) for key, value in expected.items() if key not in volatile}
        resumed_leaves = {key: leaf_from_json(value) for key, value in actual.items() if key not in volatile}
        for difference in compare_digests(reference_leaves, resumed_leaves):
            piece = piece_of(difference.key)
            pieces.setdefault(
                piece,
                {"piece": piece.split(":", 1)[0], "where": describe_piece(piece), "first_differing_leaf": difference.key,
                 "rank": rank},
            )
    return checked, list(pieces.values())


def restore_check(
    reference: RunRecord, resumed: RunRecord, resume_step: int, volatile: set[str] = frozenset()  # type: ignore[assignment]
) -> tuple[bool, list[dict[str, Any]]]:
    """(checked, pieces that differ right after the restore) over every rank."""
    expected = [reference.probes[rank].get(resume_step) for rank in range(resumed.world_size)]
    actual = [(restored or {}).get("probe") for restored in resumed.restored]
    return live_differences(expected, actual, volatile)


def end_check(reference: RunRecord, resumed: RunRecord, volatile: set[str]) -> tuple[bool, list[dict[str, Any]]]:
    """(checked, pieces that differ at the end): everything the job holds, not only its state_dict()."""
    expected = [(done or {}).get("probe") for done in reference.done]
    actual = [(done or {}).get("probe") for done in resumed.done]
    return live_differences(expected, actual, volatile)


def non_finite_loss(steps: dict[int, dict[str, Any]]) -> tuple[int, str] | None:
    """The first step whose loss is NaN or infinite (losses travel as ``float.hex``)."""
    for step in sorted(steps):
        text = str(steps[step].get("loss"))
        if text in ("nan", "-nan", "inf", "-inf"):
            return step, text
    return None


def analyse_variant(
    interruption: Interruption,
    resumed: RunRecord | None,
    reference: RunRecord,
    states: FinalStates,
    last_step: int,
) -> VariantResult:
    """The result of one variant, verdict included."""
    spec = interruption.spec
    result = VariantResult.of(
        spec,
        interrupted_at_step=interruption.interrupted_at_step,
        interrupted_exit=[describe_exit(code) for code in interruption.record.exit_codes] if interruption.record else [],
        checkpoints_before_interruption=interruption.checkpoints_before,
        restart=resumed.restart if resumed is not None else "fork",
    )
    if spec.signal == "SIGTERM":
        result.sigterm = {
            "checkpoint_write_s": interruption.sigterm_write_s,
            "signal_to_exit_s": interruption.sigterm_exit_s,
        }
    if interruption.failure:
        result.message = interruption.failure
        return result
    if resumed is None or not resumed.completed:
        reason = resumed.failure_reason() if resumed is not None else "the resume did not run"
        result.message = f"resume failed: {reason}"
        if resumed is not None:
            for error in resumed.errors:
                result.refused_checkpoints += [dict(item, rank=error.get("rank", 0)) for item in error.get("refused", [])]
                result.removed_temporaries += error.get("removed_temporaries", [])
        return result
    restored_steps = {int(restored["step"]) for restored in resumed.restored if restored is not None}
    resume_step = min(restored_steps) if restored_steps else 0
    result.resumed_from_step = resume_step
    for restored in resumed.restored:
        if restored is None:
            continue
        for refusal in restored.get("refused", []):
            result.refused_checkpoints.append(dict(refusal, rank=restored.get("rank", 0)))
        result.removed_temporaries += restored.get("removed_temporaries", [])
    if resume_step in interruption.damaged_steps:
        result.message = f"resume failed: it loaded the damaged checkpoint of step {resume_step}"
        return result

    notes: list[str] = []
    differences: list[dict[str, Any]] = []
    leaves = 0
    loss_divergence: int | None = None
    index_divergence: int | None = None
    before_divergence: int | None = None
    positions = []
    for rank in range(reference.world_size):
        reference_final = states.load(reference.done[rank]["final_state"])  # type: ignore[index]
        resumed_final = states.load(resumed.done[rank]["final_state"])  # type: ignore[index]
        count, found = compare_states(reference_final, resumed_final)
        leaves += count
        differences += [difference_json(spec.name, rank, d, final_piece(d.key)) for d in found[:MAX_DIFFERENCES_PER_RANK]]
        if len(found) > MAX_DIFFERENCES_PER_RANK:
            notes.append(f"rank {rank}: {len(found) - MAX_DIFFERENCES_PER_RANK} more differing leaves not listed")
        step = first_differing_step(reference.steps[rank], resumed.steps[rank], range(resume_step + 1, last_step + 1), "loss")
        if step is not None:
            loss_divergence = step if loss_divergence is None else min(loss_divergence, step)
        if interruption.record is not None:
            before = interruption.record.steps[rank]
            reported = [s for s in before if s <= (interruption.interrupted_at_step or 0)]
            step = first_differing_step(reference.steps[rank], before, range(1, max(reported, default=0) + 1), "loss")
            if step is None:
                step = first_differing_step(
                    reference.steps[rank], before, range(1, max(reported, default=0) + 1), "indices"
                )
            if step is not None:
                before_divergence = step if before_divergence is None else min(before_divergence, step)
            position = data_position(reference.steps[rank], before, resumed.steps[rank], resume_step, last_step)
            position["rank"] = rank
            positions.append(position)
            if position["first_differing_step"] is not None:
                first = position["first_differing_step"]
                index_divergence = first if index_divergence is None else min(index_divergence, first)
    volatile = volatile_leaves(reference, interruption.record)
    checked, not_restored = restore_check(reference, resumed, resume_step, volatile)
    end_checked, at_end = end_check(reference, resumed, volatile)
    latent = [piece for piece in at_end if piece["piece"] in LATENT_PIECES]
    at_end = [piece for piece in at_end if piece["piece"] not in LATENT_PIECES]
    restore_wheres = {piece["where"] for piece in not_restored}
    end_wheres = {piece["where"] for piece in at_end}
    # A piece that differs right after loading but not at the end was overwritten by the resumed
    # steps (stale gradients, the last step's bookkeeping): harmless unless the run failed anyway.
    overwritten = [piece for piece in not_restored if piece["where"] not in end_wheres]
    failing = bool(at_end or differences or loss_divergence is not None
                   or _merge_positions(positions)["equal"] is False)
    blamed = [piece for piece in not_restored if piece["where"] in end_wheres] + (
        [piece for piece in overwritten if piece["piece"] not in (GRADIENTS, *LATENT_PIECES)] if failing else []
    )
    later = [piece for piece in at_end if piece["where"] not in restore_wheres]
    not_restored = blamed
    if failing:
        overwritten = [piece for piece in overwritten if piece not in blamed]
    if volatile:
        notes.append(f"{len(volatile)} live leaves differ between two uninterrupted runs and were not compared "
                     f"(timers?): {', '.join(sorted(volatile)[:3])}")
    if latent:
        notes.append("Python values beside the state differ at the end (not checkpointed, not used by training): "
                     + ", ".join(piece["where"] for piece in latent))
    if overwritten:
        notes.append("right after load_state_dict these differed, then the resumed steps overwrote them: "
                     + ", ".join(piece["where"] for piece in overwritten))
    result.leaves_compared = leaves
    result.differences = differences
    result.losses = {
        "compared_steps": [resume_step + 1, last_step],
        "equal": loss_divergence is None,
        "first_differing_step": loss_divergence,
    }
    result.data_position = _merge_positions(positions)
    result.restore_check = {"checked": checked or end_checked, "step": resume_step, "not_restored": not_restored,
                               "differs_at_end": later}
    divergences = [step for step in (loss_divergence, index_divergence) if step is not None]
    result.first_divergent_step = min(divergences) if divergences else None
    if before_divergence is not None:
        result.verdict = STATE_DIFFERS
        result.message = (
            f"the interrupted run already differed from the uninterrupted one at step {before_divergence}, "
            "before any resume: saving a checkpoint changes the run, or the job is not deterministic"
        )
        return result
    nan = non_finite_loss(reference.steps[0]) or non_finite_loss(resumed.steps[0])
    if nan is not None:
        result.verdict = STATE_DIFFERS
        result.message = (
            f"the loss is {nan[1]} at step {nan[0]}: a run whose losses are not finite proves nothing about "
            "its resume (NaN equals NaN bit for bit); fix the job or its learning rate first"
        )
        result.notes = notes
        return result
    position_ok = result.data_position["equal"] in (True, None)
    if not differences and loss_divergence is None and position_ok and not at_end:
        result.verdict = VERIFIED
        result.message = _verified_message(result, resume_step, last_step)
        result.notes = notes
        return result
    result.verdict = STATE_DIFFERS
    result.message = _differs_message(result, not_restored, resume_step)
    result.notes = notes
    return result


def _merge_positions(positions: list[dict[str, Any]]) -> dict[str, Any]:
    if not positions or not all(position["available"] for position in positions):
        return {"available": False, "equal": None, "repeated_samples": None, "skipped_samples": None,
                "first_differing_step": None}
    firsts = [p["first_differing_step"] for p in positions if p["first_differing_step"] is not None]
    return {
        "available": True,
        "equal": all(position["equal"] for position in positions),
        "repeated_samples": sum(position["repeated_samples"] for position in positions),
        "skipped_samples": sum(position["skipped_samples"] for position in positions),
        "first_differing_step": min(firsts) if firsts else None,
    }


def _verified_message(result: VariantResult, resume_step: int, last_step: int) -> str:
    replayed = (result.interrupted_at_step or resume_step) - resume_step
    parts = [f"resumed from step {resume_step}"]
    if replayed > 0:
        parts.append(f"{replayed} lost step{'s' if replayed != 1 else ''} replayed")
    if result.refused_checkpoints:
        parts.append(f"{len(result.refused_checkpoints)} damaged checkpoint(s) refused")
    if result.removed_temporaries:
        parts.append(f"{len(result.removed_temporaries)} torn temporary file(s) ignored")
    summary = f"{result.leaves_compared} leaves and the losses of steps {resume_step + 1}-{last_step}"
    if (result.data_position or {}).get("available"):
        summary += " and the sample order"
    return f"{', '.join(parts)}; {summary} equal the uninterrupted run bit for bit"


def _differs_message(result: VariantResult, not_restored: list[dict[str, Any]], resume_step: int) -> str:
    parts = [f"resumed from step {resume_step}, but the state differs"]
    if not_restored:
        parts.append(
            "not restored by the checkpoint: " + ", ".join(piece["where"] for piece in not_restored)
            + f" (differs from the uninterrupted run right after loading step {resume_step})"
        )
    later = (result.restore_check or {}).get("differs_at_end")
    if later:
        parts.append("differs from the uninterrupted run at the end: " + ", ".join(piece["where"] for piece in later))
    if result.differences:
        first = result.differences[0]
        largest = first["max_abs_diff"]
        delta = f", largest |difference| {largest:.3g}" if largest is not None else ""
        parts.append(f"first differing key {first['key']} ({first['kind']}{delta})")
    if result.first_divergent_step is not None:
        parts.append(f"divergence starts at step {result.first_divergent_step}")
    elif not result.differences:
        parts.append(
            "latent: the job's saved state and every loss match, but what it holds in memory differs at the end "
            "(weights that ship, such as an EMA, or state that a longer run would feel); add it to state_dict()"
        )
    elif all(d["piece"].startswith("rng") for d in result.differences):
        parts.append("latent: the model and every loss match, only generator state differs; the next steps would diverge")
    position = result.data_position or {}
    if position.get("available") and not position.get("equal"):
        parts.append(
            f"data position wrong: {position['repeated_samples']} samples repeated, "
            f"{position['skipped_samples']} skipped"
        )
    return "; ".join(parts)



