"""What one ``--cmd`` variant proved: the verdict and message from its runs' output and files.

The runs are opaque processes, so everything here rests on what they printed (the step lines
and losses), how they ended, and the checkpoint files the resumed run wrote.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any
from typing import Iterator
from typing import NamedTuple

from spikelint.smoke.result import STATE_DIFFERS
from spikelint.smoke.result import INCOMPLETE
from spikelint.smoke.result import VERIFIED
from spikelint.smoke.result import VariantResult
from spikelint.smoke.result import describe_exit
from spikelint.smoke.result import difference_json
from spikelint.smoke.command.process import CommandRun
from spikelint.smoke.command.process import written_since
from spikelint.smoke.command.files import Damage
from spikelint.smoke.command.files import complete_steps
from spikelint.smoke.command.files import is_state_file
from spikelint.smoke.command.files import step_of
from spikelint.smoke.compare.causes import causes
from spikelint.smoke.compare.causes import describe_causes
from spikelint.smoke.compare.causes import DATA_POSITION
from spikelint.smoke.compare.causes import MODEL
from spikelint.smoke.compare.causes import OPTIMIZER
from spikelint.smoke.compare.causes import RNG
from spikelint.smoke.compare.causes import SCHEDULER_PARTS
from spikelint.smoke.compare.causes import group_of
from spikelint.smoke.compare.leaves import flatten
from spikelint.smoke.command.process import snapshot
from spikelint.smoke.compare.loaders import TRAINER_STATE
from spikelint.smoke.compare.loaders import compare_checkpoints
from spikelint.smoke.compare.loaders import file_format
from spikelint.smoke.compare.loaders import load_checkpoint_file
from spikelint.smoke.plan import KILL_OFF_PERIOD
from spikelint.smoke.plan import VariantSpec
from spikelint.smoke.command.steplines import says_it_loads

NON_FINITE = ("nan", "-nan", "inf", "-inf")
OPTIMIZER_GROUP = re.compile(r"(?:^|\.)param_groups\.\d+\.lr$")
EXIT_PREEMPTED = 143
PREEMPTION_FIX = ("on SIGTERM only set a flag, then checkpoint at the next step boundary and exit "
                  f"{EXIT_PREEMPTED}")


class Runs(NamedTuple):
    """A variant's runs and folders, as the driver hands them over."""

    reference: CommandRun
    reference_folder: Path
    interrupted: CommandRun
    resumed: CommandRun
    folder: Path
    before_resume: dict[Path, int]
    damage: Damage | None
    every: int  # the variant's {every}
    plan_every: int  # --checkpoint-every
    steps: int
    resume_arg: str
    loaded: list[Path]  # the checkpoint files the resumed run read (its own words, else access times)
    by_checkpoints: bool = False  # the job prints no step lines: its steps are the checkpoints it writes
    interrupted_from: int = 0  # the step the interrupted run started after (a resumed run killed again: > 0)


def resume_point(runs: Runs) -> int | None:
    """The step the resumed run started after. From step lines: the one before its first. From
    checkpoints alone: the step its own resume line names (``Resuming training from checkpoint with
    epoch 1 and global step 16``), else the step of the checkpoint it read, else the newest complete
    one on disk before the resume; ``None`` when nothing says."""
    resumed = runs.resumed
    if not runs.by_checkpoints:
        return min(resumed.steps) - 1 if resumed.steps else None
    named = [mention.step for mention in resumed.mentions if says_it_loads(mention.text)]
    if named:
        return named[0]
    read = [step for name in runs.loaded if (step := step_of(name)) is not None]
    if read:
        return max(read)
    complete = complete_steps(runs.before_resume, runs.reference_folder)
    usable = [step for step in complete if runs.damage is None or step != runs.damage.step]
    return usable[-1] if usable else 0


def describe(code: int | None) -> str:
    """How a command run ended, in the words the job-object runs use."""
    return "no exit code" if code is None else describe_exit(code)


