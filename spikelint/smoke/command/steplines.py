"""Which lines of a command's output are training steps, and which only mention a step.

Real jobs print more than their step lines: ``resumed from …/step-24.pt at step 24``,
``Saving checkpoint at step 24``, ``Restoring states from the checkpoint path at …``, tqdm bars
rewritten with carriage returns. Read as steps, those lines move the resume point and invent
steps without a loss, so a correct job fails. A line is a step line when the progress pattern
matches it and it is neither a progress bar nor a line about saving, loading or resuming; the
others that match are kept as *mentions*, for the report and for the loaded checkpoint.
"""

from __future__ import annotations

import re
from typing import NamedTuple


EPOCH = re.compile(r"(?i)(?<![\w./-])epoch['\"]?(?:\s*[=:]\s*|\s+)(\d+)")
# Lines about checkpoints and resuming mention a step without being one ("Continuing training from
# global step 24", the Trainer's resume line, too); so do evaluation lines ("step 0: train loss 4.2,
# val loss 4.3", "Evaluating at step 20"): a validation pass is not a training step.
NOT_A_STEP = re.compile(r"(?i)\b(?:resum|restor|load|sav|checkpoint|ckpt|writ|skipp|wrote|continu)\w*|"
                        r"\b(?:val|valid|validation|validating|eval|evaluat\w*|test(?:ing)?)\b")
# tqdm and Lightning progress bars: "50%|█████     | 10/20 [00:01<00:00, 9.5it/s, loss=0.3]"
PROGRESS_BAR = re.compile(r"\d+%\||\|\s*\d+/\d+\s*\[|\d+(?:\.\d+)?(?:it/s|s/it)\b")
# Lines where a job says what it loaded: "Restoring states from …/last.ckpt", "resumed from …".
LOAD_LINE = re.compile(r"(?i)\b(?:resum|restor|load|read)\w*")
PATH_WORDS = re.compile(r"\S*/\S*")  # a folder named "…-resume" or "…/loader/" says nothing of loading


def says_it_loads(line: str) -> bool:
    """A line in which the job says it loaded or resumed something, read without the paths it names."""
    return LOAD_LINE.search(PATH_WORDS.sub(" ", line)) is not None
MAX_EXAMPLES = 3
MAX_LOAD_LINES = 50


class StepLine(NamedTuple):
    step: int
    loss: str  # "" when the line carries no loss
    epoch: int | None


class Mention(NamedTuple):
    """A line that matched the progress pattern but is about a checkpoint, a resume or a bar."""

    step: int
    text: str


# a tqdm bar on stderr without its newline, and the job's own line glued after it in the merged output:
# "Epoch 0:   0%|          | 0/4 [00:00<?, ?it/s]step=1 loss=6.89"
GLUED_BAR = re.compile(r"^.*\d+%\|[^|]*\|[^\[\]]*\[[^\]]*\](?=\S)")


def after_glued_bar(line: str) -> str:
    """The line without a progress bar that another line was printed straight after."""
    glued = GLUED_BAR.match(line)
    return line[glued.end():] if glued else line


def loss_only(line: str, loss: re.Pattern[str]) -> str | None:
    """The loss of a line that names no step (a stock Trainer's ``{'loss': '5.514', …, 'epoch': '0.5'}``),
    ``None`` for any other line: evaluation, saving and progress-bar lines are no training loss."""
    line = after_glued_bar(line)
    value = loss.search(line)
    if value is None or NOT_A_STEP.search(line) or PROGRESS_BAR.search(line):
        return None
    text = (value.group(1) or "").rstrip(",;.")
    try:
        float(text)  # "the default loss: `ForCausalLMLoss`" names a loss, it is not one
    except ValueError:
        return None
    return text


def read_line(line: str, progress: re.Pattern[str], loss: re.Pattern[str]) -> StepLine | Mention | None:
    """What one output line is: a step, a mention of a step, or neither."""
    line = after_glued_bar(line)
    found = progress.search(line)
    if not found:
        return None
    try:
        step = int(found.group(1))
    except (TypeError, ValueError):  # the regex's group is not the number (``(step)=\d+``): not a step line
        return None
    if NOT_A_STEP.search(line) or PROGRESS_BAR.search(line):
        return Mention(step, line.strip()[:200])
    value = loss.search(line)
    epoch = EPOCH.search(line)
    return StepLine(step, (value.group(1) or "").rstrip(",;") if value else "", int(epoch.group(1)) if epoch else None)


def output_lines(chunk: bytes) -> list[str]:
    """Lines of output, carriage-return rewrites of a progress bar counted as lines of their own."""
    return [piece for line in chunk.decode("utf-8", "replace").split("\n") for piece in line.split("\r")]


def epoch_length(epochs: dict[int, int]) -> int | None:
    """Steps per epoch from the epoch printed on each step line.

    ``epochs`` maps step -> epoch. Jobs differ by one in when they print the new epoch (before
    or after the step that ends the old one), so the length is the distance between two changes
    where two are seen, else the steps before the first change.
    """
    ordered = sorted(epochs.items())
    changes = [step for (_, before), (step, after) in zip(ordered, ordered[1:]) if after != before]
    if not changes:
        return None
    length = changes[1] - changes[0] if len(changes) > 1 else changes[0] - ordered[0][0]
    return length if length > 0 else None
