"""A whole ``fix`` run: lint, fix each file with fixable findings, prove, write (or diff)."""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from spikelint.config import Config
from spikelint.fix.apply import FileFix
from spikelint.fix.apply import fix_file
from spikelint.fix.edits import Refusal
from spikelint.fix.pins import Pins
from spikelint.model import Finding
from spikelint.model import Rule


@dataclass
class FixRun:
    files: list[FileFix] = field(default_factory=list)
    left: list[Finding] = field(default_factory=list)  # fixable, but not in this mode (needs --unsafe)
    unfixable: list[tuple[Finding, str]] = field(default_factory=list)  # and why
    write_errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    secrets: dict[str, frozenset[str]] = field(default_factory=dict)  # by path: what the diff must not show
    unparsed: list[Finding] = field(default_factory=list)  # SPK001 in a given file: no fix repairs it
    by_hand: int = 0  # findings of rules that have no mechanical fix (a secret to rotate, a volume to change)

    @property
    def changed(self) -> list[FileFix]:
        return [item for item in self.files if item.changed]

    @property
    def proof_refusals(self) -> int:
        """Fixes refused by their proof: each leaves its finding, so the run exits 1."""
        return sum(item.proof_refusals for item in self.files)


def fixable_rules(catalog: dict[str, Rule], unsafe: bool) -> set[str]:
    return {rule_id for rule_id, rule in catalog.items() if rule.fix == "safe" or unsafe and rule.fix == "unsafe"}


def make_lint(config: Config, cwd: Path, overrides: dict[str, Any]) -> Any:
    """Lint one file's text as the run does (configuration, referenced files), for the proofs."""
    from spikelint.engine import check_paths

    def lint(path: str, text: str) -> list[Finding]:
        result = check_paths([path], config, cwd=cwd, jobs=1, stdin_text=text, stdin_filename=path,
                             overrides=overrides)
        if result.internal_errors:
            raise RuntimeError("; ".join(result.internal_errors))
        return [finding for finding in result.report.findings if finding.path == path]

    return lint


NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(item: FileFix, secrets: frozenset[str] = frozenset()) -> str:
    """The change as ``git apply`` and ``patch`` read it: a last line without its newline is
    marked, as Git marks it, instead of running into the next line of the diff.

    ``secrets``: the values the secret rules found in the file.  A diff quotes the file's own
    lines, and a value known only by its structure (``value:`` under ``- name: DB_PASSWORD``)
    is no token shape the final mask could see, so each is masked here by its text.
    """
    from spikelint.secrets.output_mask import masked

    lines = difflib.unified_diff(item.original.splitlines(keepends=True), item.fixed.splitlines(keepends=True),
                                 f"a/{item.path}", f"b/{item.path}")
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n" + NO_NEWLINE for line in lines)
    for value in sorted(secrets, key=len, reverse=True):
        text = text.replace(value, masked(value))
    return text


def secret_values(text: str, findings: list[Finding]) -> frozenset[str]:
    """The text of each secret finding's span (1-based columns, the end exclusive) in ``text``."""
    lines = text.splitlines()
    values = set()
    for finding in findings:
        if not finding.rule.startswith("SPK2") or not 0 < finding.line <= len(lines):
            continue
        line = lines[finding.line - 1]
        end = finding.end_column - 1 if finding.end_line == finding.line and finding.end_column else len(line)
        value = line[finding.column - 1:end]
        if len(value) >= MIN_MASKED_SECRET:
            values.add(value)
    return frozenset(values)


MIN_MASKED_SECRET = 6  # shorter spans are words the diff needs (a password rule's minimum)


def run_fixes(paths: list[str], config: Config, *, unsafe: bool, dry_run: bool, pins: Pins,
              overrides: dict[str, Any], cwd: Path | None = None) -> FixRun:
    from spikelint.catalog import load_catalog
    from spikelint.engine import check_paths

    cwd = cwd or Path.cwd()
    catalog = load_catalog()
    wanted = fixable_rules(catalog, unsafe)
    result = check_paths(paths, config, cwd=cwd, jobs=1, overrides=overrides)
    run = FixRun(missing=list(result.discovery.missing))
    kinds = {source.path: source for source in result.discovery.files}
    by_path: dict[str, list[Finding]] = {}
    secrets_by_path: dict[str, list[Finding]] = {}
    for finding in result.report.findings:
        if finding.rule == "SPK001" and finding.path in kinds:
            run.unparsed.append(finding)
        if finding.rule.startswith("SPK2"):
            secrets_by_path.setdefault(finding.path, []).append(finding)
        rule = catalog.get(finding.rule)
        if rule is None or not rule.fix:
            run.by_hand += finding.rule != "SPK001"  # no mechanical fix exists: the summary counts them
            continue
        if finding.rule not in wanted:
            run.left.append(finding)
        elif finding.path not in kinds:
            run.unfixable.append((finding, "the file was not among those given"))
        else:
            by_path.setdefault(finding.path, []).append(finding)
    lint = make_lint(config, cwd, overrides)
    for path, findings in sorted(by_path.items()):
        source = kinds[path]
        target = Path(source.abspath)
        text, reason = _read(target)
        if text is None:
            run.unfixable.extend((finding, reason) for finding in findings)
            continue
        item = fix_file(path, source.kind, text, findings, lint, pins, config)
        run.secrets[path] = secret_values(text, secrets_by_path.get(path, []))
        by_print = {finding.fingerprint: finding for finding in findings}
        run.unfixable.extend((by_print[refusal.fingerprint], refusal.reason) for refusal in item.refused
                             if refusal.fingerprint in by_print)
        if item.changed and not dry_run:
            error = write_fixed(target, item.fixed)
            if error:
                run.write_errors.append(f"{path}: {error}")
                item.fixed = item.original
                item.applied = []
        run.files.append(item)
    return run


def _read(target: Path) -> tuple[str | None, str]:
    from spikelint.util.safe_write import UnsafeTarget
    from spikelint.util.safe_write import check_target

    try:
        check_target(target)
        return target.read_bytes().decode("utf-8"), ""
    except UnsafeTarget as error:
        return None, str(error)
    except UnicodeDecodeError:
        return None, "the file is not UTF-8 text"
    except OSError as error:
        return None, f"cannot read it: {error.strerror or error}"


def write_fixed(target: Path, text: str) -> str:
    """Write through a temporary file and a rename (no link followed), keeping the file's mode
    (a launch script stays executable); the error's text, or ``""``."""
    from spikelint.util.safe_write import UnsafeTarget
    from spikelint.util.safe_write import write_text_safely

    try:
        mode = stat.S_IMODE(os.lstat(target).st_mode)
        if not mode & stat.S_IWUSR:  # a rename would replace it anyway: a read-only file is someone's decision
            return f"the file is read-only (chmod u+w {target.name} to let fix change it)"
        write_text_safely(target, text, mode=mode)
    except UnsafeTarget as error:
        return str(error)
    except OSError as error:
        return f"cannot write it: {error.strerror or error}"
    return ""


def refusal_text(refusal: Refusal) -> str:
    return f"{refusal.rule}: {refusal.reason}"
