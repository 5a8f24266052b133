"""What a variant proved: one typed record for the built-in harness and the ``--cmd`` driver alike.

Both drivers fill a :class:`VariantResult` and nothing else, so a field is added, renamed or
documented in one place; :meth:`VariantResult.to_json` is ``summary.json``'s ``variants[]`` item
(``schemas/smoke-summary.v1.schema.json``). The verdict words and the reasoning over several
variants (which verdict wins, why variants disagree) live here for the same reason.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from spikelint.smoke.compare.leaves import Difference
    from spikelint.smoke.plan import VariantSpec

VERIFIED = "verified"
STATE_DIFFERS = "state_differs"
RESUME_FAILED = "resume_failed"
SETUP_ERROR = "setup_error"
INCOMPLETE = "incomplete"  # every variant run passed, but the plan could not cover what the job has (exit 3)

OPTIONAL = ("restart", "sigterm")  # written only when set


@dataclass
class VariantResult:
    """One interruption variant: what was done, what was compared, and the verdict with its reason."""

    name: str
    signal: str
    description: str
    expected_resume_step: int
    verdict: str = RESUME_FAILED  # until a comparison proves otherwise; INCOMPLETE: the variant tested nothing
    message: str = ""
    interrupted_at_step: int | None = None
    interrupted_exit: list[str] = field(default_factory=list)
    checkpoints_before_interruption: list[int] = field(default_factory=list)
    resumed_from_step: int | None = None
    refused_checkpoints: list[dict[str, Any]] = field(default_factory=list)
    removed_temporaries: list[str] = field(default_factory=list)
    leaves_compared: int = 0
    losses: dict[str, Any] | None = None
    data_position: dict[str, Any] | None = None
    restore_check: dict[str, Any] | None = None
    first_divergent_step: int | None = None
    differences: list[dict[str, Any]] = field(default_factory=list)
    restart: str | None = None  # "fork" or "exec": how the resumed process started
    notes: list[str] = field(default_factory=list)
    sigterm: dict[str, Any] | None = None  # SIGTERM variants: checkpoint write and signal-to-exit times

    @classmethod
    def of(cls, spec: VariantSpec, **known: Any) -> VariantResult:
        return cls(spec.name, spec.signal, spec.description, spec.expected_resume_step, **known)

    def to_json(self) -> dict[str, Any]:
        """The ``variants[]`` item of ``summary.json``, fields in schema order, optional ones only when set."""
        item = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in OPTIONAL:
            if item[name] is None:
                del item[name]
        return item


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def difference_json(variant: str, rank: int, difference: Difference, piece: str) -> dict[str, Any]:
    return {
        "variant": variant,
        "rank": rank,
        "key": difference.key,
        "piece": piece,
        "kind": difference.kind,
        "max_abs_diff": difference.max_abs_diff,
        "detail": difference.detail,
    }


def why_variants_disagree(results: list[VariantResult]) -> str:
    """When some variants pass and others fail, what tells them apart."""
    passed = [result for result in results if result.verdict == VERIFIED]
    failed = [result for result in results if result.verdict != VERIFIED]
    if not passed or not failed:
        return ""
    reasons = []
    if any(result.restart == "exec" for result in failed) and all(result.restart != "exec" for result in passed):
        reasons.append(
            "only the resume in a fresh interpreter failed: the job's state depends on something fork shares with "
            "the parent (an RNG drawn at import time, set or dict order under the string-hash seed, object "
            "addresses); a real restart has none of it"
        )
    odd = [result for result in failed if result.resumed_from_step is not None and result.resumed_from_step % 2]
    if odd and all((result.resumed_from_step or 0) % 2 == 0 for result in passed):
        steps = ", ".join(f"{result.name} from step {result.resumed_from_step}" for result in odd)
        reasons.append(
            f"the variants that failed resumed off the job's period ({steps}): state that lives only between "
            "two period boundaries, such as accumulated gradients or a micro-step counter, is not in the checkpoint"
        )
    if not reasons:
        reasons.append("failed: " + ", ".join(r.name for r in failed) + "; passed: " + ", ".join(r.name for r in passed))
    return "Variants disagree: " + "; ".join(reasons)


def overall_verdict(results: list[VariantResult]) -> str:
    """A failure wins; then a variant that could not test what it aims at (INCOMPLETE); else VERIFIED."""
    verdicts = {result.verdict for result in results}
    for verdict in (RESUME_FAILED, STATE_DIFFERS, INCOMPLETE):
        if verdict in verdicts:
            return verdict
    return VERIFIED if results else SETUP_ERROR
