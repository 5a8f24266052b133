"""The training process: reference, interrupted or resumed run of one rank.

It reports every step, checkpoint and state snapshot to the parent on the line protocol,
holds at the kill step (or half-way through a checkpoint write) until the parent signals
it, and on SIGTERM only sets a flag: the loop checkpoints at the next step boundary and
exits with 143.
"""

from __future__ import annotations

import errno
import os
import platform
import resource
import signal
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from typing import Callable

import torch
import torch.distributed as dist

from spikelint.smoke.harness.checkpoint import LoadedCheckpoint
from spikelint.smoke.harness.checkpoint import Refusal
from spikelint.smoke.harness.checkpoint import WriteResult
from spikelint.smoke.harness.checkpoint import newest_valid
from spikelint.smoke.harness.checkpoint import prune_checkpoints
from spikelint.smoke.harness.checkpoint import quarantine
from spikelint.smoke.harness.checkpoint import remove_stale_temporaries
from spikelint.smoke.harness.checkpoint import save_atomically
from spikelint.smoke.harness.checkpoint import tensor_layout_check
from spikelint.smoke.harness.checkpoint import weights_only_refusal
from spikelint.smoke.harness.checkpoint import write_checkpoint
from spikelint.smoke.compare.leaves import leaf_to_json
from spikelint.smoke.harness.determinism import apply_deterministic_settings
from spikelint.smoke.harness.determinism import watch_nondeterministic_ops
from spikelint.smoke.harness.job import check_job
from spikelint.smoke.harness.job import step_info
from spikelint.smoke.harness.probe import live_digests
from spikelint.smoke.harness.protocol import CHECKPOINT
from spikelint.smoke.harness.protocol import DONE
from spikelint.smoke.harness.protocol import ERROR
from spikelint.smoke.harness.protocol import EXIT_NO_CHECKPOINT
from spikelint.smoke.harness.protocol import EXIT_PREEMPTED
from spikelint.smoke.harness.protocol import HANDLER
from spikelint.smoke.harness.protocol import HOLD
from spikelint.smoke.harness.protocol import NONDETERMINISTIC
from spikelint.smoke.harness.protocol import PREEMPTED
from spikelint.smoke.harness.protocol import PROBE
from spikelint.smoke.harness.protocol import READY
from spikelint.smoke.harness.protocol import RESTORED
from spikelint.smoke.harness.protocol import STEP
from spikelint.smoke.harness.protocol import WRITING
from spikelint.smoke.harness.protocol import ChildChannel
from spikelint.smoke.harness.rngstate import capture_rng
from spikelint.smoke.harness.rngstate import seed_everything

REFERENCE = "reference"
INTERRUPTED = "interrupted"
RESUMED = "resumed"

EXIT_FAILED = 1
EXIT_PARENT_GONE = 4
DISTRIBUTED_TIMEOUT = timedelta(seconds=120)


@dataclass(frozen=True)
class ChildConfig:
    """Everything a training process needs; it reaches the child through fork, not a file."""

    label: str  # names the logs and final-state files: "reference", "sigterm.resumed", ...
    role: str  # REFERENCE, INTERRUPTED or RESUMED
    world_size: int
    device_type: str  # "cpu" or "cuda"
    backend: str | None
    master_port: int | None
    seed: int
    steps: int
    checkpoint_every: int
    checkpoint_folder: Path | None
    hold_at_step: int | None
    pause_in_write_at_step: int | None
    probe_steps: frozenset[int]
    final_state_folder: Path
    job_factory: Callable[[], Any]
    num_threads: int
    check_weights_only: bool = False  # the reference checks the first state_dict() for the safe loader
    job_spec: str | None = None  # --job as given: a fresh interpreter imports it again
    restart: str = "fork"  # how this process was started: "fork" or "exec"
    warn_only: bool = False  # --warn-only: ops without a deterministic implementation warn (reported) instead of raising


_PATH_FIELDS = ("checkpoint_folder", "final_state_folder")