# What frameworks print when a resume cannot reproduce the run: the job's own words name the cause.
FRAMEWORK_WARNINGS = (
    (re.compile(r"You're resuming from a checkpoint that ended before the epoch ended and your dataloader is\s*"
                r"not resumable[^\n]*"), "data position not restored"),  # Lightning
    (re.compile(r"[^\n]*(?:not|isn't) (?:fault[- ]tolerant|resumable)[^\n]*", re.IGNORECASE),
     "data position not restored"),
    # Lightning's fit(ckpt_path="last") without a last checkpoint (ModelCheckpoint(save_last=False))
    (re.compile(r"[^\n]*ckpt_path=\"?last\"?\)? is set, but there is no last checkpoint available[^\n]*"),
     "no checkpoint was loaded"),
)


def framework_warning(run: CommandRun) -> tuple[str, str] | None:
    """(what it says went wrong, the line) of a framework's own warning in the run's log, the first found."""
    try:
        text = run.log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for pattern, cause in FRAMEWORK_WARNINGS:
        found = pattern.search(text)
        if found:
            return cause, " ".join(found.group().split())[:300]
    return None


def carried_over(runs: Runs) -> str:
    """For a second resume: what the checkpoint it loaded, written by the first resumed run, already had
    wrong. One resume reads what the uninterrupted process saved; only a second reads what a resumed
    process saved, so a difference there (judged harmless bookkeeping after one resume) is the cause.
    A file the second resumed run rewrote (Lightning's ``last.ckpt``) no longer holds what it loaded: not judged."""
    rewritten = set(written_since(runs.folder, runs.before_resume))
    names = [name for name in runs.loaded if is_state_file(name) and name not in rewritten]
    if not runs.interrupted_from or not names:
        return ""
    comparison = compare_checkpoints(runs.reference_folder, runs.folder, names)
    if not comparison.differences:
        return ""
    keys = sorted({f"{file}:{difference.key}" for file, difference in comparison.differences})
    shown = f"{', '.join(keys[:3])}{' …' if len(keys) > 3 else ''}"
    written = ", ".join(map(str, names[:2]))
    if all(BOOKKEEPING.search(difference.key) for _, difference in comparison.differences):
        return (f"state not saved back after a resume: the checkpoint the first resumed run wrote ({written}) "
                f"already differs from the uninterrupted run's in progress counters {shown}, and the second resume "
                "read it: the job resumes from these counters, so save them counted from step 0, not from the "
                "process start")
    return (f"the first resume was already not exact: the checkpoint the first resumed run wrote ({written}) "
            f"differs from the uninterrupted run's in {shown}, and the second resume read it (the other SIGKILL "
            "variants name what the first resume left out)")


def losses_by_step(runs: Runs, resume_step: int) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    """(reference, resumed, interrupted) step -> loss. From step lines; for a job that prints no step,
    from its loss lines in order, where the uninterrupted run printed exactly one per step (a stock
    Trainer with ``--logging_steps 1``): the resumed run's first loss is then step ``resume_step + 1``."""
    reference, resumed, interrupted = runs.reference, runs.resumed, runs.interrupted
    if not runs.by_checkpoints:
        return reference.steps, resumed.steps, interrupted.steps
    if len(reference.loss_lines) != runs.steps:
        return {}, {}, {}
    return ({step: loss for step, loss in enumerate(reference.loss_lines, 1)},
            {step: loss for step, loss in enumerate(resumed.loss_lines, resume_step + 1)},
            {step: loss for step, loss in enumerate(interrupted.loss_lines, runs.interrupted_from + 1)})


# Progress bookkeeping: counters of a framework's loops that say how far a loop got, not what it computed
# (Lightning's ``loops.fit_loop.epoch_progress.total.started``, a validation loop's ``batch_progress``).
BOOKKEEPING = re.compile(r"(?:^|\.)loops\.(?:[\w]+\.)*?\w*progress\.(?:total|current)\.(?:ready|started|processed|completed)$")


