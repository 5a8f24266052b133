"""One file's fixes, proven before they are kept: the edited text parses, the findings the fixes
claim are gone, no other finding appears or disappears (but those a fix clears by design: a
notebook's outputs take their leaked secrets with them), and the file's workloads mean what they
meant apart from the property each fix sets (:mod:`spikelint.fix.meaning`).  When all of a file's
fixes together do not pass, each is tried on its own on top of those that did; one that fails is
not kept."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from typing import Callable
from typing import Sequence

from spikelint.config import Config
from spikelint.fix.context import FixContext
from spikelint.fix.edits import Fix
from spikelint.fix.edits import Refusal
from spikelint.fix.edits import apply_edits
from spikelint.fix.edits import untouched_lines_kept
from spikelint.fix.meaning import meaning_change
from spikelint.fix.meaning import workloads_of
from spikelint.fix.notebook import exposed_secret_note
from spikelint.fix.pins import Pins
from spikelint.fix.table import FIXERS
from spikelint.model import FileKind
from spikelint.model import Finding

Lint = Callable[[str, str], list[Finding]]  # (path, text) -> that file's findings
Meaning = Callable[[str, Sequence[Fix]], str]  # (edited text, fixes) -> what else changed, or ""


@dataclass
class FileFix:
    """What fixing one file came to."""

    path: str
    original: str
    fixed: str
    applied: list[Fix] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    proof_refusals: int = 0  # fixes that did not pass the proof: their findings stay (exit 1)
    notes: list[str] = field(default_factory=list)  # what a human must do about what a fix cleared

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def parse_error(kind: str, text: str) -> str:
    """Why ``text`` does not parse as ``kind`` with the reader a fix writes for, or ``""``."""
    try:
        if kind == FileKind.YAML:
            from spikelint.fix.yamltree import load_stream

            load_stream(text)
        elif kind == FileKind.JSON:
            json.loads(text)
        elif kind == FileKind.NOTEBOOK:
            import warnings

            import nbformat

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nbformat.validate(nbformat.reads(text, as_version=nbformat.NO_CONVERT))
    except Exception as error:  # noqa: BLE001 - any failure to read back refuses the edit
        return f"the edited file does not parse: {error}"
    return ""


def _proof(context: FixContext, fixes: Sequence[Fix], before: Counter[str], lint: Lint,
           meaning: Meaning) -> tuple[str, str]:
    """(edited text, "") when ``fixes`` pass, else ("", why not)."""
    edits = [edit for fix in fixes for edit in fix.edits]
    try:
        edited = apply_edits(context.text, edits)
    except ValueError as error:
        return "", str(error)
    whole = [edit for edit in edits if edit.start == 0 and edit.end == len(context.text)]
    if not whole and not untouched_lines_kept(context.text, edited, edits):
        return "", "the edit would change lines outside the fixed ones"
    reason = parse_error(context.kind, edited)
    if reason:
        return "", reason
    reason = meaning(edited, fixes)
    if reason:
        return "", reason + " (fix this one by hand)"
    after = Counter(finding.rule for finding in lint(context.path, edited))
    expected = before.copy()
    for fix in fixes:
        expected[fix.rule] -= len(fix.claims)
        for rule in fix.clears:
            expected[rule] = 0
    if after != +expected:
        changes = []
        for rule in sorted(set(after) | set(+expected)):
            difference = after[rule] - expected[rule]
            if difference:
                verb = "add" if difference > 0 else "also remove"
                changes.append(f"{verb} {abs(difference)} {rule} finding{'s' if abs(difference) > 1 else ''}")
        return "", "the edit would " + ", ".join(changes) + " (fix this one by hand)"
    return edited, ""


def fix_file(path: str, kind: str, text: str, findings: Sequence[Finding], lint: Lint, pins: Pins,
             config: Config | None = None) -> FileFix:
    """Fix ``findings`` (all of them fixable rules of this file) in ``text``; nothing is written here."""
    context = FixContext(path, kind, text, pins)
    result = FileFix(path, text, text)
    by_rule: dict[str, list[Finding]] = {}
    for finding in findings:
        by_rule.setdefault(finding.rule, []).append(finding)
    fixes: list[Fix] = []
    for rule, found in sorted(by_rule.items()):
        fixer = FIXERS.get((kind, rule))
        if fixer is None:
            result.refused.extend(Refusal(f.fingerprint, rule, f"no fix for {rule} in a {kind} file") for f in found)
            continue
        for outcome in fixer(context, found):
            if isinstance(outcome, Fix):
                fixes.append(outcome)
            else:
                result.refused.append(outcome)
    if not fixes:
        return result
    config = config if config is not None else Config()
    workloads = workloads_of(path, kind, text, config)

    def meaning(edited: str, proven: Sequence[Fix]) -> str:
        return meaning_change(workloads, workloads_of(path, kind, edited, config), {fix.rule for fix in proven})

    found_before = lint(path, text)
    before = Counter(finding.rule for finding in found_before)
    edited, reason = _proof(context, fixes, before, lint, meaning)
    if not reason:
        result.fixed, result.applied = edited, fixes
    else:
        for fix in fixes:
            edited, reason = _proof(context, [*result.applied, fix], before, lint, meaning)
            if reason:
                result.proof_refusals += 1
                result.refused.extend(Refusal(claim, fix.rule, f"not fixed, file left as it was: {reason}")
                                      for claim in fix.claims)
            else:
                result.applied.append(fix)
                result.fixed = edited
    cleared = {rule for fix in result.applied for rule in fix.clears}
    result.notes.extend(exposed_secret_note(path, finding) for finding in found_before if finding.rule in cleared)
    return result