def config_to_json(config: ChildConfig) -> dict[str, Any]:
    """What a fresh interpreter needs to rebuild the config (the factory is imported again there)."""
    data = {name: getattr(config, name) for name in config.__dataclass_fields__ if name != "job_factory"}
    for name in _PATH_FIELDS:
        data[name] = str(data[name]) if data[name] is not None else None
    data["probe_steps"] = sorted(config.probe_steps)
    return data


def config_from_json(data: dict[str, Any], job_factory: Callable[[], Any]) -> ChildConfig:
    values = dict(data)
    for name in _PATH_FIELDS:
        values[name] = Path(values[name]) if values[name] is not None else None
    values["probe_steps"] = frozenset(int(step) for step in values["probe_steps"])
    return ChildConfig(job_factory=job_factory, **values)


class StopFlag:
    """Set by the SIGTERM handler; read by the loop at step boundaries (nothing else runs in a handler)."""

    def __init__(self) -> None:
        self.requested = False

    def request(self, signum: int, frame: Any) -> None:
        self.requested = True


class ChildLog:
    def __init__(self, label: str, rank: int, forked_at: float) -> None:
        self.prefix = f"{label} rank {rank}"
        self.forked_at = forked_at

    def __call__(self, message: str) -> None:
        print(f"[{time.monotonic() - self.forked_at:8.3f}s] {self.prefix}: {message}", flush=True)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def describe_device(device: str) -> dict[str, Any]:
    if not device.startswith("cuda"):
        return {"type": "cpu", "name": cpu_name()}
    index = torch.device(device).index or 0
    properties = torch.cuda.get_device_properties(index)
    return {
        "type": "cuda",
        "name": torch.cuda.get_device_name(index),
        "capability": f"{properties.major}.{properties.minor}",
        "total_memory_bytes": int(properties.total_memory),
        "cuda_runtime": str(torch.version.cuda),
        "cudnn": str(torch.backends.cudnn.version()),
    }