def bookkeeping_only(differences: list[tuple[str, Any]], names: list[Path], loss_step: int | None,
                     with_loss: int) -> bool:
    """Every difference is a progress counter, and its consequence was tested: losses were compared and
    equal, and a checkpoint written after the first one that differs was compared (so the resumed run
    went at least a checkpoint period past it) with no difference but counters."""
    if not differences or loss_step is not None or not with_loss:
        return False
    if not all(BOOKKEEPING.search(difference.key) for _, difference in differences):
        return False
    first_file = differences[0][0]
    later = [name for name in names if step_of(name) is not None and step_of(Path(first_file)) is not None
             and (step_of(name) or 0) > (step_of(Path(first_file)) or 0)]
    return bool(later) or len(names) > 1


def first_loss_difference(reference: dict[int, str], other: dict[int, str], last: int, start: int = 1) -> int | None:
    for step in range(start, last + 1):
        if step in other and reference.get(step) != other[step]:
            return step
    return None


def losses_compared(reference: dict[int, str], other: dict[int, str], last: int, start: int = 1) -> int:
    """How many steps of ``start``..``last`` both runs printed a loss for: step lines without a loss
    compare nothing, and an empty list of losses never counts as equal."""
    return sum(1 for step in range(start, last + 1) if reference.get(step) and other.get(step))


def empty_variant(spec: VariantSpec) -> VariantResult:
    return VariantResult.of(spec, restart="exec")


def single_checkpoint_torn(damage: Damage, what_happened: str) -> str:
    return (f"resume failed: the job keeps a single checkpoint, {damage.path}, and with it torn ({damaged(damage)}) "
            f"there is nothing to fall back to: the run {what_happened}; a kill during that write or a full disk "
            "loses all training so far. Keep the previous checkpoint until the new one is complete (write to a "
            "temporary name, fsync, rename), and fall back to it when the newest does not load")


def damaged(damage: Damage) -> str:
    return f"{damage.path} (truncated to {damage.truncated_to} of {damage.size_bytes} bytes, as a kill mid-write leaves it)"


def incomplete_newest_before(runs: Runs) -> tuple[int, int, int] | None:
    """The newest checkpoint on disk before the resume, when the kill left it without all its files."""
    present = set(runs.before_resume)
    steps = sorted({step for name in present if (step := step_of(name)) is not None}
                   | {step for folder in runs.folder.iterdir() if folder.is_dir()  # a folder the kill left empty
                      and (step := step_of(Path(folder.name))) is not None and is_state_file(Path(folder.name))})
    if not steps:
        return None
    expected = {name for name in snapshot(runs.reference_folder) if step_of(name) == steps[-1]}
    have = {name for name in present if step_of(name) == steps[-1]}
    return (steps[-1], len(have & expected), len(expected)) if expected and not expected <= have else None


def in_place_fix(runs: Runs) -> str:
    """How to stop trusting the newest checkpoint, in the framework's own terms where it is recognised."""
    if any(name.name == TRAINER_STATE for name in snapshot(runs.reference_folder)):
        return ("Hugging Face Trainer writes checkpoint-N/ in place, and the resume trusts the folder it is given "
                "(the highest-numbered one here; resume_from_checkpoint=True takes it too, unchecked, through "
                "transformers.trainer_utils.get_last_checkpoint): resume from the newest checkpoint-N whose "
                "trainer_state.json, optimizer.pt and weights load, or delete an incomplete folder before resuming")
    return ("write each checkpoint to a temporary name and rename it when complete, check it before trusting it "
            "(load it in try/except), and fall back to the one before it; keep two")


def resume_problem(spec: VariantSpec, runs: Runs) -> str | None:
    """Why the resumed run proves nothing, before any file is compared; a framework's own warning in the
    resumed run's log (Lightning: no last checkpoint to load) is quoted first."""
    problem = _resume_problem(spec, runs)
    warned = framework_warning(runs.resumed) if problem is not None else None
    if problem is None or warned is None:
        return problem
    return f"{warned[0]}: the job's own log says \"{warned[1]}\"; {problem}"


