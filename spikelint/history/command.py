"""``spikelint history [REV-RANGE]``: the secret rules on every line a commit in the range added.

Options as ``check``'s where they apply (formats, ``--output``, ``--config``, baselines,
``--fail-on``, ``--jobs``) plus ``--since DATE``.  Commits are split into contiguous runs,
one per worker; each worker streams its commits' patches from Git, and the runs are joined
oldest first, so a secret is reported at the commit that first added it whatever ``--jobs``.
"""

from __future__ import annotations

import argparse
import os
import posixpath
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from spikelint.history.gitlog import GitError
from spikelint.history.gitlog import Unread
from spikelint.history.gitlog import added_lines
from spikelint.history.gitlog import commits
from spikelint.history.gitlog import repository_root
from spikelint.team.secrets import SecretPattern
from spikelint.history.scan import RULE
from spikelint.history.scan import Leak
from spikelint.history.scan import first_per_path
from spikelint.history.scan import message
from spikelint.history.scan import scan_all
from spikelint.files import is_excluded
from spikelint.model import Finding
from spikelint.model import Report

MIN_COMMITS_PER_WORKER = 150  # fewer than this are scanned faster in-process than a worker starts


def add_parser(subparsers: Any, formats: tuple[str, ...], positive: Any) -> None:
    parser = subparsers.add_parser(
        "history", help="find secrets in every line the commits of a range added",
        description="Run the secret rules (SPK2) on every line that a commit in REV-RANGE added, so a token "
                    "committed and deleted later is still found. REV-RANGE is git rev-list syntax (default: "
                    "every commit reachable from HEAD); in CI scan the pushed range only, e.g. BASE..HEAD.")
    parser.add_argument("revisions", nargs="*", metavar="REV-RANGE", help="commits to scan (default: HEAD)")
    from spikelint.options import add_report_options

    add_report_options(parser, formats)
    parser.add_argument("--config", metavar="FILE", help="configuration file (its exclude globs and rule "
                        "selection apply)")
    parser.add_argument("--select", metavar="ID,...", help="rules or families to enable")
    parser.add_argument("--ignore", metavar="ID,...", help="rules or families to disable")
    parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"),
                        help="lowest severity that makes the exit code 1 (default: error)")
    parser.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline "
                        "(default: the configuration's baseline:)")
    parser.add_argument("--write-baseline", metavar="FILE", help="write the current findings as a baseline, exit 0")
    parser.add_argument("--since", metavar="DATE", help="only commits made after DATE (any date git accepts)")
    parser.add_argument("--jobs", type=positive, metavar="N", help="worker processes (default: the CPUs; 1 = in-process)")
    parser.add_argument("--no-code-frame", "--concise", dest="code_frame", action="store_false",
                        help="as check takes it: history's findings have no source line under them anyway")


def history_report(cwd: Path, revisions: list[str], since: str | None, exclude: tuple[str, ...],
                   jobs: int | None, rules: dict[str, Any], patterns: tuple[SecretPattern, ...] = ()
                   ) -> tuple[Report, int, list[Unread]]:
    """The report of the secrets the commits added (a team's own shapes, ``patterns``, among them), how many
    commits were scanned, and the files of theirs Git could not read."""
    root = repository_root(cwd)
    shas = commits(cwd, revisions, since)
    leaks, paths, unread = _scan(root, shas, exclude + _vendored(root), jobs, patterns)
    prefix = _prefix(cwd, root)
    rule = rules[RULE]
    secret_rules = tuple(rule_id for rule_id in rules if rule_id.startswith("SPK2"))
    findings = [_finding(leak, rule.name, rule.severity, prefix, secret_rules) for leak in leaks]
    return Report(findings, files_checked=len(paths), rules=[rule]), len(shas), unread


def _vendored(root: Path) -> tuple[str, ...]:
    """Go's vendor folders of the work tree, as exclude globs: third-party code, left out as ``check`` leaves it."""
    from spikelint.files import git_names
    from spikelint.files import without_vendored

    _, roots = without_vendored(git_names(root) or [])
    return tuple(folder + "**" for folder in roots)


