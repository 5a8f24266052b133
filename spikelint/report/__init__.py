"""Reporters: one render function per output format, looked up in :data:`RENDERERS`.

A reporter turns a finished :class:`~spikelint.model.Report` into the text of one output
format and decides nothing about what is a finding.  Renderers are pure (no I/O, no global
state) and import only the standard library, because they run on the pre-commit path.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from dataclasses import replace
from typing import Callable
from typing import Iterable

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Finding
from spikelint.model import Report

SECRET_FAMILY = "SPK2"
FAMILY_CONCERNS = {
    "SPK0": "meta",
    "SPK1": "images",
    "SPK2": "secrets",
    "SPK3": "storage",
    "SPK4": "checkpoint",
    "SPK5": "logs",
    "SPK6": "contract",
    "SPK7": "capacity",
}


@dataclass(frozen=True)
class RenderOptions:
    """How to render; the command line decides, renderers only obey.

    ``color``: ANSI colour in the ``text`` format (the caller sets it when standard output is
    a terminal and ``NO_COLOR`` is unset).  ``show_source``: print the offending source line
    under each text finding.  ``path_prefix``: the current folder relative to the repository
    root (what ``git rev-parse --show-prefix`` prints, e.g. ``"deploy/"``), prepended to
    paths in formats that locate files from the repository root (SARIF, GitLab, GitHub,
    the JUnit ``file`` attribute).  ``width``: the text format's line length (a terminal's
    width, else 100).  ``fail_on``: the run's ``--fail-on``, so JUnit marks as
    failures exactly what fails the gate.  ``root_uri``: where ``%SRCROOT%`` is, when known.
    """

    color: bool = False
    show_source: bool = True
    path_prefix: str = ""
    fail_on: str = "info"  # JUnit: findings below this severity are not failures ("never": none are)
    root_uri: str = ""  # the repository root as a file:// URI ending in "/" (SARIF originalUriBaseIds)
    width: int = 100  # text: columns a message line is wrapped to (0: never wrapped)


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Findings by path, line, column and rule: every format lists them in one stable order."""
    return sorted(findings, key=Finding.sort_key)


def is_secret_rule(rule: str) -> bool:
    """Secret rules' source lines hold the secret, so no renderer may echo them."""
    return rule.startswith(SECRET_FAMILY)


def rule_family(rule: str) -> str:
    """``SPK101`` -> ``SPK1``: the concern the rule belongs to."""
    match = re.match(r"([A-Za-z]+\d)", rule)
    return match.group(1) if match else rule


def family_concern(rule: str) -> str:
    """The concern a rule's family covers (``SPK1`` -> ``images``), for grouping and tags."""
    family = rule_family(rule)
    return FAMILY_CONCERNS.get(family, family)


_DRIVE = lazy_regex(r"^[A-Za-z]:")


def on_repository_file(finding: Finding) -> Finding:
    """A finding inside a committed archive (``bundle.tar.gz!src/.env``) placed on the archive itself, line 1, the
    member and its line named in the message: code scanning, GitLab and workflow annotations attach only to files
    of the repository."""
    archive, separator, member = finding.path.partition("!")
    if not separator:
        return finding
    return replace(finding, path=archive, line=1, column=1, end_line=None, end_column=None,
                   message=f"in {member}, line {finding.line}: {finding.message}")


def repo_path(path: str, prefix: str = "") -> str:
    """A ``/``-separated path relative to the repository root, never absolute.

    CI services resolve locations against the checkout; an absolute or ``./`` path makes
    them drop or duplicate the annotation, so leading ``/``, ``./`` and drive letters go.
    """
    path = _DRIVE.sub("", path.replace("\\", "/"))
    head = prefix.replace("\\", "/").strip("/")
    joined = path if path.startswith("/") or not head else f"{head}/{path}"
    normal = posixpath.normpath(joined).lstrip("/")
    return "" if normal == "." else normal


SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def at_or_above(severity: str, threshold: str) -> bool:
    """Whether a finding of ``severity`` fails a gate set to ``threshold`` (``never``: nothing does)."""
    if threshold == "never":
        return False
    return SEVERITY_RANK.get(severity, 1) >= SEVERITY_RANK.get(threshold, 0)


def severity_counts(findings: Iterable[Finding]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return counts


def summary_line(report: Report) -> str:
    """``N errors, N warnings, N info in N files (N files checked)``, plus suppressed/baselined.

    Counts of one read in the singular (``1 error … in 1 file (1 file checked)``).

    The first part is a fixed contract (scripts parse it); suppressed and baselined counts
    are appended inside the parentheses only when non-zero, so nothing is silently dropped.
    """
    counts = severity_counts(report.findings)
    files = len({finding.path for finding in report.findings})
    details = [f"{plural(report.files_checked, 'file')} checked"]
    if report.suppressed:
        details.append(f"{report.suppressed} suppressed")
    if report.baselined:
        details.append(f"{report.baselined} baselined")
    return (f"{plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}, {counts['info']} info "
            f"in {plural(files, 'file')} ({', '.join(details)})")


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``, ``0 files``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass(frozen=True)
class RuleCount:
    rule: str
    name: str
    severity: str  # the most severe a finding of this rule had
    count: int
    files: int


def rule_statistics(findings: Iterable[Finding]) -> list[RuleCount]:
    """Findings counted per rule, most frequent first (then by id): what to tune first."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.rule, []).append(finding)
    counts = []
    for rule, group in groups.items():
        worst = max((finding.severity for finding in group), key=lambda severity: SEVERITY_RANK.get(severity, 1))
        counts.append(RuleCount(rule, group[0].name, worst, len(group), len({finding.path for finding in group})))
    return sorted(counts, key=lambda item: (-item.count, item.rule))


def statistics_text(findings: Iterable[Finding]) -> str:
    """The per-rule table of ``--statistics`` (and of a long text run), with how to tune it."""
    counts = rule_statistics(findings)
    if not counts:
        return ""
    width = len(str(counts[0].count))
    lines = [f"{item.count:>{width}}  {item.rule}  {item.severity:<7}  {item.name} ({plural(item.files, 'file')})"
             for item in counts]
    lines.append("tune: `spikelint explain ID` says why; `--ignore ID` (or `ignore: [ID]` in .spikelint.yaml)")
    lines.append("      turns a rule off, `severity: {ID: info}` lowers it")
    return "".join(line + "\n" for line in lines)


def tool_version(report: Report) -> str:
    """The version the report names; the package's own when the engine left it empty."""
    if report.tool_version:
        return report.tool_version
    from spikelint import __version__

    return __version__


# The renderer modules import the helpers above, so they are imported after them.
from spikelint.report.github import render_github  # noqa: E402
from spikelint.report.gitlab import render_gitlab  # noqa: E402
from spikelint.report.html import render_html  # noqa: E402
from spikelint.report.json_report import render_json  # noqa: E402
from spikelint.report.junit import render_junit  # noqa: E402
from spikelint.report.sarif import render_sarif  # noqa: E402
from spikelint.report.text import render_text  # noqa: E402

Renderer = Callable[[Report, RenderOptions], str]

RENDERERS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "junit": render_junit,
    "gitlab": render_gitlab,
    "github": render_github,
    "html": render_html,
}

__all__ = [
    "RENDERERS",
    "RenderOptions",
    "Renderer",
    "ordered",
    "repo_path",
    "summary_line",
]
