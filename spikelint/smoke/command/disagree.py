"""What the variants of a run say together: which ones passed and which failed, and the cause that pattern
names when no single comparison does (a torn file trusted, a SIGTERM path, the data order of a later epoch)."""

from __future__ import annotations

from spikelint.smoke.command.verdict import PREEMPTION_FIX
from spikelint.smoke.plan import SIGTERM_MID_STEP
from spikelint.smoke.plan import SIGTERM_PREEMPTION
from spikelint.smoke.plan import TRUNCATED_NEWEST
from spikelint.smoke.result import STATE_DIFFERS
from spikelint.smoke.result import VERIFIED
from spikelint.smoke.result import VariantResult
from spikelint.smoke.result import why_variants_disagree


def why_disagree(results: list[VariantResult]) -> str:
    """When some variants pass and others fail, what tells them apart."""
    passed = [result for result in results if result.verdict == VERIFIED]
    failed = {result.name for result in results if result.verdict != VERIFIED}
    if not passed or not failed:
        return ""
    if failed == {TRUNCATED_NEWEST}:
        return ("Variants disagree: only the run whose newest checkpoint was torn failed: the command resumes from "
                "intact checkpoints but trusts the newest file unchecked, and a kill mid-write or a full disk "
                "leaves exactly that file")
    if failed == {SIGTERM_MID_STEP}:
        return ("Variants disagree: only the SIGTERM that landed inside a step failed, the one between two steps "
                "passed: the command saves or exits in its SIGTERM handler, in the middle of a step, so the "
                "checkpoint holds half a step; " + PREEMPTION_FIX)
    if failed == {SIGTERM_PREEMPTION}:
        return ("Variants disagree: only the SIGTERM run failed: checkpoints on the command's own schedule resume "
                "correctly, its preemption path does not; " + PREEMPTION_FIX)
    return why_variants_disagree(results)


def data_order_signature(results: list[VariantResult], epoch_length: int | None) -> str | None:
    """Every resume inside the first epoch reproduced the run and every resume in a later epoch did not: a fresh
    shuffling generator draws the first epoch's order again, so only a later epoch shows it — the cause, even when
    the checkpoints hold no generator whose difference would name it."""
    if not epoch_length:
        return None
    judged = [result for result in results if result.resumed_from_step is not None
              and result.verdict in (VERIFIED, STATE_DIFFERS) and result.name != TRUNCATED_NEWEST]
    # a resume at the boundary itself is either side, as the job counts it: it decides nothing
    early = [result for result in judged if (result.resumed_from_step or 0) < epoch_length]
    late = [result for result in judged if (result.resumed_from_step or 0) > epoch_length]
    if not early or not late or any(result.verdict != VERIFIED for result in early) \
            or any(result.verdict != STATE_DIFFERS for result in late):
        return None
    if any("data position" in result.message for result in late):
        return None  # a generator or position in the checkpoints already names it
    first = ", ".join(f"{result.name} from step {result.resumed_from_step}" for result in early)
    later = ", ".join(f"{result.name} from step {result.resumed_from_step}" for result in late)
    return (f"data order not restored: every resume inside the first epoch of {epoch_length} steps reproduced the run "
            f"({first}) and every resume in a later epoch did not ({later}): the signature of a shuffling DataLoader "
            "whose generator (or sampler) is created again from the seed instead of restored — a fresh generator "
            "draws the first epoch's order again; save its state at the epoch's start with the position in the "
            "epoch, and restore both")
