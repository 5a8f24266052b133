"""GitHub Actions workflow commands: inline annotations on a pull request without SARIF upload.

The runner parses ``::error file=…,line=…::message`` lines from the log; values must use
GitHub's escaping or a ``,`` or ``:`` in a path or title silently truncates the annotation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spikelint.report import on_repository_file
from spikelint.report import ordered
from spikelint.report import repo_path

if TYPE_CHECKING:
    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.report import RenderOptions

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escaping for the message after ``::`` (as the Actions toolkit's ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escaping for ``key=value`` properties (as the Actions toolkit's ``escapeProperty``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report, options: RenderOptions) -> str:
    """One workflow command per finding; info findings become notices."""
    return "".join(_command(on_repository_file(finding), options.path_prefix) + "\n"
                   for finding in ordered(report.findings))


def _command(finding: Finding, prefix: str) -> str:
    properties = [("file", repo_path(finding.path, prefix) or finding.path), ("line", str(max(finding.line, 1)))]
    properties.append(("col", str(max(finding.column, 1))))
    if finding.end_line is not None and finding.end_line >= finding.line:
        properties.append(("endLine", str(finding.end_line)))
        if finding.end_line == finding.line and finding.end_column is not None and finding.end_column > finding.column:
            properties.append(("endColumn", str(finding.end_column)))
    properties.append(("title", f"{finding.rule} {finding.name}"))
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    command = COMMANDS.get(finding.severity, "warning")
    return f"::{command} {rendered}::{escape_data(finding.message)}"


def render_github_summary(report: Report) -> tuple[str, str]:
    """The run's summary: a ``::notice`` line for the log and Markdown for ``GITHUB_STEP_SUMMARY``."""
    from spikelint.report import rule_statistics
    from spikelint.report import summary_line

    line = summary_line(report)
    notice = f"::notice title=spikelint::{escape_data(line)}"
    markdown = [f"### spikelint\n\n{line}\n"]
    statistics = rule_statistics(report.findings)
    if statistics:
        markdown.append("| rule | name | severity | findings | files |\n|---|---|---|---:|---:|")
        markdown.extend(f"| {item.rule} | {item.name} | {item.severity} | {item.count} | {item.files} |"
                        for item in statistics)
        markdown.append("\nDetails: `spikelint explain ID`; tune with `--ignore ID` or `severity:` in "
                        "`.spikelint.yaml`.")
    return notice, "\n".join(markdown) + "\n"