def init_distributed(config: ChildConfig, rank: int) -> None:
    """The environment ``torchrun`` would give, on loopback only."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(config.master_port),
        RANK=str(rank),
        WORLD_SIZE=str(config.world_size),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(config.world_size),
    )
    if os.path.isdir("/sys/class/net/lo"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    assert config.backend is not None
    if config.backend == "nccl":  # bind the communicator to this rank's GPU (set before CUDA work)
        dist.init_process_group(
            "nccl", init_method="env://", timeout=DISTRIBUTED_TIMEOUT, device_id=torch.device("cuda", rank)
        )
    else:
        dist.init_process_group(config.backend, init_method="env://", timeout=DISTRIBUTED_TIMEOUT)


def choose_checkpoint(
    folder: Path,
    rank: int,
    world_size: int,
    validate: Callable[[dict[str, Any]], None] | None = None,
    map_location: str | None = None,
) -> tuple[LoadedCheckpoint | None, list[Refusal]]:
    """The newest step every rank can load: each rank proposes, the group takes the minimum.

    ``map_location`` (this rank's device) is where the loaded tensors go, straight from the file.
    """
    refusals: dict[str, Refusal] = {}
    bound: int | None = None
    while True:
        loaded, refused = newest_valid(
            folder, rank, world_size, at_most=bound, validate=validate, map_location=map_location
        )
        refusals.update((refusal.path, refusal) for refusal in refused)
        if world_size == 1:
            return loaded, list(refusals.values())
        proposals: list[Any] = [None] * world_size
        dist.all_gather_object(proposals, loaded.step if loaded else -1)
        agreed = min(int(step) for step in proposals)
        if agreed < 0:
            return None, list(refusals.values())
        if all(int(step) == agreed for step in proposals):
            return loaded, list(refusals.values())
        bound = agreed


def stop_agreed(stop: StopFlag, world_size: int, device: str) -> bool:
    """Every rank stops at the same boundary once any rank was asked to."""
    if world_size == 1:
        return stop.requested
    flag = torch.tensor([1 if stop.requested else 0], dtype=torch.int32, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def peak_rss_bytes() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


class TrainingProcess:
    """One rank of one run; keeps the stage it is in so that a failure says where it happened."""

    def __init__(self, config: ChildConfig, rank: int, channel: ChildChannel, forked_at: float) -> None:
        self.config = config
        self.rank = rank
        self.channel = channel
        self.forked_at = forked_at
        self.log = ChildLog(config.label, rank, forked_at)
        self.stage = "start"
        self.cuda = config.device_type == "cuda"
        self.device = f"cuda:{rank}" if self.cuda else "cpu"
        self.job: Any = None
        self.handler_reported = False

    def run(self) -> int:
        try:
            return self._run()
        except SystemExit as request:  # the job's own sys.exit(): its code, and where it happened
            code = request.code if isinstance(request.code, int) else (0 if request.code is None else EXIT_FAILED)
            self.channel.send(
                ERROR, stage=self.stage, job_exit=code,
                message=f"the job called sys.exit({request.code!r}) in {self.stage}; the process ended with exit {code}",
            )
            return code
        except Exception as error:  # noqa: BLE001 - reported to the parent; the traceback goes to the log
            import traceback

            traceback.print_exc()
            no_space = isinstance(error, OSError) and error.errno == errno.ENOSPC
            self.channel.send(
                ERROR, stage=self.stage, message=f"{type(error).__name__}: {error}", no_space=no_space
            )
            return EXIT_FAILED

    def watch_sigterm_handler(self, ours: Any) -> None:
        """Say once when the job replaced the SIGTERM handler: preemption then runs the job's code, not ours."""
        current = signal.getsignal(signal.SIGTERM)
        if current is ours or self.handler_reported:
            return
        self.handler_reported = True
        name = getattr(current, "__qualname__", None) or repr(current)
        module = getattr(current, "__module__", None)
        described = f"{module}.{name}" if module else str(name)
        self.channel.send(HANDLER, stage=self.stage, handler=described)
        self.log(f"the job replaced the SIGTERM handler with {described} (in {self.stage})")

    def report_nondeterministic_op(self, op: str) -> None:
        self.channel.send(NONDETERMINISTIC, op=op, stage=self.stage)
        self.log(f"{op} has no deterministic implementation; run anyway (--warn-only), first in {self.stage}")

    def _run(self) -> int:
        config = self.config
        stop = StopFlag()
        if config.role != REFERENCE:
            signal.signal(signal.SIGTERM, stop.request)
        ours = signal.getsignal(signal.SIGTERM)
        self.stage = "setup"
        if self.cuda:
            torch.cuda.set_device(self.rank)
        if config.world_size > 1:
            init_distributed(config, self.rank)
        settings = apply_deterministic_settings(torch, config.num_threads, config.warn_only)
        if config.warn_only:
            watch_nondeterministic_ops(self.report_nondeterministic_op)
        seed_everything(config.seed + self.rank, self.cuda)
        self.job = config.job_factory()
        check_job(self.job)
        setup = getattr(self.job, "setup", None)
        if callable(setup):
            setup(self.device, config.seed)
        if config.role != REFERENCE:
            self.watch_sigterm_handler(ours)
        start_s = time.monotonic() - self.forked_at
        self.channel.send(READY, start_s=start_s, pid=os.getpid(), device=describe_device(self.device), settings=settings)
        self.log(f"ready in {start_s:.3f}s on {self.device}, settings {settings}")
        first_step = 1
        if config.role == RESUMED:
            restored = self.restore()
            if restored is None:
                return EXIT_NO_CHECKPOINT
            first_step = restored + 1
        for step in range(first_step, config.steps + 1):
            self.stage = f"step {step}"
            written = self.train_one_step(step)
            if config.role != REFERENCE:
                self.watch_sigterm_handler(ours)
            if step == first_step and config.check_weights_only and not self.check_weights_only(step):
                return EXIT_FAILED
            if step == config.hold_at_step:
                self.channel.send(HOLD, step=step)
                self.log(f"holding after step {step}")
                if not self.channel.wait_for_release():
                    return EXIT_PARENT_GONE
            if config.role != REFERENCE and stop_agreed(stop, config.world_size, self.device):
                self.log(f"SIGTERM received: checkpoint at the step {step} boundary, then exit {EXIT_PREEMPTED}")
                result = None if written else self.checkpoint(step, pause=False)
                self.channel.send(
                    PREEMPTED, step=step, write_s=result.write_s if result else 0.0, already_written=written
                )
                return EXIT_PREEMPTED
        self.finish()
        return 0

    def train_one_step(self, step: int) -> bool:
        """Train, report, snapshot (reference) or checkpoint (others); True if a checkpoint was written."""
        config = self.config
        started = time.perf_counter()
        loss = float(self.job.train_step())
        if self.cuda:
            torch.cuda.synchronize()
        step_s = time.perf_counter() - started
        indices, data_wait_s = step_info(self.job)
        self.channel.send(
            STEP, step=step, loss=loss.hex(), indices=indices, step_s=step_s, data_wait_s=data_wait_s
        )
        self.log(f"step {step} loss {loss!r} ({step_s * 1000:.2f} ms)")
        if config.role != RESUMED and step in config.probe_steps:
            probe = live_digests(self.job, self.cuda)
            self.channel.send(PROBE, step=step, probe={key: leaf_to_json(leaf) for key, leaf in probe.items()})
        if config.role == REFERENCE:
            return False
        if step % config.checkpoint_every == 0:
            self.checkpoint(step, pause=step == config.pause_in_write_at_step)
            return True
        return False

    def check_weights_only(self, step: int) -> bool:
        """The first ``state_dict()`` must load with ``weights_only=True``; else every resume would fail."""
        self.stage = f"state check after step {step}"
        refused = weights_only_refusal(self.job.state_dict())
        if refused is not None:
            key, reason = refused
            self.channel.send(ERROR, stage=self.stage, unloadable_key=key, message=(
                f"state_dict() key {key!r} cannot be loaded with torch.load(weights_only=True): {reason}"
            ))
            return False
        return True

    def _pause_inside_write(self, step: int) -> Callable[[str], None]:
        def pause(temporary: str) -> None:
            self.channel.send(WRITING, step=step, temporary=temporary)
            self.log(f"paused half-way through writing checkpoint {step} ({temporary})")
            self.channel.wait_for_release()

        return pause

    def checkpoint(self, step: int, pause: bool) -> WriteResult:
        config = self.config
        assert config.checkpoint_folder is not None
        self.stage = f"checkpoint {step}"
        result = write_checkpoint(
            config.checkpoint_folder,
            step,
            self.rank,
            config.world_size,
            self.job.state_dict(),
            self._pause_inside_write(step) if pause else None,
        )
        if config.world_size > 1:
            dist.barrier()  # the new checkpoint is durable on every rank before any old one goes
        pruned = prune_checkpoints(config.checkpoint_folder, self.rank)
        self.channel.send(
            CHECKPOINT,
            step=step,
            path=str(result.path),
            size_bytes=result.size_bytes,
            write_s=result.write_s,
            pruned=[str(path) for path in pruned],
        )
        self.log(f"checkpoint {step} written ({result.size_bytes} bytes, {result.write_s * 1000:.2f} ms)")
        return result

    def restore(self) -> int | None:
        """Load the newest complete checkpoint in this fresh process; report what was refused."""
        config = self.config
        assert config.checkpoint_folder is not None
        self.stage = "load checkpoint"
        removed = remove_stale_temporaries(config.checkpoint_folder, self.rank)
        for path in removed:
            self.log(f"removed torn temporary file {path} (never renamed, never loadable)")
        validate = tensor_layout_check(self.job.state_dict())
        before = self.device_memory_before_load()
        loaded, refusals = choose_checkpoint(
            config.checkpoint_folder, self.rank, config.world_size, validate, map_location=self.device
        )
        for refusal in refusals:
            self.log(f"refused checkpoint {refusal.path}: {refusal.reason}")
        if loaded is None:
            reasons = "; ".join(f"{Path(r.path).name}: {r.reason}" for r in refusals) or "no checkpoint files"
            self.channel.send(
                ERROR,
                stage=self.stage,
                message=f"no checkpoint could be loaded ({reasons})",
                refused=[refusal._asdict() for refusal in refusals],
                removed_temporaries=[str(path) for path in removed],
            )
            return None
        moved = [quarantine(Path(r.path)) for r in refusals if r.step > loaded.step]
        quarantined = [str(path) for path in moved if path is not None]
        self.stage = "load_state_dict"
        step, path, read_s = loaded.step, loaded.path, loaded.read_s
        state_bytes = tensor_bytes(loaded.payload["job"])
        self.job.load_state_dict(loaded.payload["job"])
        del loaded  # the loaded tensors the job did not keep are freed before training goes on
        memory = self.device_memory_after_load(before, state_bytes)
        probe = live_digests(self.job, self.cuda)
        self.channel.send(
            RESTORED,
            step=step,
            path=str(path),
            read_s=read_s,
            device_memory=memory,
            refused=[refusal._asdict() for refusal in refusals],
            removed_temporaries=[str(path) for path in removed],
            quarantined=quarantined,
            probe={key: leaf_to_json(leaf) for key, leaf in probe.items()},
        )
        self.log(f"resumed from {path} (step {step}, read in {read_s * 1000:.2f} ms, device memory {memory})")
        return step

    def device_memory_before_load(self) -> int | None:
        """Allocated device memory before the checkpoint is read; the peak counter starts again here."""
        if not self.cuda:
            return None
        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        return int(torch.cuda.memory_allocated(self.device))

    def device_memory_after_load(self, before: int | None, state_bytes: int) -> dict[str, int] | None:
        """What loading the checkpoint cost on the device: its peak above what the job held before."""
        if before is None:
            return None
        torch.cuda.synchronize(self.device)
        return {
            "state_bytes": state_bytes,
            "allocated_before_bytes": before,
            "peak_during_load_bytes": int(torch.cuda.max_memory_allocated(self.device)),
            "allocated_after_bytes": int(torch.cuda.memory_allocated(self.device)),
        }

    def finish(self) -> None:
        """Save the final state (job state and process RNGs) for the parent to compare."""
        config = self.config
        self.stage = "save final state"
        path = config.final_state_folder / f"{config.label}.rank{self.rank}.pt"
        payload = {"step": config.steps, "state": self.job.state_dict(), "rng": capture_rng(self.cuda)}
        save_atomically(path, payload, durable=False)  # read by the parent, not a checkpoint
        peak_device = int(torch.cuda.max_memory_allocated(self.device)) if self.cuda else None
        probe = live_digests(self.job, self.cuda)
        self.channel.send(
            DONE,
            step=config.steps,
            final_state=str(path),
            probe={key: leaf_to_json(leaf) for key, leaf in probe.items()},
            peak_rss_bytes=peak_rss_bytes(),
            peak_device_memory_bytes=peak_device,
        )
        self.log(f"done after step {config.steps}; final state in {path}")


def tensor_bytes(state: Any) -> int:
    """Bytes of the tensors in a (nested) state, each storage counted once."""
    from spikelint.smoke.compare.leaves import flatten

    seen: set[tuple[str, int]] = set()
    total = 0
    for _, value in flatten(state):
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            key = (str(value.device), storage.data_ptr())
            if key not in seen:
                seen.add(key)
                total += storage.nbytes()
    return total


def child_target(config: ChildConfig) -> Callable[[int, ChildChannel, float], int]:
    """What ``processes.launch`` runs in each forked rank."""

    def run(rank: int, channel: ChildChannel, forked_at: float) -> int:
        return TrainingProcess(config, rank, channel, forked_at).run()

    return run
