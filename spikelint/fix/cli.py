"""``spikelint fix [PATH...]`` (and ``check --fix``): apply the proven fixes, print a summary
(fixed, left, not fixable and why, what to do next after an unsafe fix), then lint again."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from typing import Sequence

from spikelint.util.escape import printable
from spikelint.fix.pins import NO_PINS
from spikelint.fix.pins import Pins
from spikelint.fix.run import FixRun
from spikelint.fix.run import run_fixes
from spikelint.fix.run import unified_diff

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    from spikelint.options import Parser

    parser = Parser(prog="spikelint fix", description="Apply the mechanical fixes, each proven by linting the "
                     "edited file again, then report what is left.")
    parser.add_argument("paths", nargs="*", help="files and folders (default: .)")
    parser.add_argument("--dry-run", action="store_true", help="print a unified diff and change nothing "
                        "(exit 1 when a fix would change a file or was refused by its proof)")
    parser.add_argument("--unsafe", action="store_true", help="also the fixes that need a follow-up "
                        "(SPK202 secretKeyRef skeleton, SPK101/SPK102 digests from --pins)")
    parser.add_argument("--pins", metavar="FILE", help="lock file of 'reference: digest-or-sha' lines written "
                        "with your registry or hub tools (read by --unsafe)")
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: as for check)")
    parser.add_argument("--select", metavar="ID,...", help="rules or families to enable (as for check)")
    parser.add_argument("--ignore", metavar="ID,...", help="rules or families to disable")
    parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"),
                        help="lowest severity left that makes the exit code 1 (default: error)")
    parser.add_argument("--exclude", metavar="GLOB", action="append", default=[], help="leave out paths matching GLOB")
    parser.add_argument("--hook", action="store_true", help="the files given are a commit's (as for check --hook)")
    parser.add_argument("--baseline", metavar="FILE", help="findings left that are in this baseline do not fail "
                        "(default: the configuration's baseline:)")
    return parser


def main(argv: Sequence[str]) -> int:
    from spikelint.options import UsageError

    try:
        args = build_parser().parse_args(list(argv))
        return command_fix(args)
    except UsageError as error:
        print(f"spikelint: error: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE


def _settings(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    from spikelint.options import configured
    from spikelint.options import overrides

    return configured(args), overrides(args)


def _pins(path: str | None) -> Pins:
    from spikelint.options import UsageError
    from spikelint.fix.pins import PinsError
    from spikelint.fix.pins import read_pins

    if path is None:
        return NO_PINS
    try:
        return read_pins(Path(path))
    except PinsError as error:
        raise UsageError(str(error)) from None


def apply_fixes(paths: list[str], config: Any, overrides: dict[str, Any], *, unsafe: bool = False,
                dry_run: bool = False, pins: Pins = NO_PINS) -> tuple[FixRun, bool]:
    """Run the fixes and print the diff (dry run) and the summary; (the run, whether every fixed file
    was written: False is exit 2).  A fix refused by its proof is not a failure of the run: its
    finding stays, with the reason printed (``run.proof_refusals``, exit 1)."""
    from spikelint.options import UsageError
    from spikelint.config import ConfigError

    try:
        run = run_fixes(paths, config, unsafe=unsafe, dry_run=dry_run, pins=pins, overrides=overrides)
    except ConfigError as error:
        raise UsageError(f"configuration error: {error}") from None
    if run.missing:
        raise UsageError("no such file or folder: " + ", ".join(run.missing))
    if dry_run:
        _print_diffs(run)
    _summary(run, dry_run)
    return run, not run.write_errors


def _print_diffs(run: FixRun) -> None:
    """The diffs of a dry run; where one quotes a secret (cut to four characters, as everything spikelint writes),
    a note that it will not apply as it is."""
    from spikelint.secrets.output_mask import mask_output

    cut = []
    for item in run.changed:
        shown = unified_diff(item, run.secrets.get(item.path, frozenset()))
        sys.stdout.write(shown)
        if shown != unified_diff(item) or mask_output(shown) != shown:
            cut.append(item.path)
    sys.stdout.flush()
    if cut:
        print(f"spikelint: the diff of {', '.join(cut)} quotes a secret cut to four characters, so git apply and patch "
              "will not take it: run spikelint fix without --dry-run to write the change", file=sys.stderr)


def _summary(run: FixRun, dry_run: bool) -> None:
    out = sys.stderr
    verb = "would fix" if dry_run else "fixed"
    for item in run.changed:
        for fix in item.applied:
            print(f"spikelint: {verb} {item.path}: {fix.rule} {printable(fix.description)}", file=out)
            if fix.follow_up:
                print(f"  next: {printable(fix.follow_up)}", file=out)
        for note in item.notes:
            print(f"  rotate: {printable(note)}", file=out)
    for finding, reason in run.unfixable:
        print(f"spikelint: not fixable {finding.path}:{finding.line}: {finding.rule}: {printable(reason)}", file=out)
    for message in run.write_errors:
        print(f"spikelint: not written {printable(message)}", file=out)
    for finding in run.unparsed:
        print(f"spikelint: not fixable {finding.path}:{finding.line}: SPK001: {printable(finding.message)} — no fix "
              "repairs a file that is not valid: fix it by hand", file=out)
    fixed = sum(len(fix.claims) for item in run.changed for fix in item.applied)
    files = len(run.changed)
    pins = sum(1 for finding in run.left if finding.rule in ("SPK101", "SPK102"))
    others = len(run.left) - pins
    more = ([f"{others} more with --unsafe"] if others else []) + \
        ([f"{pins} image{'' if pins == 1 else 's'} to pin with --unsafe --pins FILE (the digests to pin to)"]
         if pins else [])
    failed = len(run.unfixable) + len(run.unparsed)
    said = [f"{failed} not fixable (said above)"] if failed else []
    by_hand = [f"{run.by_hand} finding{' has' if run.by_hand == 1 else 's have'} no mechanical fix (spikelint check "
               f"lists {'it' if run.by_hand == 1 else 'them'})"] if run.by_hand else []
    print(f"spikelint: {verb} {fixed} finding{'' if fixed == 1 else 's'} in {files} file{'' if files == 1 else 's'}"
          + "".join(f"; {part}" for part in [*said, *more, *by_hand]), file=out)
    if dry_run and (run.changed or run.proof_refusals or run.unparsed):  # a dry run is a check: say why it fails
        why = "a file would change" if run.changed else "a fix was refused by its proof" if run.proof_refusals \
            else "a file is not valid"
        print(f"spikelint: exit 1: {why} (--dry-run wrote nothing; run without it to apply)", file=out)


def command_fix(args: argparse.Namespace) -> int:
    """``fix``; in the repository of the given paths when the current folder is not in it, as ``check`` is."""
    from spikelint.options import in_their_repository

    return in_their_repository(args, _fix)


def _fix(args: argparse.Namespace) -> int:
    from spikelint.options import emit
    from spikelint.options import exit_code
    from spikelint.options import gate_baseline
    from spikelint.engine import apply_baseline
    from spikelint.engine import check_paths

    if args.pins and not args.unsafe:
        print("spikelint: --pins is read only with --unsafe (pinning needs a follow-up)", file=sys.stderr)
    config, overrides = _settings(args)
    baseline = gate_baseline(args.baseline, config)  # read first: a missing baseline fixes nothing
    paths = args.paths or ["."]
    run, safe = apply_fixes(paths, config, overrides, unsafe=args.unsafe, dry_run=args.dry_run,
                            pins=_pins(args.pins) if args.unsafe else NO_PINS)
    if not safe:
        return EXIT_USAGE
    if args.dry_run:
        return EXIT_FINDINGS if run.changed or run.proof_refusals or run.unparsed else EXIT_OK
    result = check_paths(paths, config, overrides=overrides, hook=args.hook)
    report = result.report if baseline is None else apply_baseline(result.report, baseline)
    emit(report, "text", None, result.root_prefix, config.fail_on)
    code = exit_code(report.findings, config.fail_on)
    return max(code, EXIT_FINDINGS) if run.proof_refusals else code
