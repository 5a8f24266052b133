"""``spikelint smoke --cmd``: kill and resume the team's own command, as a scheduler would.

Each run is a new process of the command with its placeholders filled in: ``{steps}``,
``{every}``, ``{ckpt}`` (a new folder per variant, shared by the interrupted run and its
resume), ``{seed}`` and ``{resume}`` (``--resume-arg`` on a resumed run, nothing on a fresh
one). Progress is read from the lines the command prints (``--progress-regex``, with an
optional loss on the same line); SIGTERM goes to the command's main process, as
Kubernetes delivers it (``--sigterm-to group`` for the whole process group), and SIGKILL to
every process the command started, as the end of a container does. The proof is the
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
import threading
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable


from spikelint.smoke.command.steplines import says_it_loads
from spikelint.smoke.command.steplines import MAX_EXAMPLES
from spikelint.smoke.command.steplines import MAX_LOAD_LINES
from spikelint.smoke.command.steplines import Mention
from spikelint.smoke.command.steplines import StepLine
from spikelint.smoke.command.steplines import output_lines
from spikelint.smoke.command.steplines import loss_only
from spikelint.smoke.command.steplines import read_line

# Names a partial write carries until it is complete: never a checkpoint.
PARTIAL_SUFFIXES = (".tmp", ".temp", ".partial", ".incomplete", ".part", ".lock")
PARTIAL_PREFIXES = ("tmp-checkpoint-", "tmp.", "tmp_", ".")
DCP_COMMIT_MARKER = ".metadata"


class CommandError(ValueError):
    """The command cannot be used (exit 2)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM to spikelint (a cancelled CI job) while a command runs: ended like Ctrl-C, the command killed."""

    said = "terminated (SIGTERM)"
    exit_code = 128 + signal.SIGTERM


def raise_terminated(signum: int, frame: object) -> None:
    """The SIGTERM handler: unwinds like Ctrl-C, through the ``except`` that kills the command's tree."""
    raise Terminated()


