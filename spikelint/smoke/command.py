"""``spikelint smoke --cmd``: kill and resume the team's own command, as a scheduler would.

Each run is a new process of the command with its placeholders filled in: ``{steps}``,
``{every}``, ``{ckpt}`` (a new folder per variant, shared by the interrupted run and its
resume), ``{seed}`` and ``{resume}`` (``--resume-arg`` on a resumed run, nothing on a fresh
one). Progress is read from the lines the command prints (``--progress-regex``, with an
optional loss on the same line); SIGKILL and SIGTERM go to the command's main process, as
Kubernetes delivers them (``--sigterm-to group`` for the whole process group). The proof is the
checkpoint files the resumed run wrote, compared leaf by leaf with the reference's files of the
same name through the format-aware loaders of ``loaders.py`` (``torch.save`` files with
``weights_only=True``, safetensors, JSON, Hugging Face ``checkpoint-N/`` files, DCP folders),
and every loss the resumed run printed against the reference's loss at that step.
"""

from __future__ import annotations

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

from spikelint.smoke.loaders import compare_folders  # noqa: F401  (the loaders used to live here)
from spikelint.smoke.loaders import load_checkpoint_file  # noqa: F401

DEFAULT_PROGRESS = r"step[=: ](\d+)"
DEFAULT_LOSS = r"loss[=: ](\S+)"


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
