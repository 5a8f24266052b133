"""Command line: ``main(argv) -> int``, one function per subcommand."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Callable
from typing import NoReturn
from typing import Sequence
from typing import TextIO

from spikelint import __version__
from spikelint.util.escape import printable
from spikelint.options import EXIT_FINDINGS
from spikelint.options import EXIT_OK
from spikelint.options import EXIT_USAGE
from spikelint.options import FORMATS
from spikelint.options import Parser
from spikelint.options import RawDescriptionFormatter
from spikelint.options import UsageError
from spikelint.options import add_report_options
from spikelint.options import configured
from spikelint.options import emit_reports
from spikelint.options import team_shapes
from spikelint.options import exit_code
from spikelint.options import in_their_repository
from spikelint.options import overrides
from spikelint.options import positive
from spikelint.options import report_targets
from spikelint.options import gate_baseline
from spikelint.options import write_baseline

if TYPE_CHECKING:
    from spikelint.config import Config
    from spikelint.model import Report
    from spikelint.model import SourceFile
    from spikelint.model import Rule

# a stderr note names this many of the files that reference the given ones (a folder can bring back hundreds)
NAMED_DEPENDENTS = 5
CHECK_EPILOG = """\
output formats (--format):
  text    path:line:col: SPK101 [error] message, with the source line; summary on stderr
  json    findings and summary (schemas/report.v1.schema.json)
  sarif   SARIF 2.1.0 for GitHub code scanning (capped at 25,000 results)
  junit   JUnit XML for GitLab, Jenkins and other CI test reports
  gitlab  GitLab Code Quality JSON
  github  GitHub Actions annotations (::error file=...) and a summary
  html    one self-contained page (no script, nothing fetched): counts per rule, findings by file
  several reports from one lint: pair each --format with its --output, e.g.
    --format sarif --output s.sarif --format junit --output j.xml --format text
  (at most one --format without --output: it goes to standard output)

exit codes:
  0  no finding at or above --fail-on (and always with --write-baseline)
  1  findings at or above --fail-on
  2  usage, configuration or internal error (unknown rule id, bad option, git failure)