def _resume_problem(spec: VariantSpec, runs: Runs) -> str | None:
    resumed, damage = runs.resumed, runs.damage
    if resumed.timed_out:
        return f"resume failed: the resumed command did not finish before --timeout; last output: {resumed.tail()}"
    if resumed.exit_code != 0:
        if damage is not None and damage.step is None:
            return single_checkpoint_torn(damage, "crashed")
        if damage is not None:
            return (f"resume failed: the newest checkpoint was torn, {damaged(damage)}, and the resumed command "
                    f"ended with {describe(resumed.exit_code)} instead of refusing it and loading the checkpoint "
                    f"before it: {in_place_fix(runs)}; last output: {resumed.tail()}")
        incomplete = incomplete_newest_before(runs)
        if incomplete is not None:
            step, present, expected = incomplete
            return (f"resume failed: the kill landed while the job was writing its checkpoint of step {step} ({present} "
                    f"of the {expected} files the uninterrupted run wrote there), and the resumed command took that "
                    f"incomplete checkpoint and ended with {describe(resumed.exit_code)}: {in_place_fix(runs)}; "
                    f"last output: {resumed.tail()}")
        return f"resume failed: the resumed command ended with {describe(resumed.exit_code)}; last output: {resumed.tail()}"
    if not resumed.steps and not runs.by_checkpoints:
        return "resume failed: the resumed command printed no step lines (see --progress-regex)"
    resume_step = resume_point(runs) or 0
    if runs.by_checkpoints and spec.signal == "SIGTERM" and runs.interrupted.exit_code == -signal.SIGTERM:
        return (f"the command was killed by SIGTERM: it has no handler that saves at the step boundary, so every "
                f"preemption loses the steps since its last checkpoint (up to {runs.every}); {PREEMPTION_FIX}")
    if damage is not None and damage.step is not None and resume_step >= damage.step and (
            not runs.loaded or Path(damage.path) in runs.loaded):
        return (f"resume failed: it loaded the damaged checkpoint of step {damage.step}, {damaged(damage)}: check a "
                "checkpoint before trusting it (load it in try/except, or compare a size or checksum recorded after "
                "the write) and fall back to the one before it; keep two")
    if damage is not None and damage.step is None and resume_step == 0:
        return single_checkpoint_torn(damage, "started again at step 1")
    if resume_step == 0:
        if damage is not None:
            return (f"resume failed: after the newest checkpoint was torn, {damaged(damage)}, the resumed command "
                    "started again at step 1 instead of falling back to the checkpoint before it")
        return (f"resume failed: the resumed command started again at step 1; did {runs.resume_arg!r} reach it "
                "({resume} in --cmd)?")
    last = runs.interrupted.last_step() or 0
    if spec.signal == "SIGTERM" and resume_step < last:
        note, contradicts = loaded_note(runs, resume_step)
        if contradicts and note is not None:  # it did save at the boundary: the step it records is wrong
            return (f"after SIGTERM (sent {runs.interrupted.signal_point()}) the command saved and ended with "
                    f"{describe(runs.interrupted.exit_code)}, but {SAVED_ELSEWHERE}: {note}")
        return (f"after SIGTERM (sent {runs.interrupted.signal_point()}) the command ended with "
                f"{describe(runs.interrupted.exit_code)} without a checkpoint at the step boundary: the resume "
                f"started at step {resume_step}, though the run had reached step {last}, so every preemption "
                f"repeats up to {runs.every} steps; {PREEMPTION_FIX}")
    return None


SAVED_ELSEWHERE = "the resume did not start where it saved"


