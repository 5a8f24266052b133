"""The parent process of a smoke run: preflight, reference, interruptions, resumes, report.

The parent imports torch once, triggers deterministic mode's one-off import once, and then
forks every training process (reference, interrupted, resumed, per rank) before any CUDA
initialisation; it never trains itself, so every child starts from a process that holds
no training state.  Watching the processes is :mod:`spikelint.smoke.harness.supervise`'s job and
interrupting them :mod:`spikelint.smoke.harness.interrupt`'s; this module runs the protocol (reference,
each variant's interruption and resume, the comparison) and builds the report.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import socket
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any
from typing import TextIO

from spikelint import __version__
from spikelint.schemas import validation_errors
from spikelint.smoke.harness import measure
from spikelint.smoke.harness.analysis import FinalStates
from spikelint.smoke.harness.analysis import Interruption
from spikelint.smoke.harness.analysis import RunRecord
from spikelint.smoke.harness.analysis import analyse_variant
from spikelint.smoke.result import RESUME_FAILED
from spikelint.smoke.result import VERIFIED
from spikelint.smoke.result import VariantResult
from spikelint.smoke.result import overall_verdict
from spikelint.smoke.result import why_variants_disagree
from spikelint.smoke.harness.child import INTERRUPTED
from spikelint.smoke.harness.child import REFERENCE
from spikelint.smoke.harness.child import RESUMED
from spikelint.smoke.harness.child import ChildConfig
from spikelint.smoke.harness.determinism import NUM_THREADS
from spikelint.smoke.harness.determinism import nondeterministic_ops_warning
from spikelint.smoke.harness.determinism import scoped_environment
from spikelint.smoke.harness.determinism import training_environment
from spikelint.smoke.harness.determinism import warm_up_deterministic_mode
from spikelint.smoke.gpu import GpuInventory
from spikelint.smoke.gpu import NoSampler
from spikelint.smoke.gpu import query_inventory
from spikelint.smoke.gpu import start_sampler
from spikelint.smoke.harness.interrupt import Interrupter
from spikelint.smoke.harness.job import JobError
from spikelint.smoke.harness.job import JobSpec
from spikelint.smoke.harness.job import resolve_job
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.plan import SmokePlan
from spikelint.smoke.plan import KILL_BETWEEN
from spikelint.smoke.plan import VariantSpec
from spikelint.smoke.preflight import DeviceChoice
from spikelint.smoke.preflight import PreflightError
from spikelint.smoke.preflight import StorageReport
from spikelint.smoke.preflight import check_checkpoint_folder
from spikelint.smoke.preflight import resolve_device
from spikelint.smoke.harness.processes import frozen_heap
from spikelint.smoke.report.summary import SCHEMA_NAME
from spikelint.smoke.report.summary import base_summary
from spikelint.smoke.report.summary import render_json
from spikelint.smoke.report.summary import render_text
from spikelint.smoke.report.summary import setup_error_summary
from spikelint.smoke.runfolder import Journal
from spikelint.smoke.runfolder import RunFolder
from spikelint.smoke.runfolder import create_run_folder
from spikelint.smoke.runfolder import git_revision
from spikelint.smoke.runfolder import new_run_id
from spikelint.smoke.runfolder import python_version
from spikelint.smoke.runfolder import utc_now
from spikelint.smoke.runfolder import write_json_atomically
from spikelint.smoke.harness.supervise import SetupError
from spikelint.smoke.harness.supervise import Supervisor
from spikelint.smoke.harness.supervise import log_tail
from spikelint.smoke.harness.supervise import no_space

EXIT_SETUP_ERROR = 2


class StateUnloadable(Exception):
    """The job's first ``state_dict()`` holds a value the weights-only loader refuses (resume_failed)."""


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SmokeRun:
    """One smoke run's state in the parent: folder, journal, deadline, reports of the children."""

    def __init__(
        self,
        options: SmokeOptions,
        plan: SmokePlan,
        torch: Any,
        device: DeviceChoice,
        folder: RunFolder,
        run_id: str,
        journal: Journal,
        started: float,
        import_torch_s: float,
        environment: dict[str, str],
    ) -> None:
        self.options = options
        self.plan = plan
        self.torch = torch
        self.device = device
        self.folder = folder
        self.run_id = run_id
        self.journal = journal
        self.started = started
        self.deadline = started + options.timeout
        self.import_torch_s = import_torch_s
        self.deterministic_mode_s = 0.0
        self.environment = environment
        self.warnings: list[str] = []
        self.storage: StorageReport | None = None
        self.checkpoint_root: Path | None = None
        self.job: JobSpec | None = None
        self.inventory: GpuInventory | None = None
        self.reference_device: dict[str, Any] | None = None
        self.reference_settings: dict[str, Any] | None = None
        self.git = git_revision(Path.cwd())
        self.processes = Supervisor(options, plan.steps, torch, device, folder, journal, self.deadline)

    # ----------------------------------------------------------------- set-up

    def prepare(self) -> None:
        """Checkpoint folder, job import, manifest, and the one-off imports the children share."""
        requested = Path(self.options.checkpoint_dir) if self.options.checkpoint_dir else self.folder.root / "checkpoints"
        try:
            self.storage, warning = check_checkpoint_folder(requested, self.options.require_persistent)
        except PreflightError as error:
            raise SetupError(str(error)) from None
        if warning:
            self.warnings.append(warning)
            self.journal.progress(f"warning: {warning}")
        self.checkpoint_root = (
            requested / f"spikelint-smoke-{self.run_id}" if self.options.checkpoint_dir else requested
        )
        self.checkpoint_root.mkdir(parents=True, exist_ok=True)
        try:
            self.job = resolve_job(self.options.job, self.plan.steps)
        except JobError as error:
            raise SetupError(str(error)) from None
        if self.device.type == "cuda" and self.torch.cuda.is_initialized():
            raise SetupError(
                "CUDA was initialised in the parent (importing the job module?); the training processes are "
                "forked and cannot use CUDA then: move CUDA work from import time into the factory or setup()"
            )
        self.inventory = query_inventory() if self.device.type == "cuda" else None
        self.deterministic_mode_s = warm_up_deterministic_mode(self.torch)
        if self.options.nproc > 1:
            import torch.distributed  # noqa: F401  (imported once here, not in every child)
        self.write_manifest()
        self.journal.event("configuration_accepted", options=asdict(self.options), kill_at_step=self.plan.kill_at_step)
        self.journal.progress(
            f"preflight passed: device {self.device.type}, {self.options.nproc} process(es) per run, "
            f"checkpoints in {self.checkpoint_root} ({self.storage.fstype}: {self.storage.storage_class}), "
            f"job {self.job.label}"
        )

    def manifest(self) -> dict[str, Any]:
        options = self.options
        inventory = self.inventory
        device_name = (self.reference_device or {}).get("name") or (
            inventory.names[0] if inventory and inventory.names else None
        )
        return {
            "schema": "spikelint-smoke-manifest/1",
            "run_id": self.run_id,
            "created": utc_now(),
            "spikelint_version": __version__,
            "versions": {
                "python": python_version(),
                "torch": str(self.torch.__version__),
                "numpy": _numpy_version(),
                "cuda": self.torch.version.cuda,
                "cudnn": (self.reference_device or {}).get("cudnn"),
                "driver": inventory.driver_version if inventory else "not available",
            },
            "device": {"type": self.device.type, "name": device_name, "count": max(self.device.visible_devices, 1)},
            "git": self.git,
            "options": asdict(options),
            "effective": {
                "device": self.device.type,
                "kill_at_step": self.plan.kill_at_step,
                "variants": [spec.name for spec in self.plan.variants],
                "run_dir": str(self.folder.root),
                "checkpoint_folder": str(self.checkpoint_root),
                "job": self.job.label if self.job else options.job,
                "num_threads": NUM_THREADS,
                "backend": self.backend(),
                "start_method": "a fresh interpreter per run" if options.restart == "exec"
                else "fork before CUDA initialisation",
            },
            "seed": options.seed,
            "environment": self.environment,
            "determinism": self.reference_settings,
            "platform": platform.platform(),
        }

    def write_manifest(self) -> None:
        write_json_atomically(self.folder.manifest, self.manifest())

    def backend(self) -> str | None:
        if self.options.nproc == 1:
            return None
        return "nccl" if self.device.type == "cuda" else "gloo"

    # -------------------------------------------------------------- processes

    def config(self, label: str, role: str, spec: VariantSpec | None) -> ChildConfig:
        assert self.job is not None and self.checkpoint_root is not None
        return ChildConfig(
            label=label,
            role=role,
            world_size=self.options.nproc,
            device_type=self.device.type,
            backend=self.backend(),
            master_port=free_loopback_port() if self.options.nproc > 1 else None,
            seed=self.options.seed,
            steps=self.plan.steps,
            checkpoint_every=(spec.checkpoint_every if spec else None) or self.plan.checkpoint_every,
            checkpoint_folder=self.checkpoint_root / spec.name if spec else None,
            hold_at_step=spec.hold_at_step if spec and role == INTERRUPTED else None,
            pause_in_write_at_step=spec.pause_in_write_at_step if spec and role == INTERRUPTED else None,
            probe_steps=self.plan.probe_steps,
            final_state_folder=self.folder.final_states,
            job_factory=self.job.factory,
            num_threads=NUM_THREADS,
            check_weights_only=role == REFERENCE,
            job_spec=self.options.job,
            restart="exec" if self.runs_in_exec(label, role, spec) else "fork",
            warn_only=self.options.warn_only,
        )

    def runs_in_exec(self, label: str, role: str, spec: VariantSpec | None) -> bool:
        """``--restart exec``: every run; the fork default: the resume of kill-between-checkpoints."""
        if self.options.restart == "exec":
            return True
        return self.options.exec_check and role == RESUMED and spec is not None and spec.name == KILL_BETWEEN

    # ------------------------------------------------------------------ runs

    def run_reference(self) -> RunRecord:
        self.journal.event("reference_started")
        self.journal.progress(f"reference: training {self.plan.steps} steps uninterrupted")
        self.processes.last_heartbeat = time.monotonic()
        group = self.processes.start(self.config("reference", REFERENCE, None))
        try:
            finished = self.processes.wait(group, group.exited)
        finally:
            group.close()
        record = self.processes.finish_group(group, timed_out=not finished)
        if not record.completed:
            unloadable = next((e for e in record.errors if e.get("unloadable_key") is not None), None)
            if unloadable is not None:
                raise StateUnloadable(str(unloadable.get("message")))
            log = self.folder.log_for("reference", 0)
            tail = log_tail(log)
            raise SetupError(
                f"the reference run failed: {record.failure_reason()} (see {log})" + (f"; last output: {tail}" if tail else "")
            )
        self.check_room_for(record)
        self.reference_device = record.ready[0]["device"] if record.ready[0] else None
        self.reference_settings = record.ready[0].get("settings") if record.ready[0] else None
        step_times = [m["step_s"] for m in record.steps[0].values()]
        median = sorted(step_times)[len(step_times) // 2]
        self.journal.event("device_ready", device=self.reference_device)
        self.journal.event("reference_done", steps=self.plan.steps)
        self.journal.progress(
            f"reference: {self.plan.steps} steps done on {self.reference_device.get('name') if self.reference_device else '?'}"
            f" (median step {median * 1000:.2f} ms)"
        )
        self.write_manifest()
        return record

    def check_room_for(self, reference: RunRecord) -> None:
        """Now that the state's size is known: room for every variant's checkpoints (two kept plus one
        being written, per rank) and final states."""
        assert self.checkpoint_root is not None
        sizes = [Path(done["final_state"]).stat().st_size for done in reference.done if done is not None]
        variants = len(self.plan.variants)
        needed = max(sizes, default=0) * self.options.nproc * (3 * variants + variants + 1)
        free = shutil.disk_usage(self.checkpoint_root).free
        if free < needed:
            raise SetupError(
                f"checkpoint folder {self.checkpoint_root} has {free / 2**20:.1f} MiB free; this job's checkpoints "
                f"need about {needed / 2**20:.1f} MiB"
            )

    def resume(self, spec: VariantSpec) -> RunRecord:
        label = f"{spec.name}.resumed"
        self.journal.progress(f"{spec.name}: resuming in a fresh process")
        group = self.processes.start(self.config(label, RESUMED, spec))
        try:
            finished = self.processes.wait(group, group.exited)
        finally:
            group.close()
        record = self.processes.finish_group(group, timed_out=not finished)
        for restored in record.restored[:1]:
            if restored is None:
                continue
            for refusal in restored.get("refused", []):
                self.journal.progress(f"{spec.name}: refused {Path(refusal['path']).name}: {refusal['reason']}")
            self.journal.progress(f"{spec.name}: resumed from step {restored['step']}, trained to step {self.plan.steps}"
                                  if record.completed else f"{spec.name}: resumed from step {restored['step']}")
        if not record.completed:
            record.log_tail = log_tail(self.folder.log_for(label, 0))
            self.journal.progress(f"{spec.name}: resume failed: {record.failure_reason()}")
        return record

    # ---------------------------------------------------------------- summary

    def summary(self, reference: RunRecord, results: list[VariantResult], gpu: Any) -> dict[str, Any]:
        verdict = overall_verdict(results)
        failing = [result for result in results if result.verdict != VERIFIED]
        proved = self.proof_mode(results)
        if failing:
            message = f"{len(failing)} of {len(results)} variants failed; {failing[0].name}: {failing[0].message}"
            why = why_variants_disagree(results)
            if why:
                message += f". {why}"
            if self.processes.nondeterministic_ops:
                message += (f". The job ran {', '.join(self.processes.nondeterministic_ops)} without a deterministic "
                            "implementation (--warn-only), which alone can make two runs differ")
        else:
            message = f"resume verified bit for bit in all {len(results)} interruption variants ({proved})"
        summary = base_summary(verdict, message)
        sigterm = next((r.sigterm for r in results if r.sigterm), None)
        summary["measurements"] = {
            "total_wall_s": time.monotonic() - self.started,
            "startup": measure.startup_measurements(self.processes.records, self.import_torch_s, self.deterministic_mode_s),
            **measure.step_measurements(reference),
            **measure.memory_measurements(self.processes.records),
            "resume_device_memory": measure.resume_device_memory(self.processes.records),
            "parent_peak_host_memory_bytes": int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024,
            "gpu_utilisation": gpu,
            **measure.checkpoint_measurements(self.processes.records),
            "sigterm": measure.sigterm_measurements(
                sigterm.get("checkpoint_write_s") if sigterm else None, sigterm.get("signal_to_exit_s") if sigterm else None
            ),
        }
        summary["variants"] = [result.to_json() for result in results]
        summary["differences"] = [difference for result in results for difference in result.differences]
        measured = summary["measurements"]["sigterm"]
        if measured and not measured["fits_grace_period"]:
            self.warnings.append("the SIGTERM checkpoint does not fit the 30 s grace period")
        return summary

    def proof_mode(self, results: list[VariantResult]) -> str:
        """Which kind of restart the verdict rests on."""
        if self.options.restart == "exec":
            return "every run in a fresh interpreter"
        execs = [result.name for result in results if result.restart == "exec"]
        if execs:
            return f"runs forked from one parent; the {', '.join(execs)} resume in a fresh interpreter"
        return "every run forked from one parent: import-time and string-hash state were shared, see --restart exec"

    def decorate(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Identity, device, plan and storage: known for every outcome once the folder exists."""
        summary["run_id"] = self.run_id
        summary["run_dir"] = str(self.folder.root)
        device = dict(self.reference_device or {"type": self.device.type})
        device["processes"] = self.options.nproc
        summary["device"] = device
        summary["job"] = self.job.label if self.job else self.options.job
        summary["plan"] = {
            "steps": self.plan.steps,
            "checkpoint_every": self.plan.checkpoint_every,
            "kill_at_step": self.plan.kill_at_step,
            "signal": self.options.signal,
            "seed": self.options.seed,
            "nproc": self.options.nproc,
            "variants": [spec.name for spec in self.plan.variants],
            "restart": self.options.restart,
            "exec_check": self.options.exec_check and self.options.restart == "fork",
            "sigterm_to": self.options.sigterm_to,
            "warn_only": self.options.warn_only,
        }
        summary["storage"] = self.storage._asdict() if self.storage else None
        nondeterminism = nondeterministic_ops_warning(self.processes.nondeterministic_ops)
        summary["warnings"] = list(self.warnings) + summary["warnings"] + ([nondeterminism] if nondeterminism else [])
        return summary

    def clean_up(self, verdict: str) -> bool:
        """Checkpoints and final states are removed after a verified run, kept for inspection otherwise."""
        if verdict != VERIFIED:
            return True
        if self.checkpoint_root is not None:
            shutil.rmtree(self.checkpoint_root, ignore_errors=True)
        shutil.rmtree(self.folder.final_states, ignore_errors=True)
        return False

    def failed(self, message: str) -> dict[str, Any]:
        self.processes.sampler.stop()
        self.processes.sampler = NoSampler()
        self.journal.progress(f"setup error: {message}")
        summary = setup_error_summary(message)
        summary["measurements"]["total_wall_s"] = time.monotonic() - self.started
        return summary

    def unloadable(self, message: str) -> dict[str, Any]:
        """Found on the reference's first state_dict(): no checkpoint of this job could ever be resumed."""
        self.processes.sampler.stop()
        self.processes.sampler = NoSampler()
        self.journal.progress(f"resume failed: {message}")
        summary = base_summary(RESUME_FAILED, (
            f"{message}; every checkpoint would be refused, so no interruption was run: store NumPy arrays as "
            "tensors, versions as strings, or register the type with torch.serialization.add_safe_globals"
        ))
        summary["errors"] = [message]
        summary["measurements"]["total_wall_s"] = time.monotonic() - self.started
        return summary

    def execute(self, keep_heap_frozen: bool) -> dict[str, Any]:
        try:
            self.prepare()
            with frozen_heap(keep_heap_frozen):  # after every import the children will share
                summary = self.interrupt_resume_compare()
        except SetupError as error:
            summary = self.failed(str(error))
        except StateUnloadable as error:
            summary = self.unloadable(str(error))
        except OSError as error:
            if not no_space(error):
                self.journal.log_traceback()
                summary = self.failed(f"internal error: {type(error).__name__}: {error} (traceback in logs/spikelint.log)")
            else:
                summary = self.failed(f"no space left on device: {error.strerror or error}")
        except Exception as error:  # noqa: BLE001 - a defect in spikelint: report it like a setup error, keep the traceback
            self.journal.log_traceback()
            summary = self.failed(f"internal error: {type(error).__name__}: {error} (traceback in logs/spikelint.log)")
        summary = self.decorate(summary)
        summary["checkpoints_kept"] = self.clean_up(summary["verdict"])
        return summary

    def interrupt_resume_compare(self) -> dict[str, Any]:
        self.processes.sampler = start_sampler(self.device.type, self.folder.logs / "gpu-utilisation.csv")
        reference = self.run_reference()
        assert self.checkpoint_root is not None
        interrupter = Interrupter(self.processes, self.options, self.checkpoint_root, self.journal)
        interruptions: list[tuple[Interruption, RunRecord | None]] = []
        for spec in self.plan.variants:
            if time.monotonic() >= self.deadline:
                skipped = Interruption(spec, failure="not run: the time limit (--timeout) was reached")
                interruptions.append((skipped, None))
                continue
            interruption = interrupter.interrupt(spec, self.config(f"{spec.name}.interrupted", INTERRUPTED, spec))
            resumed = self.resume(spec) if interruption.failure is None else None
            interruptions.append((interruption, resumed))
        gpu = self.processes.sampler.stop()
        self.processes.sampler = NoSampler()
        states = FinalStates()
        results = []
        for interruption, resumed in interruptions:
            result = analyse_variant(interruption, resumed, reference, states, self.plan.steps)
            results.append(result)
            self.journal.event("compared", variant=result.name, verdict=result.verdict,
                               leaves=result.leaves_compared, first_divergent_step=result.first_divergent_step)
            self.journal.progress(f"compared {result.name}: {result.verdict}")
        return self.summary(reference, results, gpu)


def _numpy_version() -> str | None:
    try:
        import numpy

        return str(numpy.__version__)
    except ImportError:
        return None


def write_summary(folder: RunFolder, summary: dict[str, Any], journal: Journal) -> None:
    """Validate against the shipped schema, then write atomically."""
    problems = validation_errors(SCHEMA_NAME, summary)
    if problems:
        summary["errors"].append(f"summary does not match {SCHEMA_NAME}: {problems[0]}")
        journal.progress(f"internal error: summary does not match {SCHEMA_NAME}: {'; '.join(problems[:3])}")
    write_json_atomically(folder.summary, summary)


def run_smoke(
    options: SmokeOptions,
    plan: SmokePlan,
    *,
    started: float,
    import_torch_s: float,
    stdout: TextIO,
    stderr: TextIO,
    process_exits: bool = False,
) -> int:
    """Run the whole protocol and print the report; returns the exit code, which matches the verdict.

    ``process_exits`` says that the interpreter ends right after (the command line), so the
    heap may stay frozen; an in-process caller gets its garbage collector back as it was.
    """
    environment = training_environment(os.environ)
    with scoped_environment(os.environ, environment):
        return _run_in_environment(options, plan, environment, started, import_torch_s, stdout, stderr, process_exits)


def _run_in_environment(
    options: SmokeOptions,
    plan: SmokePlan,
    environment: dict[str, str],
    started: float,
    import_torch_s: float,
    stdout: TextIO,
    stderr: TextIO,
    process_exits: bool,
) -> int:
    import torch

    run_id = new_run_id()
    early = Journal(None, None, stderr, started)
    try:
        device = resolve_device(options.device, options.nproc, torch)
        folder = create_run_folder(options.run_dir, run_id)
    except PreflightError as error:
        return _early_failure(str(error), options, stdout, early)
    except FileExistsError:
        return _early_failure(f"run folder {options.run_dir} already exists", options, stdout, early)
    except OSError as error:
        return _early_failure(f"cannot create the run folder: {error}", options, stdout, early)
    journal = Journal(folder.events, folder.logs / "spikelint.log", stderr, started)
    try:
        smoke = SmokeRun(options, plan, torch, device, folder, run_id, journal, started, import_torch_s, environment)
        journal.event("run_started", run_id=run_id, run_dir=str(folder.root), pid=os.getpid())
        summary = smoke.execute(keep_heap_frozen=process_exits)
        try:
            write_summary(folder, summary, journal)
        except OSError as error:  # the verdict still reaches stdout; a full disk is a setup problem
            if not no_space(error):
                raise
            summary = smoke.decorate(setup_error_summary(
                f"no space left on device while writing {folder.summary}: {error.strerror or error}"
            ))
            journal.progress(f"setup error: {summary['message']}")
        journal.event("finished", verdict=summary["verdict"], exit_code=summary["exit_code"])
        journal.progress(f"finished: {summary['verdict']} (exit {summary['exit_code']}), run folder {folder.root}")
    finally:
        journal.close()
    stdout.write(render_json(summary) if options.format == "json" else render_text(summary))
    stdout.flush()
    return int(summary["exit_code"])


def _early_failure(message: str, options: SmokeOptions, stdout: TextIO, journal: Journal) -> int:
    journal.progress(f"setup error: {message}")
    summary = setup_error_summary(message)
    stdout.write(render_json(summary) if options.format == "json" else render_text(summary))
    return EXIT_SETUP_ERROR
