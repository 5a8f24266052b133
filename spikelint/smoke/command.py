"""``spikelint smoke --cmd``: kill and resume the team's own command, as a scheduler would.

Each run is a new process of the command with its placeholders filled in: ``{steps}``,
``{every}``, ``{ckpt}`` (a new folder per variant, shared by the interrupted run and its
resume), ``{seed}`` and ``{resume}`` (``--resume-arg`` on a resumed run, nothing on a fresh
one). Progress is read from the lines the command prints (``--progress-regex``, with an
optional loss on the same line); SIGKILL and SIGTERM go to the command's main process, as
Kubernetes delivers them (``--sigterm-to group`` for the whole process group). The proof is the
checkpoint files the resumed run wrote, compared leaf by leaf with the reference's files of the
same name (``torch.save`` files with ``weights_only=True``, safetensors when installed, JSON),
and every loss the resumed run printed against the reference's loss at that step.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from spikelint.smoke.compare import Difference
from spikelint.smoke.compare import compare_states

DEFAULT_PROGRESS = r"step[=: ](\d+)"
DEFAULT_LOSS = r"loss[=: ](\S+)"
TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")


class CommandError(ValueError):
    """The command cannot be used (exit 2)."""


def expand(template: str, values: dict[str, str]) -> list[str]:
    """The argument vector: placeholders filled per word, an empty ``{resume}`` word dropped."""
    words = shlex.split(template)
    if not words:
        raise CommandError("--cmd is empty")
    unknown = {name for word in words for name in re.findall(r"\{(\w+)\}", word)} - set(values)
    if unknown:
        raise CommandError(f"--cmd uses unknown placeholder(s) {', '.join('{' + n + '}' for n in sorted(unknown))}")
    expanded: list[str] = []
    for word in words:
        if word == "{resume}":
            expanded += shlex.split(values["resume"])
            continue
        text = word
        for name, value in values.items():
            text = text.replace("{" + name + "}", value)
        expanded.append(text)
    return expanded


@dataclass
class CommandRun:
    """One process of the command and what it printed."""

    label: str
    argv: list[str]
    log: Path
    steps: dict[int, str] = field(default_factory=dict)  # step -> loss text ("" without a loss)
    exit_code: int | None = None
    signalled_at_step: int | None = None
    wall_s: float = 0.0

    def tail(self, lines: int = 6) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join([line for line in text.splitlines() if line.strip()][-lines:])


def run_command(
    run: CommandRun,
    progress: re.Pattern[str],
    loss: re.Pattern[str],
    deadline: float,
    stop_at_step: int | None = None,
    signum: int = signal.SIGKILL,
    to_group: bool = False,
) -> CommandRun:
    """Start, read progress, signal once ``stop_at_step`` is printed, wait for the end."""
    started = time.monotonic()
    with open(run.log, "wb") as log:
        try:
            process = subprocess.Popen(run.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise CommandError(f"cannot start {run.argv[0]}: {error.strerror}") from None
        assert process.stdout is not None
        pending = b""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.killpg(process.pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([process.stdout], [], [], min(remaining, 0.5))
            if not ready:
                if process.poll() is not None:
                    break
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            log.write(chunk)
            log.flush()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                found = progress.search(line)
                if not found:
                    continue
                step = int(found.group(1))
                value = loss.search(line)
                run.steps[step] = value.group(1) if value else ""
                if stop_at_step is not None and run.signalled_at_step is None and step >= stop_at_step:
                    run.signalled_at_step = step
                    try:
                        os.killpg(process.pid, signum) if to_group else os.kill(process.pid, signum)
                    except ProcessLookupError:
                        pass
        run.exit_code = process.wait()
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever the command left behind
        except (ProcessLookupError, PermissionError):
            pass
    run.wall_s = time.monotonic() - started
    return run


def load_checkpoint_file(path: Path) -> Any:
    """A checkpoint file by format; never executes code from it."""
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    if path.suffix == ".safetensors":
        try:
            from safetensors.torch import load_file
        except ImportError:
            return {"sha256": _sha256(path)}
        return load_file(str(path))
    if path.suffix in TORCH_SUFFIXES:
        import torch

        return torch.load(path, weights_only=True, map_location="cpu")
    return {"sha256": _sha256(path)}


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(folder: Path) -> dict[Path, int]:
    """Relative path -> modification time (ns) of every regular file, hidden temporaries left out."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
            found[path.relative_to(folder)] = path.stat().st_mtime_ns
    return found


def written_since(folder: Path, before: dict[Path, int]) -> list[Path]:
    """The files a run created or rewrote: what it saved after resuming."""
    return [name for name, mtime in snapshot(folder).items() if before.get(name) != mtime]


def compare_folders(reference: Path, resumed: Path, names: list[Path]) -> tuple[int, list[tuple[str, Difference]], list[str]]:
    """(leaves compared, differences by file, problems) for the files the resumed run wrote."""
    leaves = 0
    differences: list[tuple[str, Difference]] = []
    problems: list[str] = []
    for name in names:
        expected_path = reference / name
        if not expected_path.is_file():
            problems.append(f"{name} was written by the resumed run but not by the uninterrupted one")
            continue
        try:
            expected, actual = load_checkpoint_file(expected_path), load_checkpoint_file(resumed / name)
        except Exception as error:  # a refused or damaged file is a finding, not a crash
            problems.append(f"{name} cannot be loaded with weights_only=True: {type(error).__name__}: {str(error)[:200]}")
            continue
        count, found = compare_states(expected, actual)
        leaves += count
        differences += [(str(name), difference) for difference in found]
    return leaves, differences, problems
