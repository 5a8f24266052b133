"""The cause of a ``--cmd`` state difference, named by what the differing leaves are.

A checkpoint's keys are the team's own (``opt``, ``sched``, ``model``), so a leaf is placed in a
state group by the shape of what holds it, not by a substring of its name: an optimizer's state
dict is ``state.<n>.<buffer>`` beside ``param_groups``; a scheduler's holds ``last_epoch`` and
``_step_count``; an RNG state is a ``uint8`` byte tensor (torch) or 624 ``uint32`` words (NumPy).
Counters are whole key parts (``step``, ``global_step``, ``epoch``); data position is a key part
naming a sampler, a loader or a position in the epoch. Whatever is left is the model.
"""

from __future__ import annotations

import re
from typing import Iterable
from typing import NamedTuple

from spikelint.smoke.compare.leaves import Difference

OPTIMIZER = "optimizer"
SCHEDULER = "scheduler"
STEP_COUNTER = "step counter"
RNG = "RNG"
DATA_POSITION = "data position"
MODEL = "model"
# Causes before consequences: a wrong counter, schedule, RNG or data order makes the optimizer
# state and the weights drift after it, so those two come last unless a counter in them says why.
GROUP_ORDER = (STEP_COUNTER, SCHEDULER, RNG, DATA_POSITION, OPTIMIZER, MODEL)

# an optimizer's state by its shape: ``state.<n>.<buffer>`` beside ``param_groups``, or keyed by parameter
# name as DCP's get_optimizer_state_dict writes it (``optim.state.net1.weight.exp_avg``)
OPTIMIZER_LEAF = re.compile(r"(?:^|\.)(?:state\.\d+\.[^.]+|param_groups\.\d+\.[^.]+(?:\.\d+)?|"
                            r"state\.[\w.]+\.(?:exp_avg|exp_avg_sq|max_exp_avg_sq|momentum_buffer|square_avg|"
                            r"acc_delta|sum|step))$")
SCHEDULER_PARTS = {"last_epoch", "_step_count", "base_lrs", "_last_lr", "_get_lr_called_within_step"}
COUNTER_PARTS = {"step", "global_step", "steps", "epoch", "iteration", "iter", "completed_steps", "num_updates",
                 "consumed_samples", "consumed_train_samples", "current_step"}
DATA_PARTS = {"sampler", "loader", "dataloader", "data_loader", "loader_generator", "generator", "batch_in_epoch",
              "batch_idx", "position", "served", "epoch_start", "consumed", "data_position", "combined_loader",
              "sampler_state", "dataloader_state"}
RNG_SHAPE = re.compile(r"torch\.uint8\[\d+\]|uint32\[624\]")


def is_rng_part(part: str) -> bool:
    return part in ("rng", "rng_state", "rng_states", "random_state") or part.startswith("rng_") or part.endswith(
        ("_rng", "_rng_state", "_rng_states"))


class Cause(NamedTuple):
    group: str
    keys: list[str]  # the differing keys of that group (unit:key), first few
    counters_off_by: list[tuple[str, float]]  # (key, |difference|) of counters off by the resume step


def group_of(key: str, detail: str) -> str:
    """The state group of one differing leaf (``key`` without its file prefix)."""
    parts = [part.lower() for part in key.split(".")]
    if OPTIMIZER_LEAF.search(key) and not SCHEDULER_PARTS & set(parts):
        return OPTIMIZER
    if SCHEDULER_PARTS & set(parts):
        return SCHEDULER
    if DATA_PARTS & set(parts):
        return DATA_POSITION
    if RNG_SHAPE.search(detail) or any(is_rng_part(part) for part in parts):
        return RNG
    if parts and parts[-1] in COUNTER_PARTS:
        return STEP_COUNTER
    return MODEL


def causes(differences: Iterable[tuple[str, Difference]], resume_step: int) -> list[Cause]:
    """The groups that differ in the first file that differs (the earliest after the load), causes first.

    Groups holding a counter off by exactly the resume step come first: that counter restarted.
    """
    ordered = list(differences)
    if not ordered:
        return []
    first_file = ordered[0][0]
    grouped: dict[str, Cause] = {}
    for file, difference in ordered:
        if file != first_file:
            continue
        group = group_of(difference.key, difference.detail)
        cause = grouped.setdefault(group, Cause(group, [], []))
        if len(cause.keys) < 3:
            cause.keys.append(f"{file}:{difference.key}")
        off = difference.max_abs_diff
        if off is not None and resume_step > 0 and abs(off - resume_step) < 1e-9 and group != MODEL:
            cause.counters_off_by.append((f"{file}:{difference.key}", off))
    return sorted(grouped.values(), key=lambda cause: (not cause.counters_off_by, GROUP_ORDER.index(cause.group)))


def describe_causes(found: list[Cause], resume_step: int) -> str:
    """``state differs in the first checkpoint the resumed run wrote (step-28.pt): scheduler (…); optimizer (…)``."""
    if not found:
        return ""
    parts = []
    for cause in found:
        text = f"{cause.group} ({', '.join(cause.keys)})"
        if cause.counters_off_by:
            key = cause.counters_off_by[0][0]
            if cause.group == OPTIMIZER:
                text += (f": its step count {key} is off by {resume_step}, the resume step: the optimizer "
                         "restarted at 0, its state was not saved or not loaded")
            else:
                text += f": {key} is off by {resume_step}, the resume step: it restarted instead of being restored"
        parts.append(text)
    first_file = found[0].keys[0].split(":", 1)[0] if found[0].keys else "the first checkpoint"
    return f"state differs in the first checkpoint the resumed run wrote ({first_file}): " + "; ".join(parts)