"""


def _check_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("check", help="lint files and folders", description="Lint workload definitions, "
                                   "launch scripts, configs, notebooks, Dockerfiles and training code.",
                                   epilog=CHECK_EPILOG, formatter_class=RawDescriptionFormatter)
    parser.add_argument("paths", nargs="*", default=None, help="files and folders (default: .)")
    add_report_options(parser, FORMATS)
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: nearest .spikelint.yaml "
                        "or [tool.spikelint] in pyproject.toml)")
    parser.add_argument("--select", metavar="ID,...", help="rules or families to enable, e.g. SPK1,SPK201")
    parser.add_argument("--ignore", metavar="ID,...", help="rules or families to disable")
    parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"), help="lowest severity that "
                        "makes the exit code 1 (default: error)")
    parser.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline "
                        "(default: the configuration's baseline:; `none`: every finding, the baselined ones too)")
    parser.add_argument("--write-baseline", metavar="FILE", help="write the current findings as a baseline, exit 0")
    parser.add_argument("--diff", metavar="REV", help="report only findings that are new since Git revision REV "
                        "(not reported when its tree is linted the same way)")
    parser.add_argument("--jobs", type=positive, metavar="N", help="most worker processes (default: as many as "
                        "the work is worth and CPUs are free; 1 = in-process)")
    parser.add_argument("--cache", action="store_true", help="reuse the results of unchanged files from "
                        ".spikelint_cache/ and update it")
    parser.add_argument("--no-cache", action="store_true", help="do not use .spikelint_cache/ (the default; a "
                        "configuration or rule file found valid is remembered in ~/.cache/spikelint either way)")
    parser.add_argument("--stdin-filename", metavar="NAME", help="read the file from standard input as NAME")
    parser.add_argument("--exclude", metavar="GLOB", action="append", default=[],
                        help="leave out paths matching GLOB (repeatable; added to the configuration's exclude)")
    parser.add_argument("--show-files", action="store_true",
                        help="list the files that would be checked (and what is left out, and why), then exit")
    parser.add_argument("--statistics", action="store_true",
                        help="count findings per rule, most frequent first, instead of listing them (text)")
    parser.add_argument("--fix", action="store_true", help="apply the safe fixes first (as spikelint fix), then "
                        "report what is left")
    parser.add_argument("--no-code-frame", "--concise", dest="code_frame", action="store_false",
                        help="text: one line per finding, without the source line under it")
    parser.add_argument("--hook", action="store_true",
                        help="the files given are a commit's (the pre-commit hooks pass this): untracked files are "
                        "never read as referrers, and a finding in a file outside the commit is reported only when "
                        "it names a file of the commit")


def command_check(args: argparse.Namespace) -> int:
    """``check``; in the repository of the given paths when the current folder is not in it (as ``git -C``)."""
    return in_their_repository(args, _check)


def _check(args: argparse.Namespace) -> int:
    from spikelint.config import ConfigError
    from spikelint.engine import apply_baseline
    from spikelint.engine import check_paths

    config = configured(args)
    targets = report_targets(args)  # a bad pairing is a usage error before any work
    if args.show_files:
        return _show_files(args.paths or ["."], config)
    refused = 0  # fixes refused by their proof: their findings stay, so at least exit 1
    baseline = None if args.write_baseline else gate_baseline(args.baseline, config)  # a missing one: before any fix
    if args.fix and not args.stdin_filename:
        from spikelint.fix.cli import apply_fixes

        fixed, written = apply_fixes(args.paths or ["."], config, overrides(args))
        if not written:
            return EXIT_USAGE
        refused = fixed.proof_refusals
    stdin_text: bytes | None = None
    if args.stdin_filename:
        stdin_text = sys.stdin.buffer.read()  # decoded like a file: invalid UTF-8 is SPK001, not mojibake
    paths = args.paths or ["."]
    try:
        result = check_paths(paths, config, jobs=args.jobs, stdin_text=stdin_text,
                             stdin_filename=args.stdin_filename, overrides=overrides(args),
                             cache=args.cache and not args.no_cache, hook=args.hook)
    except ConfigError as error:
        raise UsageError(f"configuration error: {error}") from None
    if result.discovery.missing:
        raise UsageError("no such file or folder: " + ", ".join(result.discovery.missing))
    report = result.report
    if result.dependents:
        count, named = len(result.dependents), result.dependents[:NAMED_DEPENDENTS]
        more = f" and {count - len(named)} more" if count > len(named) else ""
        print(f"spikelint: also checked {count} file{'' if count == 1 else 's'} referencing the given files: "
              + ", ".join(named) + more, file=sys.stderr)
    if result.outside:
        count = result.outside
        print(f"spikelint: {count} finding{'' if count == 1 else 's'} of files outside the commit not reported: "
              "they do not come from its files (spikelint check . shows them)", file=sys.stderr)
    if args.write_baseline:
        write_baseline(Path(args.write_baseline), report)
        return EXIT_OK
    if baseline is not None:
        report = apply_baseline(report, baseline)
    if args.diff:
        report = _new_since(args.diff, report, paths, config, args.jobs)
    from spikelint.files import VENDORED

    vendored = [path for path, reason in result.discovery.excluded if reason == VENDORED]
    if vendored:
        print(f"spikelint: left out {', '.join(vendored[:3])}{' …' if len(vendored) > 3 else ''}: Go vendor folders "
              "(third-party code; name one to check it)", file=sys.stderr)
    if not result.discovery.files and not result.discovery.skipped and not result.discovery.oversized:
        print("spikelint: no files to check in " + ", ".join(paths), file=sys.stderr)
    if args.statistics:
        plain = targets == [("text", None)]
        _print_statistics(report, sys.stdout if plain else sys.stderr)
        if plain:
            from spikelint.report import summary_line

            print(summary_line(report), file=sys.stderr)
        else:
            emit_reports(report, targets, result.root_prefix, config.fail_on)
    else:
        emit_reports(report, targets, result.root_prefix, config.fail_on, args.code_frame, team_shapes(config))
    for message in result.internal_errors:
        print(f"spikelint: {printable(message)}", file=sys.stderr)
    if result.internal_errors:
        return EXIT_USAGE
    code = exit_code(report.findings, config.fail_on)
    return max(code, EXIT_FINDINGS) if refused else code


def _shown_kind(source: SourceFile) -> str:
    """What ``--show-files`` calls a file: an image tarball or archive of files, serialised data read for its strings
    (and a pickle's globals), or the kind it is parsed as."""
    from spikelint.documents.bounded import is_scanned_binary
    from spikelint.model import FileKind

    if source.kind == FileKind.IMAGE:
        return "archive (image tarball or files)"
    if source.kind == FileKind.TEXT and is_scanned_binary(source.path):
        return "binary (its strings; a pickle's globals)"
    return source.kind


def _show_files(paths: list[str], config: Config) -> int:
    """What ``check`` would read, with each file's kind, and what it leaves out and why."""
    from spikelint.files import discover

    base = Path(config.root) if config.path is not None else None
    discovery = discover(paths, cwd=Path.cwd(), exclude=config.exclude, max_file_size=config.max_file_size, base=base)
    if discovery.missing:
        raise UsageError("no such file or folder: " + ", ".join(discovery.missing))
    for source in sorted(discovery.files, key=lambda source: source.path):
        print(f"{source.path}\t{_shown_kind(source)}")
    left = [*discovery.skipped, *discovery.excluded]
    named = {os.path.normpath(path) for path, _ in left}
    left += [(shown, "ignored by Git (an untracked file .gitignore matches; git add -f to have it checked)")
             for shown in _ignored_by_git(paths) if os.path.normpath(shown) not in named]
    for path, reason in sorted(left):
        print(f"{path}\tleft out: {reason}")
    checked = len(discovery.files)
    print(f"{checked} file{'' if checked == 1 else 's'} to check, {len(left)} left out", file=sys.stderr)
    return EXIT_OK


def _ignored_by_git(paths: list[str]) -> list[str]:
    """The given folders' untracked files and folders that Git ignores, as the command line names them."""
    from spikelint.files import git_ignored

    found = []
    for path in paths:
        if os.path.isdir(path):
            found += [os.path.normpath(os.path.join(path, name)) + ("/" if name.endswith("/") else "")
                      for name in git_ignored(Path(path)) or ()]
    return found


def _print_statistics(report: Report, stream: TextIO) -> None:
    from spikelint.report import statistics_text

    stream.write(statistics_text(report.findings))
    stream.flush()


def _new_since(revision: str, report: Report, paths: list[str], config: Config, jobs: int | None) -> Report:
    """The findings that linting ``revision``'s tree the same way does not report."""
    import tarfile

    from spikelint.commands.diff import base_fingerprints
    from spikelint.commands.diff import new_findings

    try:
        return new_findings(report, base_fingerprints(revision, Path.cwd(), paths, config, jobs))
    except (OSError, subprocess.SubprocessError, ValueError, tarfile.TarError) as error:
        raise UsageError(f"--diff {revision}: {error}") from None


def command_rules(args: argparse.Namespace) -> int:
    from spikelint.commands.explain import render_rules

    sys.stdout.write(render_rules(_catalog_here(), args.format).rstrip("\n") + "\n")
    return EXIT_OK


def _catalog_here() -> dict[str, Rule]:
    """The shipped catalog and the team rules of the configuration that applies here (spikelint's own rules alone,
    with a warning, when a rule file is broken: `check` says what is wrong with it)."""
    from spikelint.catalog import load_catalog
    from spikelint.config import ConfigError
    from spikelint.config import load_config
    from spikelint.team import catalog_with_team_rules
    from spikelint.team import rule_set_for

    try:
        config = load_config(None)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    try:
        return catalog_with_team_rules(load_catalog(), rule_set_for(config))
    except ConfigError as error:  # a broken rule file must not hide spikelint's own rules
        print(f"spikelint: warning: the team rules are left out: {printable(str(error))}", file=sys.stderr)
        return load_catalog()


def command_explain(args: argparse.Namespace) -> int:
    import difflib

    from spikelint.commands.explain import render_explain

    catalog = _catalog_here()
    wanted = args.rule.strip().upper()
    by_name = {rule.name: rule for rule in catalog.values()}
    rule = catalog.get(wanted) or by_name.get(args.rule.strip().lower())
    if rule is None:
        close = difflib.get_close_matches(wanted, list(catalog), n=3) or difflib.get_close_matches(
            args.rule.lower(), list(by_name), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else " (spikelint rules lists them)"
        raise UsageError(f"unknown rule {args.rule!r}{hint}")
    sys.stdout.write(render_explain(rule).rstrip("\n") + "\n")
    return EXIT_OK


def command_init(args: argparse.Namespace) -> int:
    from spikelint.commands.init import write_starter

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(f"no such folder: {args.folder}")
    result = write_starter(folder)
    if not result.written:
        raise UsageError(result.reason)
    excluded = f", excluding {', '.join(result.excludes)}" if result.excludes else ""
    print(f"spikelint: wrote {result.path} (max_gpus: 1, required_run_identity{excluded})", file=sys.stderr)
    from spikelint.config import find_config_file

    above = find_config_file(folder.resolve().parent)
    if above is not None:  # a sub-folder's keys replace the parent's there: max_gpus: 1 may undo the team's value
        here = "this folder" if str(folder) == "." else str(folder)
        print(f"spikelint: warning: {above} configures the folders above; in {here} the new file's keys replace its "
              "keys (max_gpus, required_run_identity…): delete from the new file what you do not mean to change",
              file=sys.stderr)
    return EXIT_OK


def _delegate(module: str) -> Callable[[list[str]], int]:
    def run(argv: list[str]) -> int:
        import importlib

        return int(importlib.import_module(module).main(argv))

    return run


DELEGATED: dict[str, Callable[[list[str]], int]] = {
    "precheck": _delegate("spikelint.run.precheck"),
    "verify-run": _delegate("spikelint.run.verify"),
    "smoke": _delegate("spikelint.smoke.cli"),
    "fix": _delegate("spikelint.fix.cli"),
    "history": _delegate("spikelint.history.command"),
    "model": lambda argv: _team_command("model_main", argv),
}


def _team_command(name: str, argv: list[str]) -> int:
    from spikelint.commands import team

    return int(getattr(team, name)(argv))
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "check": command_check,
    "rules": command_rules,
    "explain": command_explain,
    "init": command_init,
}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="spikelint", description="Policy linter and CI gate for GPU training workloads.")
    parser.add_argument("--version", action="version", version=f"spikelint {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _check_parser(subparsers)
    rules = subparsers.add_parser("rules", help="list every rule (the team's too); `rules test [DIR]` runs the team "
                                                "rules' examples")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    explain = subparsers.add_parser("explain", help="explain one rule")
    explain.add_argument("rule", metavar="ID")
    init = subparsers.add_parser("init", help="write a starter .spikelint.yaml")
    init.add_argument("folder", nargs="?", default=".", help="where to write it (default: .)")
    for name, text in (("precheck", "validate a run configuration and run folder before launch"),
                       ("verify-run", "check that a finished run folder is complete and consistent"),
                       ("smoke", "prove kill/resume reproduces a run bit for bit on this machine"),
                       ("history", "find secrets in every line the commits of a range added"),
                       ("model", "print the workloads of a file as team rules see them (JSON, with positions)"),
                       ("fix", "apply the mechanical fixes (--dry-run: show the diff; --unsafe: also those that "
                               "need a follow-up)")):
        subparsers.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command with both streams masked: every byte written passes the secret detectors."""
    from spikelint.secrets.output_mask import MaskedStream

    if argv is None:  # a process of its own (the console script, python -m): not a caller's in-process use
        _collect_less()

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = MaskedStream(streams[0]), MaskedStream(streams[1])
    try:
        return _main(argv)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
                pass
        sys.stdout, sys.stderr = streams


def run() -> NoReturn:
    """The console script and ``python -m spikelint``: :func:`main`, then leave at once when nothing is
    registered to run at exit. Tearing the interpreter down (freeing every object of the run one by
    one) took 10-30 ms, as long as checking 20 files; a library's exit handler (``smoke`` imports
    torch) still runs as usual."""
    import atexit
    import os

    code = main()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            pass
    if getattr(atexit, "_ncallbacks", lambda: 1)() == 0:
        os._exit(code)
    sys.exit(code)


def _collect_less() -> None:
    """The cycle collector set for a short run that builds large trees: what the imports made is moved out of
    its reach (forked workers share it untouched), and it runs after 10,000 new objects instead of 700. A stream
    of 8,000 YAML documents took 20% longer without this, and grew faster than its input (bench/scaling.py)."""
    import gc

    gc.freeze()
    gc.set_threshold(10_000, 50, 100)


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] in DELEGATED:
            return DELEGATED[arguments[0]](arguments[1:])
        if arguments[:2] == ["rules", "test"]:
            return _team_command("rules_test_main", arguments[2:])
        parser = build_parser()
        args = parser.parse_args(arguments)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return COMMANDS[args.command](args)
    except UsageError as error:
        print(f"spikelint: error: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as interrupt:  # Ctrl-C; smoke's SIGTERM handler says and exits its own way (143)
        print(f"spikelint: {getattr(interrupt, 'said', 'interrupted')}", file=sys.stderr)
        return int(getattr(interrupt, "exit_code", 130))
    except BrokenPipeError:
        return EXIT_OK
