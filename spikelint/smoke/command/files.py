"""The checkpoints an opaque command left in its folder, and the torn one ``truncated-newest`` makes.

The command's checkpoint format is not known, so a checkpoint is named by the number after
``step``, ``iter`` or ``checkpoint`` in its path relative to the folder, else by its first number:
``step-8.pt``, ``epoch=0-step=8.ckpt``, ``checkpoint-8/optimizer.pt``, ``global_step8/`` and
``model_00008.safetensors`` and Composer's ``ep0-ba8-rank0.pt`` are all step 8; ``last.pt`` and
``ep3.pt`` have no step. The files of one step
are one checkpoint (a Hugging Face ``checkpoint-N/`` folder, a model file and per-rank RNG
files). Temporary and partial writes are left out, as ``command.snapshot`` does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable
from typing import NamedTuple

from spikelint.smoke.command.process import file_stats
from spikelint.smoke.command.process import snapshot
from spikelint.smoke.command.steplines import says_it_loads
from spikelint.smoke.command.steplines import epoch_length

NUMBER = re.compile(r"\d+")
# the step of a name per naming scheme: ``checkpoint-24``, ``step=24``, ``iter_000024``, Composer's
# ``ep1-ba24-rank0.pt`` (``ba`` is the batch, the step; ``ep`` the epoch, never the step)
STEP_NUMBER = re.compile(r"(?i)(?:step|iter|iteration|checkpoint|ckpt|(?<![a-z])ba)[-_=]?(\d+)")
EPOCH_NUMBER = re.compile(r"(?i)(?:epoch|(?<![a-z])ep)[-_=]?\d+")
PATH_WORD = re.compile(r"[^\s'\"`,;()\[\]]+")


# Files a job writes beside its checkpoints that are not training state: the model card the Trainer
# writes (``README.md``, which names the run folder), results and metrics summaries
# (``all_results.json``, ``train_results.json``), logs, plots, event files and config echoes.
NOT_STATE_FILE = re.compile(r"(?i)(?:\.(?:md|txt|log|csv|html|png|jpe?g|svg|ya?ml)|results?\.json|metrics\.json)$"
                            r"|^events\.out\.tfevents")
# folders of experiment trackers and loggers: what they hold is a record of the run, not its state
NOT_STATE_FOLDERS = frozenset(("runs", "logs", "wandb", "mlruns", "lightning_logs", "tensorboard", "tb_logs"))


CHECKPOINT_SUFFIXES = frozenset((".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".distcp", ".pkl", ".npy", ".npz"))


def is_state_file(relative: Path) -> bool:
    """Whether a file a job wrote holds training state (compared), or only a record of the run (not).
    A checkpoint file is state wherever it is (Lightning's ``lightning_logs/version_0/checkpoints/``)."""
    if relative.suffix.lower() in CHECKPOINT_SUFFIXES:
        return True
    if NOT_STATE_FILE.search(relative.name):
        return False
    return not any(part in NOT_STATE_FOLDERS for part in relative.parts[:-1])


class Damage(NamedTuple):
    """The newest checkpoint's largest file, cut to half its size as a kill mid-write leaves it."""

    path: str  # relative to the checkpoint folder
    step: int | None
    size_bytes: int
    truncated_to: int


def step_of(relative: Path) -> int | None:
    text = relative.as_posix()
    keyed = STEP_NUMBER.findall(text)
    if keyed:
        return int(keyed[-1])
    found = NUMBER.search(EPOCH_NUMBER.sub("", text))  # ``ep3.pt`` alone names no step
    return int(found.group()) if found else None


def access_times(folder: Path) -> dict[Path, int]:
    """Relative path -> access time (ns) of every complete checkpoint file."""
    return {name: stat.st_atime_ns for name, stat in file_stats(folder).items()}


def files_read(folder: Path, before: dict[Path, int], written: Iterable[Path], mentions: Iterable[str]) -> list[Path]:
    """The checkpoint files a resumed run loaded: named on a resume or load line, else read per access time.

    The command's own words come first (``Restoring states from …/last.ckpt``, ``resumed from
    …/step-24.pt``). Without them, a file whose access time moved while the run did not rewrite it
    was read (Linux ``relatime`` updates it on the first read after a write); on a ``noatime``
    mount nothing moves and the answer is empty.
    """
    present = set(before) | set(file_stats(folder))  # a loaded file may be deleted by the run (keep the newest two)
    real_folder = Path(os.path.realpath(folder))
    rewritten = set(written)
    named: list[Path] = []
    for line in mentions:
        if not says_it_loads(line):
            continue
        for word in PATH_WORD.findall(line):
            candidate, root, linked = Path(word.rstrip(".")), folder, False
            if candidate.is_symlink():  # Composer loads ``latest-rank0.pt``, a link to its newest checkpoint
                candidate, root, linked = Path(os.path.realpath(candidate)), real_folder, True
            for name in sorted(present):
                if linked and name in rewritten:
                    continue  # the link has moved on to what the run wrote since: the access times tell
                whole = (root / name).as_posix()
                folder_part = (root / name.parts[0]).as_posix() if len(name.parts) > 1 else None
                if candidate.as_posix() in (whole, folder_part) and name not in named:
                    named.append(name)
    if named:
        return named
    return [name for name, atime in access_times(folder).items()
            if name in before and atime > before[name] and name not in rewritten]


def checkpoint_steps(folder: Path) -> list[int]:
    """The steps of the checkpoints on disk, oldest first."""
    return sorted({step for name in snapshot(folder) if (step := step_of(name)) is not None and is_state_file(name)})


def files_by_step(names: Iterable[Path]) -> dict[int, set[Path]]:
    """The state files of each numbered checkpoint among ``names``."""
    found: dict[int, set[Path]] = {}
    for name in names:
        step = step_of(name)
        if step is not None and is_state_file(name):
            found.setdefault(step, set()).add(name)
    return found


def complete_steps(present: Iterable[Path], reference_folder: Path) -> list[int]:
    """Steps of which every file the uninterrupted run wrote is present: a kill between the files
    of one checkpoint (its RNG file written, its model not yet) leaves that step incomplete, and
    a resume rightly starts from the one before."""
    names = set(present)
    return sorted(step for step, files in files_by_step(snapshot(reference_folder)).items() if files <= names)


def newest_checkpoint(folder: Path, reference_folder: Path | None = None) -> tuple[int | None, list[Path]]:
    """(step, files) of the newest checkpoint; without numbered files, the file written last.

    With ``reference_folder``, the newest *complete* one: a folder the kill caught half-written
    (``checkpoint-28/`` with only its ``config.json``) is not the checkpoint to tear.
    """
    files = {name: mtime for name, mtime in snapshot(folder).items() if is_state_file(name)}
    numbered = [(step, name) for name in files if (step := step_of(name)) is not None]
    if reference_folder is not None:
        complete = set(complete_steps(files, reference_folder))
        numbered = [(step, name) for step, name in numbered if step in complete] or numbered
    if numbered:
        newest = max(step for step, _ in numbered)
        return newest, [name for step, name in numbered if step == newest]
    if not files:
        return None, []
    return None, [max(files, key=lambda name: files[name])]


def truncate_newest(folder: Path, reference_folder: Path | None = None) -> Damage | str:
    """Truncate the largest file of the newest checkpoint to half its size; a reason when impossible.

    The largest file is the one a kill is most likely to catch half-written (the weights or
    the optimizer state), and the one the resume cannot do without.
    """
    step, names = newest_checkpoint(folder, reference_folder)
    candidates = [(folder / name).stat().st_size for name in names]
    if not names or max(candidates) == 0:
        return "no checkpoint file on disk to truncate"
    size, name = max(zip(candidates, names), key=lambda pair: (pair[0], str(pair[1])))
    try:
        os.truncate(folder / name, size // 2)
    except OSError as error:
        return f"could not truncate the newest checkpoint {name}: {error.strerror}"
    return Damage(str(name), step, size, size // 2)


# a checkpoint's epoch counter: ``epoch``, Lightning's ``epoch``, ``current_epoch``, the Trainer's ``epoch`` (a float)
EPOCH_KEY = re.compile(r"(?:^|\.)(?:epoch|current_epoch|cur_epoch|epoch_idx|epochs_completed)$")


MAX_EPOCH_FILE_BYTES = 64 * 1024 * 1024  # the epoch counter is read from small files only, while the job runs


def checkpoint_epochs(folder: Path, steps: set[int] | None = None) -> dict[int, float]:
    """Step -> the epoch counter its checkpoint holds (the run's own, see :func:`_epoch_key_rank`), for every
    numbered checkpoint the safe loaders read. A job that prints no ``epoch=`` still says in its
    checkpoints that it has epochs, and where they change."""
    from spikelint.smoke.compare.leaves import flatten
    from spikelint.smoke.compare.loaders import LoadRefused
    from spikelint.smoke.compare.loaders import load_checkpoint_file

    found: dict[int, float] = {}
    for name in sorted(snapshot(folder), key=lambda name: (step_of(name) or 0, str(name))):
        step = step_of(name)
        if step is None or step in found or not is_state_file(name) or name.suffix in (".bin", ".safetensors"):
            continue
        if steps is not None and step not in steps:
            continue
        try:
            if (folder / name).stat().st_size > MAX_EPOCH_FILE_BYTES:
                continue
            state = load_checkpoint_file(folder / name)
        except (LoadRefused, OSError):
            continue
        except Exception:  # noqa: BLE001 - a file no loader foresaw (or one half-written) says nothing about epochs
            continue
        counters = [(key, value) for key, value in flatten(state)
                    if EPOCH_KEY.search(key) and isinstance(value, (int, float)) and not isinstance(value, bool)]
        if counters:
            found[step] = min(counters, key=lambda pair: _epoch_key_rank(pair[0]))[1]
    return found


def _epoch_key_rank(key: str) -> tuple[int, int, int]:
    """Which epoch counter is the run's own: not one inside a list (Composer's record of every checkpoint it
    saved, ``callbacks.CheckpointSaver.all_saved_checkpoints_to_timestamp.0.1.epoch``), not a callback's,
    a timestamp's or trainer state's first, then the shallowest."""
    parts = key.split(".")
    in_list = any(part.isdigit() for part in parts)
    callback = any("callback" in part.lower() for part in parts)
    return (in_list + callback, 0 if "timestamp" in key.lower() or "trainer" in key.lower() else 1, len(parts))


def checkpoint_epoch_length(epochs: dict[int, float]) -> int | None:
    """Steps per epoch from the epoch counter the checkpoints hold. A fractional epoch (the Trainer's
    ``"epoch": 0.25`` at step 4) gives it exactly; a whole-number counter by where it changes, as
    ``steplines.epoch_length`` reads the step lines."""
    for step, epoch in sorted(epochs.items()):
        if step > 0 and 0 < epoch and epoch != int(epoch):
            return round(step / epoch)
    return epoch_length({step: int(epoch) for step, epoch in epochs.items()})