def placement_notes(spec: VariantSpec, runs: Runs, resume_step: int, on_disk: list[int]) -> list[str]:
    """Where the resume started against where the plan meant it to."""
    notes = []
    complete = set(complete_steps(runs.before_resume, runs.reference_folder))
    newest = max((step for step in on_disk if step <= (runs.interrupted.last_step() or 0) and step in complete),
                 default=None)
    if runs.damage is None and spec.signal == "SIGKILL" and newest is not None and resume_step < newest:
        notes.append(f"resumed from step {resume_step} although the checkpoint of step {newest} was on disk: the "
                     "command does not load its newest checkpoint (sorted by name rather than by step?)")
    if spec.name == KILL_OFF_PERIOD and (resume_step % 2 == 0 or resume_step % runs.plan_every == 0):
        notes.append(f"the kill landed {runs.interrupted.signal_point()}, so the resume started at "
                     f"step {resume_step}, on a period boundary: this variant proved no more than the others")
    if spec.signal == "SIGTERM" and runs.interrupted.exit_code not in (0, EXIT_PREEMPTED):
        notes.append(f"after SIGTERM the command ended with {describe(runs.interrupted.exit_code)}, not "
                     f"{EXIT_PREEMPTED} (a launcher such as torchrun reports its workers' SIGTERM this way)")
    return notes


def checkpoint_leaves(folder: Path, names: list[Path]) -> Iterator[tuple[str, Any]]:
    """(dotted key, leaf) of every compared file that loads; unreadable ones the comparison has named."""
    for name in names:
        try:
            loaded = load_checkpoint_file(folder / name)
        except Exception:  # noqa: BLE001 - unreadable here: the comparison has named it
            continue
        yield from flatten(loaded)


def optimizer_missing(folder: Path, names: list[Path]) -> bool:
    """The compared files hold float tensors but nothing shaped like an optimizer's state dict.

    The checkpoints are all the command driver sees, so a piece the job never saves cannot
    differ on disk; only the model drifts. An optimizer's state dict is recognised by its shape
    (``param_groups.<n>.lr`` beside ``state``), whatever the job named it (``opt``, ``optim``,
    ``optimizer_states``). Only the optimizer is named: every training job has one, while a
    scheduler or an RNG state may rightly be absent.
    """
    tensors = False
    for key, value in checkpoint_leaves(folder, names):
        if OPTIMIZER_GROUP.search(key):
            return False
        tensors = tensors or getattr(value, "is_floating_point", lambda: False)()
    return tensors


def _holds_group(folder: Path, names: list[Path], group: str) -> bool:
    """Whether a compared file holds a leaf the cause groups file under ``group``."""
    for key, value in checkpoint_leaves(folder, names):
        shape = getattr(value, "shape", None)
        detail = f"{value.dtype}{list(shape)}" if shape is not None and hasattr(value, "dtype") else type(value).__name__
        if group_of(key, detail) == group:
            return True
    return False


def rng_missing(folder: Path, names: list[Path]) -> bool:
    """No compared file holds anything the cause groups call an RNG state: a byte tensor (torch's
    generator state) or a key part naming one (``rng``, ``cuda_rng_state``), a loader's generator
    being the data position instead."""
    return not _holds_group(folder, names, RNG)


LEARNING_RATE = re.compile(r"(?:^|\.)param_groups\.\d+\.lr$")


def scheduler_missing(folder: Path, names: list[Path]) -> bool:
    """No compared file holds anything shaped like an LR scheduler's state (``last_epoch``, ``_step_count``)."""
    return not any(SCHEDULER_PARTS & set(key.lower().split(".")) for key, _ in checkpoint_leaves(folder, names))


def data_position_missing(folder: Path, names: list[Path]) -> bool:
    """No compared file holds a data position (a sampler, a loader's generator, the batches served):
    a resumed run then draws its batches afresh, whatever else it restores."""
    return not _holds_group(folder, names, DATA_POSITION)


DATA_FIX = ("save the sampler's or loader generator's state at the epoch's start and the batches served, and "
            "skip them on resume (Accelerate: Accelerator(use_seedable_sampler=True) and "
            "accelerator.skip_first_batches; Lightning: a DataLoader with state_dict/load_state_dict)")