def sigterm_ends_runs() -> Any:
    """SIGTERM (a cancelled CI job) ends the smoke run like Ctrl-C, killing the command it runs; the handler
    it replaces, to put back (``None`` off the main thread, where Python lets no handler be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, raise_terminated)


def expand(template: str, values: dict[str, str]) -> list[str]:
    """The argument vector: placeholders filled per word, an empty ``{resume}`` word dropped, and the
    placeholders inside the resume text filled too (``{ckpt}``, ``{step}``: the newest checkpoint's)."""
    words = shlex.split(template)
    if not words:
        raise CommandError("--cmd is empty")
    unknown = {name for word in words for name in re.findall(r"\{(\w+)\}", word)} - set(values)
    if unknown:
        raise CommandError(f"--cmd uses unknown placeholder(s) {', '.join('{' + n + '}' for n in sorted(unknown))}")
    def filled(text: str) -> str:
        for name, value in values.items():
            if name != "resume":
                text = text.replace("{" + name + "}", value)
        return text

    expanded: list[str] = []
    for word in words:
        if word == "{resume}":  # ``--resume-arg "--resume_from_checkpoint {ckpt}/checkpoint-{step}"``
            expanded += [filled(part) for part in shlex.split(values["resume"])]
            continue
        expanded.append(filled(word.replace("{resume}", values["resume"])))
    return expanded


@dataclass
class CommandRun:
    """One process of the command and what it printed."""

    label: str
    argv: list[str]
    log: Path
    steps: dict[int, str] = field(default_factory=dict)  # step -> loss text ("" without a loss)
    epochs: dict[int, int] = field(default_factory=dict)  # step -> epoch, where the step line prints one
    mentions: list[Mention] = field(default_factory=list)  # lines that name a step without being one
    examples: list[str] = field(default_factory=list)  # the first step lines, as printed
    load_lines: list[str] = field(default_factory=list)  # lines that say what was loaded or resumed
    step_s: dict[int, float] = field(default_factory=dict)  # step -> seconds after the start when it was read
    checkpoints_seen: dict[int, float] = field(default_factory=dict)  # checkpoint step -> seconds when it appeared
    checkpoint_epochs: dict[int, float] = field(default_factory=dict)  # checkpoint step -> the epoch counter it holds
    loss_lines: list[str] = field(default_factory=list)  # losses printed on lines that name no step, in order
    exit_code: int | None = None
    signalled_at_step: int | None = None  # the step line that triggered the signal
    delivered_at_step: int | None = None  # the last step line read when the signal went out (later, with a delay)
    signal_to_exit_s: float | None = None
    grace_expired: bool = False  # SIGTERM was not followed by an exit within the grace period: SIGKILLed
    timed_out: bool = False
    wall_s: float = 0.0

    def tail(self, lines: int = 6) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        shown = [line for line in text.splitlines() if line.strip()]
        tail = " | ".join(shown[-lines:])
        raised = next((line.strip() for line in reversed(shown) if RAISED.match(line)), None)
        if raised is not None and raised not in shown[-lines:]:
            # the job's exception comes first: shutdown lines after it (a logger, a progress bar) hide it
            return f"{raised[:300]} … {tail}"
        return tail

    def last_step(self) -> int | None:
        return max(self.steps) if self.steps else None

    def signal_point(self) -> str:
        """``after step 26``, and where the job was when the signal went out and when it ended, if later."""
        text = f"after step {self.signalled_at_step}"
        later = [f"delivered at step {self.delivered_at_step}"] if (
            self.delivered_at_step is not None and self.delivered_at_step != self.signalled_at_step) else []
        last = self.last_step()
        if last is not None and last != (self.delivered_at_step or self.signalled_at_step):
            later.append(f"the job printed up to step {last} before it ended")
        return text + (f" ({'; '.join(later)})" if later else "")


Heartbeat = Callable[[CommandRun, float], None]  # (run, seconds since its last output line)


def shift_steps(run: CommandRun, offset: int) -> None:
    """Renumber a finished run's steps by ``offset`` (a job found to count from 0 after its first run)."""
    run.steps = {step + offset: loss for step, loss in run.steps.items()}
    run.epochs = {step + offset: epoch for step, epoch in run.epochs.items()}
    run.step_s = {step + offset: at for step, at in run.step_s.items()}
    run.mentions = [mention._replace(step=mention.step + offset) for mention in run.mentions]


def record_step(run: CommandRun, read: StepLine, line: str, at_s: float) -> None:
    """A step line: its loss, its epoch, when it came; the first few kept to show what was read."""
    run.steps[read.step] = read.loss
    run.step_s[read.step] = at_s
    if read.epoch is not None:
        run.epochs[read.step] = read.epoch
    if len(run.examples) < MAX_EXAMPLES:
        run.examples.append(line.strip()[:200])


def is_partial(relative: Path) -> bool:
    """A temporary or partial write (``step-8.pt.tmp``, ``tmp-checkpoint-8/``, ``.x.partial``): not a checkpoint."""
    for part in relative.parts:
        lowered = part.lower()
        if lowered == DCP_COMMIT_MARKER:
            continue  # DCP writes .metadata last: it marks the folder complete, it is no partial write
        if lowered.startswith(PARTIAL_PREFIXES) or lowered.endswith(PARTIAL_SUFFIXES):
            return True
        if ".tmp" in lowered or ".partial" in lowered or ".incomplete" in lowered:
            return True
    return False


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux ``/proc``; just ``pid`` elsewhere).

    torchrun starts its workers in sessions of their own, so neither the main process's group
    nor its death reaches them; a container's SIGKILL does, and so must ours.
    """
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [pid]
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending += children.get(current, [])
    return found


def kill_tree(pid: int, known: tuple[int, ...] = ()) -> None:
    """SIGKILL the command, its process group and everything it started, as a container's end does.

    ``known`` (the tree as walked a step before) is killed first, then the group is stopped: walking
    ``/proc`` takes milliseconds, in which a job with fast steps would otherwise run on past the step
    it was to be killed after (or into a save). A stopped parent cannot exit, so the walk still finds
    the workers it started in other sessions.
    """
    for target in known:
        try:
            os.kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(pid, signal.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        pass
    for target in process_tree(pid):
        try:
            os.kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(
    run: CommandRun,
    progress: re.Pattern[str],
    loss: re.Pattern[str],
    deadline: float,
    stop_at_step: int | None = None,
    signum: int = signal.SIGKILL,
    to_group: bool = False,
    grace_s: float = 30.0,
    heartbeat: Heartbeat | None = None,
    heartbeat_s: float = 5.0,
    signal_delay_s: float = 0.0,
    step_offset: int = 0,
    watch: Path | None = None,
    steps_from_checkpoints: bool = False,
    read_epochs: bool = False,
    reference_folder: Path | None = None,
) -> CommandRun:
    """Start, read progress, signal once ``stop_at_step`` is printed, wait for the end.

    SIGKILL ends the whole process tree at once. SIGTERM goes to the main process (or its
    group with ``to_group``); a command still running ``grace_s`` later is SIGKILLed, as the
    kubelet does after ``terminationGracePeriodSeconds``, and ``grace_expired`` says so.
    ``signal_delay_s`` holds the signal back after the step line, to land inside the next step.
    ``step_offset`` turns the printed number into steps done: 1 for a job that counts from 0 (``iter 0``
    after its first step), so that step N is always N steps done, as checkpoints name them.
    ``watch`` is the checkpoint folder: when a numbered checkpoint first appears there is kept in
    ``checkpoints_seen``; with ``steps_from_checkpoints`` (a job that prints no step lines) each one is
    also a step (without a loss), and the signal goes out after the checkpoint of ``stop_at_step``;
    with ``read_epochs`` the epoch counter each checkpoint holds is read as it appears. With
    ``reference_folder`` (the uninterrupted run's) a checkpoint counts as a step only once every file
    the uninterrupted run wrote for it is there: a Trainer's ten files take longer to write than a tiny
    model's step, and a signal timed from the first of them would land inside the write.
    """
    started = time.monotonic()
    signalled: float | None = None
    due: float | None = None  # when the held-back signal is sent
    last_output = last_beat = started
    with open(run.log, "wb") as log:
        try:
            process = subprocess.Popen(run.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise CommandError(f"cannot start {run.argv[0]}: {error.strerror}") from None
        assert process.stdout is not None
        pending = b""
        walked: tuple[int, ...] = ()  # the tree a step before the SIGKILL: torchrun's workers, killed first

        def deliver() -> None:
            run.delivered_at_step = run.last_step()
            if signum == signal.SIGKILL:
                kill_tree(process.pid, walked)
                return
            try:
                os.killpg(process.pid, signum) if to_group else os.kill(process.pid, signum)
            except ProcessLookupError:
                pass

        def reached(step: int) -> None:
            """A step was read (a line, or a checkpoint): signal now, or after the delay, once ``stop_at_step`` is."""
            nonlocal signalled, due, walked
            if stop_at_step is not None and not walked and signum == signal.SIGKILL and step >= stop_at_step - 1:
                walked = tuple(process_tree(process.pid))
            if stop_at_step is not None and run.signalled_at_step is None and step >= stop_at_step:
                run.signalled_at_step = step
                if signal_delay_s > 0:
                    due = time.monotonic() + signal_delay_s
                else:
                    signalled = time.monotonic()
                    deliver()

        def look_at_checkpoints() -> None:
            assert watch is not None
            incomplete = incomplete_steps_in(watch, reference_folder) if steps_from_checkpoints and \
                reference_folder is not None else set()
            for step in checkpoint_steps_in(watch):
                if step in incomplete:
                    continue  # still being written: it is seen once all its files are
                if step in run.checkpoints_seen:
                    continue
                at = time.monotonic() - started
                run.checkpoints_seen[step] = at
                if read_epochs:  # read now: a job that keeps its newest two deletes the rest before it ends;
                    # the one before is read again (a folder's last file may come late), each at most twice
                    earlier = [seen for seen in run.checkpoints_seen if seen < step]
                    unread = {step} | ({max(earlier)} if earlier and max(earlier) not in run.checkpoint_epochs else set())
                    run.checkpoint_epochs.update(checkpoint_epochs_in(watch, unread))
                if not steps_from_checkpoints:
                    continue
                run.steps[step], run.step_s[step] = "", at
                reached(step)

        try:
            while True:
                now = time.monotonic()
                if watch is not None and process.poll() is None:
                    look_at_checkpoints()
                if due is not None and now >= due:
                    due, signalled = None, now
                    deliver()
                if now >= deadline:
                    run.timed_out = True
                    kill_tree(process.pid)
                    break
                if signalled is not None and signum == signal.SIGTERM and now - signalled >= grace_s:
                    run.grace_expired = True
                    kill_tree(process.pid)
                    break
                if heartbeat is not None and now - last_beat >= heartbeat_s:
                    last_beat = now
                    heartbeat(run, now - last_output)
                wait = min(deadline - now, 0.5 if watch is None else 0.05, heartbeat_s)
                if signalled is not None:
                    wait = min(wait, max(0.0, signalled + grace_s - now))
                if due is not None:
                    wait = min(wait, max(0.0, due - now))
                ready, _, _ = select.select([process.stdout], [], [], wait)
                if not ready:
                    if process.poll() is not None:
                        break
                    continue
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    break
                last_output = time.monotonic()
                log.write(chunk)
                log.flush()
                pending += chunk
                complete, _, pending = pending.rpartition(b"\n")
                for line in output_lines(complete) if complete else []:
                    if len(run.load_lines) < MAX_LOAD_LINES and says_it_loads(line):
                        run.load_lines.append(line.strip())
                    read = read_line(line, progress, loss)
                    if isinstance(read, Mention):
                        run.mentions.append(read)
                        continue
                    if read is None:
                        alone = loss_only(line, loss)
                        if alone is not None:
                            run.loss_lines.append(alone)
                        continue
                    read = read._replace(step=read.step + step_offset)
                    step = read.step
                    record_step(run, read, line, last_output - started)
                    reached(step)
            run.exit_code = process.wait()
        except BaseException:  # Ctrl-C, or SIGTERM when a CI job is cancelled: the command must not outlive us
            kill_tree(process.pid)
            process.wait()
            raise
        if watch is not None and signalled is None and due is None:
            look_at_checkpoints()  # the last checkpoint, written just before the end
            unread = set(run.checkpoints_seen) - set(run.checkpoint_epochs)
            if read_epochs and unread:  # the last one, and any read while still being written: those left on disk
                run.checkpoint_epochs.update(checkpoint_epochs_in(watch, unread))
        if signalled is not None:
            run.signal_to_exit_s = time.monotonic() - signalled
        try:  # whatever the command left behind in its group (its pid is reaped: no tree walk now)
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    run.wall_s = time.monotonic() - started
    return run


# the last line of a Python traceback: ``RuntimeError: PytorchStreamReader failed reading zip archive: …``
RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)(?::|$)")


def snapshot(folder: Path) -> dict[Path, int]:
    """Relative path -> modification time (ns) of every complete regular file (temporaries left out)."""
    return {name: stat.st_mtime_ns for name, stat in file_stats(folder).items()}


def file_stats(folder: Path) -> dict[Path, os.stat_result]:
    """Relative path -> ``stat`` of every regular file that is not a partial write, links left out."""
    found = {}
    for path in sorted(_walk(folder)):
        relative = path.relative_to(folder)
        try:  # a running job deletes old checkpoints while the folder is watched
            if path.is_file() and not path.is_symlink() and not is_partial(relative):
                found[relative] = path.stat()
        except FileNotFoundError:
            continue
    return found


def _walk(folder: Path) -> list[Path]:
    """Every path under ``folder``; a folder the job deletes while it is listed is skipped, not an error
    (``rglob`` raises when a checkpoint folder goes away under it: save_total_limit at work)."""
    paths: list[Path] = []
    for root, folders, files in os.walk(folder, onerror=lambda error: None):
        base = Path(root)
        paths.extend(base / name for name in (*folders, *files))
    return paths


def partial_files(folder: Path) -> list[Path]:
    """The temporary and partial writes in the folder, as the report lists them."""
    return [path.relative_to(folder) for path in sorted(_walk(folder))
            if path.is_file() and is_partial(path.relative_to(folder))]


def checkpoint_steps_in(folder: Path) -> list[int]:
    """The numbered checkpoints in a folder, by the naming schemes ``files.step_of`` reads."""
    from spikelint.smoke.command.files import checkpoint_steps

    return checkpoint_steps(folder) if folder.is_dir() else []


def incomplete_steps_in(folder: Path, reference_folder: Path) -> set[int]:
    """Checkpoints on disk that lack a file the uninterrupted run wrote for the same step (a step the
    uninterrupted run no longer holds, deleted as it kept its newest two, is not judged)."""
    from spikelint.smoke.command.files import files_by_step

    present = set(snapshot(folder))
    on_disk = files_by_step(present)
    return {step for step, files in files_by_step(snapshot(reference_folder)).items()
            if step in on_disk and not files <= present}


def checkpoint_epochs_in(folder: Path, steps: set[int]) -> dict[int, float]:
    from spikelint.smoke.command.files import checkpoint_epochs

    return checkpoint_epochs(folder, steps)


def written_since(folder: Path, before: dict[Path, int]) -> list[Path]:
    """The files a run created or rewrote: what it saved after resuming."""
    return [name for name, mtime in snapshot(folder).items() if before.get(name) != mtime]
