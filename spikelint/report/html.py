"""One self-contained HTML page of a repository's findings: what a reviewer opens from a CI artifact.

Everything is on the page (inline CSS, no script, no font or image fetched), so it opens from a
file, an artifact store or an air-gapped machine alike. The summary and the per-rule counts come
first (what to tune), then the findings file by file with the offending line; secret rules never
show their line, as in every other format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spikelint.report import is_secret_rule
from spikelint.report import ordered
from spikelint.report import rule_statistics
from spikelint.report import summary_line
from spikelint.report import tool_version

if TYPE_CHECKING:
    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.model import Rule
    from spikelint.report import RenderOptions

def escape(text: str) -> str:
    """HTML-escaped text; the ``html`` module is imported only when a page is written (the pre-commit path stays light)."""
    from html import escape as html_escape

    return html_escape(text)


def prose(text: str) -> str:
    """Escaped text whose `backticked` spans (commands, values, as the catalog writes them) are code."""
    import re

    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


MAX_SOURCE_CHARS = 160  # a minified line is shown around its column, not whole

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1f2328; background: #fff; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.summary { color: #59636e; margin-top: 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #d1d9e0; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; width: 4rem; }
.sev { display: inline-block; min-width: 4.5rem; padding: 0 .4rem; border-radius: 1rem; font-size: .8rem;
       text-align: center; color: #fff; }
.sev.error { background: #cf222e; } .sev.warning { background: #9a6700; } .sev.info { background: #0969da; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { margin: .3rem 0 0; padding: .3rem .5rem; background: #f6f8fa; border-radius: 4px; white-space: pre-wrap;
      overflow-wrap: anywhere; }
.file { margin-top: 1.5rem; padding: .4rem .6rem; background: #f6f8fa; border: 1px solid #d1d9e0;
        border-radius: 6px 6px 0 0; font-weight: 600; }
.message { overflow-wrap: anywhere; }
table.findings { table-layout: fixed; } col.at { width: 5.5rem; } col.level { width: 6.5rem; } col.rule { width: 12rem; }
.none { padding: 1rem; background: #dafbe1; border-radius: 6px; }
ul.files { columns: 2; padding-left: 1.2rem; font-size: .9rem; } ul.files a { color: #0969da; }
footer { margin-top: 2rem; color: #59636e; font-size: .85rem; }
"""


def render_html(report: Report, options: RenderOptions) -> str:
    """The page: summary, findings per rule, then every finding by file and line."""
    findings = ordered(report.findings)
    rules = {rule.id: rule for rule in report.rules}
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>spikelint: {escape(summary_line(report))}</title>", f"<style>{STYLE}</style></head><body>",
             "<h1>spikelint findings</h1>", f'<p class="summary">{escape(summary_line(report))}</p>']
    if not findings:
        parts.append('<p class="none">No findings.</p>')
    else:
        parts += _rule_table(findings, rules)
        parts += _findings_by_file(findings, report, options)
    parts.append(f"<footer>spikelint {escape(tool_version(report))} · <code>spikelint explain ID</code> says why a "
                 "rule exists and how to fix what it found</footer></body></html>")
    return "\n".join(parts) + "\n"


def _rule_table(findings: list[Finding], rules: dict[str, Rule]) -> list[str]:
    rows = ["<h2>By rule</h2>", "<table><thead><tr><th>rule</th><th>severity</th><th>what it checks</th>"
            '<th class="num">findings</th><th class="num">files</th></tr></thead><tbody>']
    for count in rule_statistics(findings):
        rule = rules.get(count.rule)
        summary = rule.summary if rule is not None else count.name
        rows.append(f'<tr><td><code>{escape(count.rule)}</code> {escape(count.name)}</td>'
                    f'<td><span class="sev {escape(count.severity)}">{escape(count.severity)}</span></td>'
                    f'<td>{prose(summary)}</td><td class="num">{count.count}</td><td class="num">{count.files}</td></tr>')
    rows.append("</tbody></table>")
    return rows


def _findings_by_file(findings: list[Finding], report: Report, options: RenderOptions) -> list[str]:
    paths = list(dict.fromkeys(finding.path for finding in findings))
    rows = ["<h2>Findings</h2>", '<ul class="files">' + "".join(
        f'<li><a href="#{escape(_anchor(path))}">{escape(path)}</a> '
        f'({sum(1 for finding in findings if finding.path == path)})</li>' for path in paths) + "</ul>"]
    current = None
    for finding in findings:
        if finding.path != current:
            if current is not None:
                rows.append("</tbody></table>")
            current = finding.path
            rows.append(f'<div class="file" id="{escape(_anchor(finding.path))}">{escape(finding.path)}</div>')
            rows.append('<table class="findings"><colgroup><col class="at"><col class="level"><col class="rule"><col>'
                        '</colgroup><thead><tr><th class="num">line</th><th>severity</th><th>rule</th><th>finding</th>'
                        "</tr></thead><tbody>")
        source = _source(finding, report) if options.show_source else None
        shown = f"<pre>{escape(source)}</pre>" if source is not None else ""
        rows.append(f'<tr><td class="num">{finding.line}:{finding.column}</td>'
                    f'<td><span class="sev {escape(finding.severity)}">{escape(finding.severity)}</span></td>'
                    f"<td><code>{escape(finding.rule)}</code><br>{escape(finding.name)}</td>"
                    f'<td class="message">{prose(finding.message)}{shown}</td></tr>')
    rows.append("</tbody></table>")
    return rows


def _source(finding: Finding, report: Report) -> str | None:
    """The offending line (never for a secret rule: it holds the secret), cut around the column."""
    if is_secret_rule(finding.rule):
        return None
    lines = report.sources.get(finding.path)
    if lines is None or not 1 <= finding.line <= len(lines):
        return None
    line = lines[finding.line - 1].rstrip("\n").expandtabs(4)
    if len(line) <= MAX_SOURCE_CHARS:
        return line
    start = max(0, min(finding.column - 1 - MAX_SOURCE_CHARS // 2, len(line) - MAX_SOURCE_CHARS))
    return ("…" if start else "") + line[start:start + MAX_SOURCE_CHARS] + ("…" if start + MAX_SOURCE_CHARS < len(line) else "")


def _anchor(path: str) -> str:
    return "file-" + "".join(character if character.isalnum() else "-" for character in path)
