"""Command line of ``spikelint smoke``: parse options, fail fast, then start the smoke run.

This module must stay importable without torch: the lint path imports the top-level CLI,
and torch is an optional extra (``pip install ".[smoke]"`` in a clone) loaded only after the
options have been parsed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence
from typing import TextIO

from spikelint import __version__
from spikelint.smoke.plan import DEVICE_CHOICES
from spikelint.smoke.plan import FORMAT_CHOICES
from spikelint.smoke.plan import RESTART_CHOICES
from spikelint.smoke.plan import SIGNAL_CHOICES
from spikelint.smoke.plan import SIGTERM_TARGETS
from spikelint.smoke.plan import PlanError
from spikelint.smoke.plan import SmokeOptions
from spikelint.smoke.plan import make_plan

EXIT_SETUP_ERROR = 2
TORCH_MISSING = "spikelint smoke needs PyTorch, which is not installed: pip install \"torch>=2.1\" \"numpy>=1.24\" (spikelint's smoke extra)"

DESCRIPTION = """\
Train a tiny (or your own) PyTorch job, kill it mid-run in several ways (SIGKILL between
checkpoints, SIGKILL during a checkpoint write, a truncated newest checkpoint, SIGTERM
preemption), resume each in a fresh process and prove that the resumed state equals an
uninterrupted run bit for bit. Exit 0 verified, 1 state differs or resume failed, 2 setup
error, 3 incomplete (every variant that ran passed, but the plan could not test everything the
job has: an epoch end, a variant that found nothing to interrupt)."""
DIFF_EPILOG = "spikelint smoke diff A B compares two checkpoints leaf by leaf (see spikelint smoke diff --help)."


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return value


def positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    defaults = SmokeOptions()
    parser = argparse.ArgumentParser(prog="spikelint smoke", description=DESCRIPTION, epilog=DIFF_EPILOG)
    parser.add_argument("--version", action="version", version=f"spikelint smoke {__version__}")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default=defaults.device,
                        help="where to train (default: auto = cuda when available)")
    parser.add_argument("--steps", type=positive_int, default=defaults.steps,
                        help=f"training steps of every run (default {defaults.steps})")
    parser.add_argument("--checkpoint-every", type=positive_int, default=defaults.checkpoint_every,
                        metavar="K", help=f"checkpoint every K steps (default {defaults.checkpoint_every})")
    parser.add_argument("--kill-at-step", type=positive_int, default=None, metavar="S",
                        help="step after which the interruption happens (default: about 60%% in, "
                             "between two checkpoints)")
    parser.add_argument("--signal", choices=SIGNAL_CHOICES, default=defaults.signal,
                        help="kill: SIGKILL variants; term: SIGTERM preemption; both (default)")
    parser.add_argument("--nproc", type=positive_int, default=defaults.nproc, metavar="P",
                        help="processes per run under torch.distributed (gloo on CPU, NCCL on CUDA)")
    parser.add_argument("--checkpoint-dir", default=None, metavar="DIR",
                        help="folder whose storage is tested (default: RUN_DIR/checkpoints)")
    parser.add_argument("--run-dir", default=None, metavar="DIR",
                        help="new folder for manifest, events, logs and summary "
                             "(default ./spikelint-smoke/RUN_ID; an existing folder is refused)")
    parser.add_argument("--job", default=None, metavar="MODULE:FACTORY",
                        help="your training job: FACTORY() returns an object with train_step(), "
                             "state_dict(), load_state_dict() and optionally setup(device, seed); "
                             "MODULE may be a dotted name or a path to a .py file")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="seed of every generator")
    parser.add_argument("--require-persistent", action="store_true",
                        help="fail (exit 2) when the checkpoint folder is not persistent storage")
    parser.add_argument("--format", choices=FORMAT_CHOICES, default=defaults.format,
                        help="report on standard output: text (default) or the summary JSON")
    parser.add_argument("--restart", choices=RESTART_CHOICES, default=defaults.restart,
                        help="fork (default): every run forked from this process, fast; exec: every run in a "
                             "fresh interpreter, as a real restart")
    parser.add_argument("--no-exec-check", dest="exec_check", action="store_false",
                        help="with --restart fork, skip the one resume in a fresh interpreter that catches state "
                             "drawn at import time or ordered by the string-hash seed")
    parser.add_argument("--sigterm-to", choices=SIGTERM_TARGETS, default=defaults.sigterm_to,
                        help="pid (default): SIGTERM to the training process only, as Kubernetes sends it to a "
                             "container's main process; group: to its whole process group, DataLoader workers too")
    parser.add_argument("--cmd", default=None, metavar="COMMAND",
                        help="your training command with placeholders {steps} {every} {ckpt} {seed} {resume}, e.g. "
                             "\"python train.py --max-steps {steps} --save-every {every} --ckpt-dir {ckpt} {resume}\"")
    parser.add_argument("--resume-arg", default=defaults.resume_arg, metavar="TEXT",
                        help="what {resume} becomes on a resumed run (default --resume; nothing on a fresh one); may start "
                             "with -- and use {ckpt} and {step}, the newest checkpoint's step on disk")
    parser.add_argument("--progress-regex", default=defaults.progress_regex, metavar="REGEX",
                        help="a line of the command's output with the step number in group 1 (default %(default)s)")
    parser.add_argument("--loss-regex", default=defaults.loss_regex, metavar="REGEX",
                        help="the loss on a progress line, in group 1 (default %(default)s)")
    parser.add_argument("--steps-per-epoch", type=int, default=None, metavar="N",
                        help="with --cmd: the command's epoch length in steps, when its step lines print no epoch=E; "
                             "the plan then runs past an epoch boundary after a resume")
    parser.add_argument("--warn-only", action="store_true",
                        help="deterministic algorithms in warn-only mode: an op without a deterministic implementation "
                             "runs anyway and is named in the summary's warnings (default: it stops the run, exit 2)")
    parser.add_argument("--grace-period", type=positive_seconds, default=defaults.grace_period, metavar="SECONDS",
                        help="with --cmd: seconds from SIGTERM to SIGKILL, the pod's terminationGracePeriodSeconds "
                             f"(default {defaults.grace_period:g})")
    parser.add_argument("--timeout", type=positive_seconds, default=defaults.timeout, metavar="SECONDS",
                        help=f"limit for the whole smoke run (default {defaults.timeout:g} s)")
    return parser


def options_from_args(args: argparse.Namespace) -> SmokeOptions:
    return SmokeOptions(
        device=args.device,
        steps=args.steps,
        checkpoint_every=args.checkpoint_every,
        kill_at_step=args.kill_at_step,
        signal=args.signal,
        nproc=args.nproc,
        checkpoint_dir=args.checkpoint_dir,
        run_dir=args.run_dir,
        job=args.job,
        seed=args.seed,
        require_persistent=args.require_persistent,
        format=args.format,
        timeout=args.timeout,
        restart=args.restart,
        exec_check=args.exec_check,
        sigterm_to=args.sigterm_to,
        cmd=args.cmd,
        resume_arg=args.resume_arg,
        progress_regex=args.progress_regex,
        loss_regex=args.loss_regex,
        warn_only=args.warn_only,
        grace_period=args.grace_period,
        steps_per_epoch=args.steps_per_epoch,
    )


def fail_setup(message: str, options: SmokeOptions | None, stdout: TextIO, stderr: TextIO) -> int:
    """Exit 2 before a run folder exists: the message, and the summary JSON when asked for."""
    print(f"spikelint smoke: setup error: {message}", file=stderr)
    if options is not None and options.format == "json":
        from spikelint.smoke.report.summary import render_json
        from spikelint.smoke.report.summary import setup_error_summary

        stdout.write(render_json(setup_error_summary(message)))
    return EXIT_SETUP_ERROR


# options whose value is free text that may itself start with "-" (``--resume-arg --init_from=resume``)
TEXT_OPTIONS = ("--resume-arg", "--cmd")


def text_values_joined(words: list[str]) -> list[str]:
    """``--resume-arg --init_from=resume`` as ``--resume-arg=--init_from=resume``: argparse would read
    a value that starts with ``-`` as an option of its own and stop with a usage error."""
    joined: list[str] = []
    index = 0
    while index < len(words):
        if words[index] in TEXT_OPTIONS and index + 1 < len(words) and words[index + 1].startswith("-"):
            joined.append(f"{words[index]}={words[index + 1]}")
            index += 2
            continue
        joined.append(words[index])
        index += 1
    return joined


def main(
    argv: Sequence[str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    *,
    process_exits: bool = True,
) -> int:
    """Parse options, check what needs no torch, then run the smoke test; returns the exit code.

    A caller that goes on running in this process passes ``process_exits=False``.
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    started = time.monotonic()
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["diff"]:
        from spikelint.smoke.compare.diff import main as diff_main

        return diff_main(words[1:], stdout, stderr)
    try:
        args = build_parser().parse_args(text_values_joined(words))
    except SystemExit as exit_request:  # --help, --version, or a usage error (2)
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_SETUP_ERROR
    options = options_from_args(args)
    try:
        plan = make_plan(options)
    except PlanError as error:
        return fail_setup(str(error), options, stdout, stderr)
    if options.run_dir is not None and os.path.lexists(options.run_dir):
        return fail_setup(
            f"run folder {options.run_dir} already exists; every smoke run needs a new folder", options, stdout, stderr
        )
    if options.cmd is not None:
        if options.job is not None:
            return fail_setup("--cmd and --job exclude each other", options, stdout, stderr)
        if options.warn_only:
            return fail_setup("--warn-only applies to --job and the built-in job; a --cmd command sets its own "
                              "deterministic mode (torch.use_deterministic_algorithms(True, warn_only=True))",
                              options, stdout, stderr)
        from spikelint.smoke.command.process import CommandError
        from spikelint.smoke.command.usage import checked_command

        try:
            checked_command(options.cmd, options.resume_arg, options.progress_regex, options.loss_regex)
        except CommandError as error:
            return fail_setup(str(error), options, stdout, stderr)
        from spikelint.smoke.command.driver import run_command_smoke

        return run_command_smoke(options, plan, stdout, stderr, started)
    import_started = time.monotonic()
    print(f"spikelint smoke [{import_started - started:6.2f}s] importing torch", file=stderr, flush=True)
    try:
        import torch  # noqa: F401  (the optional extra; imported only now)
    except ImportError:
        return fail_setup(TORCH_MISSING, options, stdout, stderr)
    except Exception as error:  # noqa: BLE001 - a broken installation (missing CUDA libraries, ...)
        return fail_setup(f"import torch failed: {type(error).__name__}: {error}", options, stdout, stderr)
    import_torch_s = time.monotonic() - import_started

    from spikelint.smoke.harness.orchestrate import run_smoke

    return run_smoke(
        options,
        plan,
        started=started,
        import_torch_s=import_torch_s,
        stdout=stdout,
        stderr=stderr,
        process_exits=process_exits,
    )
