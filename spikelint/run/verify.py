"""``spikelint verify-run DIR``: is a finished run folder complete and self-consistent?

A non-empty folder proves nothing, so every file is re-read: ``manifest.json`` and
``summary.json`` against their schemas, every line of ``results.jsonl`` / ``errors.jsonl``
against its record schema, ids unique and never in both files, the summary's counters
against each other, the files and the input, every input id accounted for once, and the
input's SHA-256 against the manifest.  The manifest is also scanned by the secret rules.

Each problem is one finding (rule SPK601, or the SPK2 rule that found a secret) with the
file and line — for JSON Lines, the record's line — rendered by the same reporters as
``check``.  Exit 0 when complete and consistent, 1 otherwise, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any
from typing import Sequence

from spikelint.util.escape import printable
from spikelint.pipeline.masking import masker
from spikelint.model import Finding
from spikelint.run.issues import Issue
from spikelint.run.issues import RunFiles
from spikelint.run.consistency import verify_folder
from spikelint.run.options import parse_options

EXIT_OK = 0
EXIT_INCOMPLETE = 1
EXIT_USAGE = 2
PROG = "spikelint verify-run"
FORMATS = ("text", "json", "sarif", "junit", "gitlab", "github")
RULE = "SPK601"
FALLBACK_NAME = "config-schema-violation"


class UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Check that a finished run folder is complete and "
                                     "consistent (manifest, summary, results, errors, input).")
    parser.add_argument("run_dir", metavar="DIR", help="the run folder")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE instead of standard output")
    parser.add_argument("--input", metavar="FILE", help="the run's input file, when the manifest's path is not "
                        "reachable from here (a container path)")
    return parser


def _findings(issues: list[Issue], catalog: dict[str, Any]) -> list[Finding]:
    from spikelint.pipeline.fingerprint import assign_fingerprints

    ordered = sorted(issues, key=lambda issue: (issue.path, issue.line, issue.column, issue.message))
    prints = assign_fingerprints((issue.rule, issue.path, issue.key or issue.message) for issue in ordered)
    findings = []
    for issue, print_ in zip(ordered, prints):
        rule = catalog.get(issue.rule)
        findings.append(Finding(issue.rule, rule.name if rule else FALLBACK_NAME,
                                rule.severity if rule else "error", issue.path, issue.line, issue.column,
                                issue.message, print_, issue.end_line, issue.end_column))
    return findings


def _catalog() -> dict[str, Any]:
    try:
        from spikelint.catalog import load_catalog

        return dict(load_catalog())
    except Exception:  # noqa: BLE001 - a broken catalog must not hide the run's problems
        return {}


def secret_findings(files: RunFiles) -> list[Finding]:
    """The SPK2 rules on ``manifest.json``: the same detectors ``check`` runs."""
    if files.manifest_text is None:
        return []
    try:
        from spikelint.config import Config
        from spikelint.documents import parse_text
        from spikelint.engine import Engine
        from spikelint.model import FileKind
        from spikelint.model import SourceFile
        from spikelint.discovery.project import Project

        engine = Engine.create(Config(select=("SPK2",)))
        source = SourceFile(files.manifest_path, str(files.folder / "manifest.json"), FileKind.JSON)
        document = parse_text(source, files.manifest_text)
        result = engine.check_document(document, Project([source]))
    except Exception:  # noqa: BLE001 - the secret scan is an extra; the consistency checks stand alone
        return []
    return [finding for finding in result.findings if finding.rule.startswith("SPK2")]


def _masked(findings: list[Finding], sources: dict[str, Sequence[str]],
            notes: list[str]) -> tuple[list[Finding], dict[str, Sequence[str]], list[str]]:
    """Every secret found in the files read, masked in messages, notes and shown lines."""
    from spikelint.pipeline.masking import mask_findings
    from spikelint.pipeline.masking import reported_values
    from spikelint.run.issues import SparseLines
    from spikelint.run.secret_values import values_in_text

    found: list[str] = []
    for path, lines in sources.items():
        present = lines.present() if isinstance(lines, SparseLines) else list(lines)
        found.extend(values_in_text("\n".join(present)))
        found.extend(reported_values(findings, path, lines))
    if not found:
        return findings, sources, notes
    hide, hide_in_source = masker(found), masker(found, same_width=True)
    shown: dict[str, Sequence[str]] = {
        path: lines.mapped(hide_in_source) if isinstance(lines, SparseLines) else [hide_in_source(line) for line in lines]
        for path, lines in sources.items()}
    return mask_findings(findings, found), shown, [hide(note) for note in notes]


def verify(run_dir: Path, input_override: str | None, cwd: Path) -> tuple[Any, list[str]]:
    """The report for ``run_dir`` and notes for standard error."""
    from spikelint import __version__
    from spikelint.model import Report

    files, issues, notes = verify_folder(run_dir, input_override, cwd)
    catalog = _catalog()
    findings = _findings(issues, catalog) + secret_findings(files)
    findings.sort(key=Finding.sort_key)
    findings, sources, notes = _masked(findings, files.sources, notes)
    used = sorted({finding.rule for finding in findings} | {RULE})
    rules = [catalog[rule] for rule in used if rule in catalog]
    return Report(findings=findings, files_checked=files.files_read, rules=rules, sources=sources,
                  tool_version=__version__), notes


def _emit(report: Any, fmt: str, output: str | None) -> None:
    from spikelint.report.output import OutputError
    from spikelint.report.output import emit_report

    try:
        emit_report(report, fmt, output)
    except OutputError as error:
        raise UsageError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(build_parser(), argv)
    if isinstance(options, int):
        return options
    run_dir = Path(options.run_dir)
    try:
        if not os.path.lexists(run_dir):
            raise UsageError(f"{options.run_dir}: no such run folder")
        if not run_dir.is_dir():
            raise UsageError(f"{options.run_dir}: not a folder (verify-run takes the run folder, not a file in it)")
        report, notes = verify(run_dir, options.input, Path.cwd())
        for note in notes:
            print(f"{PROG}: note: {printable(note)}", file=sys.stderr)
        _emit(report, options.format, options.output)
    except UsageError as error:
        print(f"{PROG}: error: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    return EXIT_INCOMPLETE if report.findings else EXIT_OK
