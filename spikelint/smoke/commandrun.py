"""The smoke protocol for ``--cmd``: reference, SIGKILL and SIGTERM variants, resumes, comparison.

The parent never imports the job: every run is the team's command in a new process, so each
resume is a real restart. Only the comparison loads torch (for ``torch.save`` files).
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path
from typing import Any
from typing import TextIO

from spikelint.smoke.analysis import RESUME_FAILED
from spikelint.smoke.analysis import STATE_DIFFERS
from spikelint.smoke.analysis import VERIFIED
from spikelint.smoke.analysis import describe_exit
from spikelint.smoke.analysis import difference_json
from spikelint.smoke.analysis import overall_verdict
from spikelint.smoke.command import CommandError
from spikelint.smoke.command import CommandRun
from spikelint.smoke.command import compare_folders
from spikelint.smoke.command import expand
from spikelint.smoke.command import run_command
from spikelint.smoke.command import snapshot
from spikelint.smoke.command import written_since
from spikelint.smoke.plan import KILL_BETWEEN
from spikelint.smoke.plan import SIGTERM_PREEMPTION
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.plan import SmokePlan
from spikelint.smoke.plan import VariantSpec
from spikelint.smoke.report import base_summary
from spikelint.smoke.report import render_json
from spikelint.smoke.report import render_text
from spikelint.smoke.report import setup_error_summary
from spikelint.smoke.runfolder import Journal
from spikelint.smoke.runfolder import create_run_folder
from spikelint.smoke.runfolder import new_run_id
from spikelint.smoke.runfolder import write_json_atomically

NON_FINITE = ("nan", "-nan", "inf", "-inf")


class CommandSmoke:
    def __init__(self, options: SmokeOptions, plan: SmokePlan, root: Path, journal: Journal) -> None:
        assert options.cmd is not None
        self.options = options
        self.plan = plan
        self.root = root
        self.journal = journal
        self.deadline = time.monotonic() + options.timeout
        self.progress = re.compile(options.progress_regex)
        self.loss = re.compile(options.loss_regex)
        (root / "checkpoints").mkdir(exist_ok=True)

    def argv(self, folder: Path, resume: bool) -> list[str]:
        assert self.options.cmd is not None
        values = {"steps": str(self.plan.steps), "every": str(self.plan.checkpoint_every), "ckpt": str(folder),
                  "seed": str(self.options.seed), "resume": self.options.resume_arg if resume else ""}
        return expand(self.options.cmd, values)

    def run(self, label: str, folder: Path, resume: bool, stop_at: int | None = None,
            signum: int = signal.SIGKILL) -> CommandRun:
        folder.mkdir(parents=True, exist_ok=True)
        run = CommandRun(label, self.argv(folder, resume), self.root / "logs" / f"{label}.log")
        self.journal.progress(f"{label}: {' '.join(run.argv)}")
        run_command(run, self.progress, self.loss, self.deadline, stop_at, signum,
                    to_group=self.options.sigterm_to == "group" and signum == signal.SIGTERM)
        self.journal.event("command_ended", run=label, exit_code=run.exit_code, steps=len(run.steps),
                           signalled_at_step=run.signalled_at_step)
        return run

    def variant(self, spec: VariantSpec, reference: CommandRun, reference_folder: Path) -> dict[str, Any]:
        folder = self.root / "checkpoints" / spec.name
        signum = signal.SIGTERM if spec.signal == "SIGTERM" else signal.SIGKILL
        interrupted = self.run(f"{spec.name}.interrupted", folder, False, spec.hold_at_step, signum)
        result = empty_variant(spec)
        result["interrupted_exit"] = [describe(interrupted.exit_code)]
        result["interrupted_at_step"] = interrupted.signalled_at_step
        if interrupted.signalled_at_step is None:
            result["message"] = (f"the command ended ({describe(interrupted.exit_code)}) before printing step "
                                 f"{spec.hold_at_step}; last output: {interrupted.tail()}")
            return result
        self.journal.progress(f"{spec.name}: {spec.signal} to the command after step {interrupted.signalled_at_step}")
        before = first_loss_difference(reference.steps, interrupted.steps, max(interrupted.steps))
        before_resume = snapshot(folder)
        resumed = self.run(f"{spec.name}.resumed", folder, True)
        if resumed.exit_code != 0:
            result["message"] = f"resume failed: the resumed command ended with {describe(resumed.exit_code)}; last output: {resumed.tail()}"
            return result
        if not resumed.steps:
            result["message"] = "resume failed: the resumed command printed no step lines (see --progress-regex)"
            return result
        resume_step = min(resumed.steps) - 1
        result["resumed_from_step"] = resume_step
        if resume_step == 0:
            result["message"] = (f"resume failed: the resumed command started again at step 1; did "
                                 f"{self.options.resume_arg!r} reach it ({{resume}} in --cmd)?")
            return result
        names = written_since(folder, before_resume)
        if not names:
            result["message"] = "resume failed: the resumed command wrote no checkpoint files to compare"
            return result
        leaves, differences, problems = compare_folders(reference_folder, folder, names)
        result["leaves_compared"] = leaves
        result["differences"] = [dict(difference_json(spec.name, 0, d, file), key=f"{file}:{d.key}")
                                 for file, d in differences[:25]]
        loss_step = first_loss_difference(reference.steps, resumed.steps, self.plan.steps, start=resume_step + 1)
        result["losses"] = {"compared_steps": [resume_step + 1, self.plan.steps], "equal": loss_step is None,
                            "first_differing_step": loss_step}
        result["first_divergent_step"] = loss_step
        nan = next((step for step, text in sorted(reference.steps.items()) if text.lower() in NON_FINITE), None)
        notes = [f"compared files: {', '.join(str(name) for name in names)}"]
        if spec.signal == "SIGTERM" and interrupted.exit_code not in (0, 143):
            notes.append(f"after SIGTERM the command ended with {describe(interrupted.exit_code)}, not 143")
        result["notes"] = notes
        if before is not None:
            result["verdict"] = STATE_DIFFERS
            result["message"] = (f"the interrupted run already differed from the uninterrupted one at step {before}: "
                                 "the command is not deterministic")
        elif nan is not None:
            result["verdict"] = STATE_DIFFERS
            result["message"] = f"the loss is {reference.steps[nan]} at step {nan}: non-finite losses prove nothing"
        elif problems:
            result["message"] = "resume failed: " + "; ".join(problems)
        elif differences or loss_step is not None:
            result["verdict"] = STATE_DIFFERS
            parts = [f"resumed from step {resume_step}, but the state differs"]
            if differences:
                file, first = differences[0]
                delta = f", largest |difference| {first.max_abs_diff:.3g}" if first.max_abs_diff is not None else ""
                parts.append(f"first differing key {file}:{first.key} ({first.kind}{delta})")
            if loss_step is not None:
                parts.append(f"losses differ from step {loss_step}")
            result["message"] = "; ".join(parts)
        else:
            result["verdict"] = VERIFIED
            result["message"] = (f"resumed from step {resume_step}; {leaves} leaves of {len(names)} checkpoint file(s) "
                                 f"and the losses of steps {resume_step + 1}-{self.plan.steps} equal the uninterrupted "
                                 "run bit for bit")
        return result

    def execute(self) -> dict[str, Any]:
        reference_folder = self.root / "checkpoints" / "reference"
        reference = self.run("reference", reference_folder, False)
        if reference.exit_code != 0:
            return setup_error_summary(f"the uninterrupted command ended with {describe(reference.exit_code)}; "
                                       f"last output: {reference.tail()}")
        if not reference.steps:
            return setup_error_summary("the command printed no line matching --progress-regex "
                                       f"{self.options.progress_regex!r}")
        specs = [spec for spec in self.plan.variants if spec.name in (KILL_BETWEEN, SIGTERM_PREEMPTION)]
        results = [self.variant(spec, reference, reference_folder) for spec in specs]
        for result in results:
            self.journal.progress(f"compared {result['name']}: {result['verdict']}")
        verdict = overall_verdict(results)
        failing = [r for r in results if r["verdict"] != VERIFIED]
        message = (f"{len(failing)} of {len(results)} variants failed; {failing[0]['name']}: {failing[0]['message']}"
                   if failing else f"resume of the command verified bit for bit in all {len(results)} variants "
                   "(every run a new process)")
        summary = base_summary(verdict, message)
        summary["variants"] = results
        summary["differences"] = [d for r in results for d in r["differences"]]
        return summary


def describe(code: int | None) -> str:
    """How a command run ended, in the words the job-object runs use."""
    return "no exit code" if code is None else describe_exit(code)


def first_loss_difference(reference: dict[int, str], other: dict[int, str], last: int, start: int = 1) -> int | None:
    for step in range(start, last + 1):
        if step in other and reference.get(step) != other[step]:
            return step
    return None


def empty_variant(spec: VariantSpec) -> dict[str, Any]:
    return {
        "name": spec.name, "signal": spec.signal, "description": spec.description, "verdict": RESUME_FAILED,
        "message": "", "interrupted_at_step": None, "interrupted_exit": [], "checkpoints_before_interruption": [],
        "expected_resume_step": spec.expected_resume_step, "resumed_from_step": None, "refused_checkpoints": [],
        "removed_temporaries": [], "leaves_compared": 0, "losses": None, "data_position": None,
        "restore_check": None, "first_divergent_step": None, "differences": [], "restart": "exec",
    }


def run_command_smoke(options: SmokeOptions, plan: SmokePlan, stdout: TextIO, stderr: TextIO, started: float) -> int:
    run_id = new_run_id()
    early = Journal(None, None, stderr, started)
    try:
        folder = create_run_folder(options.run_dir, run_id)
    except OSError as error:
        summary = setup_error_summary(f"cannot create the run folder: {error}")
        early.progress(f"setup error: {summary['message']}")
        stdout.write(render_json(summary) if options.format == "json" else render_text(summary))
        return 2
    journal = Journal(folder.events, folder.logs / "spikelint.log", stderr, started)
    try:
        try:
            summary = CommandSmoke(options, plan, folder.root, journal).execute()
        except CommandError as error:
            summary = setup_error_summary(str(error))
        except OSError as error:
            summary = setup_error_summary(f"{error.strerror or error}: {getattr(error, 'filename', '') or ''}".strip())
        summary["run_id"] = run_id
        summary["run_dir"] = str(folder.root)
        summary["job"] = options.cmd
        summary["device"] = {"type": "cuda" if options.device == "cuda" else "cpu", "processes": 1}
        summary["plan"] = {"steps": plan.steps, "checkpoint_every": plan.checkpoint_every, "kill_at_step": plan.kill_at_step,
                           "signal": options.signal, "seed": options.seed, "nproc": 1,
                           "variants": [v["name"] for v in summary["variants"]], "restart": "exec",
                           "sigterm_to": options.sigterm_to}
        summary["measurements"]["total_wall_s"] = time.monotonic() - started
        summary["checkpoints_kept"] = True
        try:
            write_json_atomically(folder.summary, summary)
        except OSError as error:
            summary = setup_error_summary(f"cannot write {folder.summary}: {error.strerror or error}")
        journal.progress(f"finished: {summary['verdict']} (exit {summary['exit_code']}), run folder {folder.root}")
    finally:
        journal.close()
    stdout.write(render_json(summary) if options.format == "json" else render_text(summary))
    return int(summary["exit_code"])