def stored_step(folder: Path, name: Path) -> int | None:
    """The step a loaded checkpoint holds: the number in its name, else a top-level counter in the file."""
    step = step_of(name)
    if step is not None or file_format(folder / name) not in ("torch", "json", "trainer_state"):
        return step
    try:
        loaded = load_checkpoint_file(folder / name)
    except Exception:  # noqa: BLE001 - unreadable: nothing to say about its step
        return None
    if isinstance(loaded, dict):
        for key in ("global_step", "step", "iteration", "completed_steps"):
            value = loaded.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def loaded_note(runs: Runs, resume_step: int) -> tuple[str | None, bool]:
    """What the resumed run loaded, and whether its first step line contradicts it (an off-by-N counter)."""
    if not runs.loaded:
        return None, False
    name = runs.loaded[0]
    rewritten = name in written_since(runs.folder, runs.before_resume)  # what it holds now is a later step
    step = step_of(name) if rewritten else stored_step(runs.folder, name)
    shown = ", ".join(str(path) for path in runs.loaded[:4])
    if step is None or step == resume_step:
        return f"the resumed run loaded {shown}", False
    off = resume_step - step
    return (f"the resumed run loaded {name}, the checkpoint of step {step}, but its first step line is step "
            f"{resume_step + 1}: the step counter it saves or restores is off by {off:+d}, so the run "
            f"{'skips' if off > 0 else 'repeats'} {abs(off)} step(s) after every resume"), True


def record_losses(result: VariantResult, runs: Runs, resume_step: int) -> tuple[int | None, int]:
    """The resumed run's losses against the reference's from ``resume_step + 1``, written into ``result``:
    (the first step that differs, how many steps had a loss on both sides)."""
    reference_losses, resumed_losses, _ = losses_by_step(runs, resume_step)
    loss_step = first_loss_difference(reference_losses, resumed_losses, runs.steps, start=resume_step + 1)
    with_loss = losses_compared(reference_losses, resumed_losses, runs.steps, start=resume_step + 1)
    result.losses = {"compared_steps": [resume_step + 1, runs.steps], "steps_with_a_loss": with_loss,
                        "equal": (loss_step is None) if with_loss or loss_step is not None else None,
                        "first_differing_step": loss_step}
    result.first_divergent_step = loss_step
    return loss_step, with_loss


def without_checkpoints(result: VariantResult, runs: Runs, resume_step: int) -> VariantResult:
    """The resumed run wrote no checkpoint file (a best-only ModelCheckpoint whose score never improved
    again): its losses are all there is. Differing losses prove the resume wrong; equal ones pass the
    variant with nothing compared on disk, which makes the whole run INCOMPLETE, never VERIFIED."""
    loss_step, with_loss = record_losses(result, runs, resume_step)
    if loss_step is not None:
        result.verdict = STATE_DIFFERS
        result.message = (f"resumed from step {resume_step}; the resumed command wrote no checkpoint file to "
                          f"compare, and its losses differ from the uninterrupted run's from step {loss_step}")
    elif with_loss:
        result.verdict = VERIFIED
        result.message = (f"resumed from step {resume_step}; the losses of steps {resume_step + 1}-{runs.steps} "
                          "equal the uninterrupted run, but the resumed command wrote no checkpoint file to compare")
    elif not any(step % runs.every == 0 for step in range(resume_step + 1, runs.steps + 1)):
        # the signal landed after the last checkpoint this interval writes: nothing was due, nothing is wrong
        result.verdict = INCOMPLETE
        result.message = (f"the resume started at step {resume_step}, after the last checkpoint the run writes every "
                          f"{runs.every} steps ({runs.interrupted.signal_point()}), and the command prints no loss: "
                          "nothing was left to compare, so this variant tested nothing; print the loss on the step "
                          "lines (or give it more --steps) so that a late signal still leaves something to compare")
    else:
        result.message = "resume failed: the resumed command wrote no checkpoint files and printed no loss to compare"
    return result