def _scan(root: Path, shas: list[str], exclude: tuple[str, ...], jobs: int | None,
          patterns: tuple[SecretPattern, ...]) -> tuple[list[Leak], set[str], list[Unread]]:
    workers = min(jobs or os.cpu_count() or 1, max(1, len(shas) // MIN_COMMITS_PER_WORKER))
    if workers <= 1:
        return _scan_chunk((str(root), shas, exclude, patterns))
    size = -(-len(shas) // workers)
    chunks = [shas[start:start + size] for start in range(0, len(shas), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(_scan_chunk, [(str(root), chunk, exclude, patterns) for chunk in chunks]))
    paths = {path for _, part_paths, _ in parts for path in part_paths}
    unread = [item for _, _, part_unread in parts for item in part_unread]
    return first_per_path(leak for part, _, _ in parts for leak in part), paths, unread


def _scan_chunk(work: tuple[str, list[str], tuple[str, ...], tuple[SecretPattern, ...]]
                ) -> tuple[list[Leak], set[str], list[Unread]]:
    root, shas, exclude, patterns = work
    unread: list[Unread] = []
    leaks, paths = scan_all(added_lines(Path(root), shas, unread), exclude, patterns)
    return leaks, paths, [item for item in unread if not (exclude and is_excluded(item.path, exclude))]


def _team_patterns(config: Any) -> tuple[SecretPattern, ...]:
    """The team's own token shapes, which ``check`` reports as SPK201: the history gate reads them too."""
    from spikelint.options import UsageError
    from spikelint.team import rule_set_for
    from spikelint.team.ruleset import TeamRuleError

    try:
        return tuple(rule_set_for(config).secrets)
    except TeamRuleError as error:
        raise UsageError(str(error)) from None


def _prefix(cwd: Path, root: Path) -> str:
    from spikelint.pipeline.fingerprint import root_prefix

    return root_prefix(cwd, root)


def _finding(leak: Leak, name: str, severity: str, prefix: str, secret_rules: tuple[str, ...]) -> Finding:
    """A leak as a finding: its path shown from the current folder, fingerprinted from the root as
    ``check`` fingerprints the same secret at that path (whichever SPK2 rule reports it there)."""
    from spikelint.pipeline.fingerprint import fingerprint
    from spikelint.pipeline.fingerprint import secret_aliases

    shown = posixpath.relpath(leak.path, prefix.rstrip("/")) if prefix else leak.path
    return Finding(RULE, name, severity, shown, leak.line, leak.column, message(leak),
                   fingerprint(RULE, leak.path, leak.key), leak.end_line, leak.end_column,
                   commit=leak.commit, date=leak.date, aliases=secret_aliases(secret_rules, leak.path, leak.key))


def command_history(args: argparse.Namespace) -> int:
    """Scan, then report like ``check`` (baselines, formats, exit codes)."""
    from spikelint.catalog import load_catalog
    from spikelint.options import EXIT_OK
    from spikelint.options import EXIT_USAGE
    from spikelint.options import UsageError
    from spikelint.options import configured
    from spikelint.options import emit_reports
    from spikelint.options import exit_code
    from spikelint.options import report_targets
    from spikelint.options import gate_baseline
    from spikelint.options import write_baseline
    from spikelint.engine import apply_baseline
    from spikelint.engine import selected

    config = configured(args, exclude=False)
    targets = report_targets(args)
    cwd = Path.cwd()
    try:
        report, scanned, unread = history_report(cwd, list(args.revisions), args.since, config.exclude, args.jobs,
                                                 load_catalog(), _team_patterns(config))
    except GitError as error:
        raise UsageError(f"history: {error}") from None
    for item in unread:
        print(f"spikelint: history: commit {item.commit[:12]}: {item.path} was not read: Git cannot read object "
              f"{item.missing[:12]} (missing from this clone or corrupt; `git fsck` lists such objects); the "
              f"commit's other files were scanned", file=sys.stderr)
    if not selected(RULE, config):
        report = Report([], report.files_checked, rules=report.rules)
    print(f"spikelint: history: {scanned} commit{'' if scanned == 1 else 's'} scanned", file=sys.stderr)
    if args.write_baseline:
        write_baseline(Path(args.write_baseline), report, source="history")
        return EXIT_OK
    baseline = gate_baseline(args.baseline, config)
    if baseline is not None:
        report = apply_baseline(report, baseline)
    emit_reports(report, targets, _prefix(cwd, repository_root(cwd)), config.fail_on, False)
    if unread:  # a secret gate fails closed: what it could not read may hold one
        count = len(unread)
        print(f"spikelint: history: the scan is incomplete: {count} file{'' if count == 1 else 's'} could not be "
              "read (named above); repair the clone (`git fetch --refetch`) or leave them out with `exclude:` in "
              ".spikelint.yaml", file=sys.stderr)
        return EXIT_USAGE
    return exit_code(report.findings, config.fail_on)


def main(argv: list[str]) -> int:
    """``spikelint history …``: its own parser, so that other commands never import this one."""
    from spikelint.options import FORMATS
    from spikelint.options import Parser
    from spikelint.options import positive

    parser = Parser(prog="spikelint")
    add_parser(parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser), FORMATS, positive)
    return command_history(parser.parse_args(["history", *argv]))