def judge(spec: VariantSpec, result: VariantResult, runs: Runs, on_disk: list[int]) -> VariantResult:
    """Fill in ``result`` from the variant's runs: resume checks, file comparison, losses."""
    if runs.resumed.exit_code == 0:
        result.resumed_from_step = resume_point(runs)
    finished = max(complete_steps(runs.before_resume, runs.reference_folder), default=0)
    if runs.damage is None and finished >= runs.steps:  # the signal came after the last checkpoint was written
        result.verdict = INCOMPLETE
        result.message = (f"the interrupted run had already written its last checkpoint (step {finished}) when the "
                          f"signal landed ({runs.interrupted.signal_point()}): nothing was left to resume, so this "
                          f"variant tested nothing (the resumed command ended with {describe(runs.resumed.exit_code)})")
        return result
    problem = resume_problem(spec, runs)
    if problem is not None:
        result.message = problem
        if SAVED_ELSEWHERE in problem:  # it resumed, from the wrong step: the state differs, the resume ran
            result.verdict = STATE_DIFFERS
        return result
    resumed, damage = runs.resumed, runs.damage
    resume_step = resume_point(runs) or 0
    result.resumed_from_step = resume_step
    if resume_step >= runs.steps:  # the signal was delivered after the last step: nothing was left to resume
        result.verdict = INCOMPLETE
        result.message = (f"the resume started at step {resume_step}, the last step of the run ({runs.interrupted.signal_point()}"
                          "): nothing was left to resume, so this variant tested nothing; a slower step or more --steps "
                          "gives the signal room")
        return result
    torn_read = damage is not None and damage.step is not None and resume_step >= damage.step
    if damage is not None and not torn_read:
        result.refused_checkpoints = [{
            "path": damage.path, "step": damage.step or 0, "rank": 0,
            "reason": f"truncated to {damage.truncated_to} of {damage.size_bytes} bytes; the resumed command "
                      f"loaded {runs.loaded[0] if runs.loaded else 'the checkpoint'} of step {resume_step} instead"}]
    # the earliest checkpoint first: its first difference is where the resumed state went wrong
    loaded, counter_off = loaded_note(runs, resume_step)
    names = sorted((name for name in written_since(runs.folder, runs.before_resume) if is_state_file(name)),
                   key=lambda name: (step_of(name) is None, step_of(name) or 0, str(name)))
    if not names:
        return without_checkpoints(result, runs, resume_step)
    comparison = compare_checkpoints(runs.reference_folder, runs.folder, names)
    leaves, differences, problems = comparison.leaves, comparison.differences, comparison.problems
    result.leaves_compared = leaves
    result.differences = [dict(difference_json(spec.name, 0, d, file), key=f"{file}:{d.key}")
                             for file, d in differences[:25]]
    reference_losses, _, interrupted_losses = losses_by_step(runs, resume_step)
    loss_step, with_loss = record_losses(result, runs, resume_step)
    result.notes = [f"compared files: {', '.join(str(name) for name in names)}", *result.notes,
                       *comparison.not_compared, *comparison.notes, *placement_notes(spec, runs, resume_step, on_disk)]
    if loaded is not None and not counter_off:
        result.notes.append(loaded)
    before = first_loss_difference(reference_losses, interrupted_losses, max(interrupted_losses, default=0))
    nan = next((step for step, text in sorted(reference_losses.items()) if text.lower() in NON_FINITE), None)
    if before is not None and runs.interrupted_from:
        result.verdict = STATE_DIFFERS
        result.message = (f"the first resumed run (from step {runs.interrupted_from}) already differed from the "
                          f"uninterrupted one at step {before}, before it was killed again: the first resume "
                          "is not exact (see the other SIGKILL variants)")
    elif before is not None:
        result.verdict = STATE_DIFFERS
        result.message = (f"the interrupted run already differed from the uninterrupted one at step {before}: "
                          "the command is not deterministic")
    elif nan is not None:
        result.verdict = STATE_DIFFERS
        result.message = f"the loss is {reference_losses[nan]} at step {nan}: non-finite losses prove nothing"
    elif problems:
        result.message = "resume failed: " + "; ".join(problems)
    elif bookkeeping_only(differences, names, loss_step, with_loss):
        # progress counters that fed nothing: every weight and loss after them was equal (decided by consequence)
        result.verdict = VERIFIED
        keys = sorted({f"{file}:{difference.key}" for file, difference in differences})
        result.notes.append(f"progress bookkeeping differs and is not state: {', '.join(keys[:4])}"
                            f"{' …' if len(keys) > 4 else ''}; the resumed run went on past it with every weight, "
                            "optimizer state and loss equal")
        result.message = (f"resumed from step {resume_step}; {leaves} leaves of {len(names)} checkpoint file(s) "
                          f"and the losses of steps {resume_step + 1}-{runs.steps} equal the uninterrupted run bit "
                          f"for bit, except progress bookkeeping ({len(keys)} counter(s)) that fed nothing")
        result.differences = []
    elif differences or loss_step is not None:
        result.verdict = STATE_DIFFERS
        named = describe_causes(causes(differences, resume_step), resume_step)
        parts = [f"resumed from step {resume_step}, but the {named or 'state differs'}"]
        if counter_off and loaded is not None:
            parts.insert(0, f"resumed from step {resume_step}: {loaded}")
            parts[1] = f"the {named or 'state differs'}"
        warned = framework_warning(resumed)
        if warned is not None:  # the job's own words come first: they name what was not restored
            parts.insert(0, f"{warned[0]}: the job's own log says \"{warned[1]}\"")
        if differences:
            file, first = differences[0]
            delta = f", largest |difference| {first.max_abs_diff:.3g}" if first.max_abs_diff is not None else ""
            parts.append(f"first differing key {file}:{first.key} ({first.kind}{delta})")
        if loss_step is not None:
            parts.append(f"losses differ from step {loss_step}")
        found_causes = {cause.group for cause in causes(differences, resume_step)}
        carried = carried_over(runs)
        if differences and found_causes <= {MODEL, OPTIMIZER} and not counter_off and warned is None and not carried and \
                not rng_missing(runs.reference_folder, names) and data_position_missing(runs.reference_folder, names):
            # only the weights and their moments differ, the RNG was restored, and nothing says where the data
            # was: the resumed run trained on other batches (the cause comes first, its consequences after)
            parts.insert(0, "data position not restored: no checkpoint file holds a sampler, loader generator or "
                            "batches served, and only the weights and optimizer moments differ after the resume, "
                            f"so the resumed run trained on other batches; {DATA_FIX}")
        if loss_step == resume_step + 1 and rng_missing(runs.reference_folder, names):
            parts.append("no RNG state in any checkpoint file and the losses differ from the first resumed step: "
                         "save torch.get_rng_state() (and NumPy's, Python's and CUDA's generators) in the checkpoint "
                         "and restore them on resume, or dropout and augmentation draw differently after every resume")
        if any(LEARNING_RATE.search(difference.key) for _, difference in differences) and \
                scheduler_missing(runs.reference_folder, names):
            parts.insert(0, "LR scheduler not restored: the optimizer's learning rate differs after the resume and no "
                            "checkpoint file holds a scheduler's state; save scheduler.state_dict() in the checkpoint "
                            "and load it on resume, or the schedule restarts from its first step")
        if carried:
            parts.insert(0, carried)
        if optimizer_missing(runs.reference_folder, names):
            parts.append("no optimizer state in any checkpoint file, only the model's: save optimizer.state_dict() "
                         "in the checkpoint and load it on resume, or every resume restarts the optimizer's moments")
        result.message = "; ".join(parts)
    else:
        result.verdict = VERIFIED
        refused = f", the torn {damage.path} refused" if damage is not None else ""
        if damage is not None and torn_read:
            refused = (f"; the torn {damage.path} was not read: the job loaded "
                       f"{', '.join(map(str, runs.loaded))}, an intact checkpoint of the same step")
        compared = f"{leaves} leaves of {len(names)} checkpoint file(s)"
        result.message = (
            f"resumed from step {resume_step}{refused}; {compared} and the losses of steps {resume_step + 1}-"
            f"{runs.steps} equal the uninterrupted run bit for bit" if with_loss else
            f"resumed from step {resume_step}{refused}; {compared} equal the uninterrupted run bit for bit; no loss "
            "was compared (the step lines after the resume print none)")
    return result
