"""``report.html`` in a smoke run folder: the picture of a verdict, drawn as an inline SVG.

The loss of the uninterrupted run and of every resumed run against the step, each kill and
resume point marked, then the verdict of each variant and the state differences. One file,
no script and nothing fetched when it is opened: it is read from an artifact store or a
laptop long after the machine is gone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field
from html import escape
from typing import Any

WIDTH, HEIGHT = 880, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 40
COLOURS = ("#cf222e", "#8250df", "#bf8700", "#1a7f37", "#0969da", "#bc4c00", "#57606a")
REFERENCE_COLOUR = "#1f2328"
VERDICT_COLOURS = {"verified": "#1a7f37", "incomplete": "#9a6700", "state_differs": "#cf222e",
                   "resume_failed": "#cf222e", "setup_error": "#57606a"}


@dataclass
class Curve:
    """One variant's losses: before the interruption, and after the resume."""

    name: str
    verdict: str
    interrupted: dict[int, float] = field(default_factory=dict)
    resumed: dict[int, float] = field(default_factory=dict)
    killed_after: int | None = None
    resumed_from: int | None = None


def losses(steps: dict[int, str]) -> dict[int, float]:
    """Step -> loss for the steps whose loss text is a finite number."""
    found = {}
    for step, text in steps.items():
        try:
            value = float(text)
        except ValueError:
            continue
        if math.isfinite(value):
            found[step] = value
    return found


def render_page(summary: dict[str, Any], reference: dict[int, float], curves: list[Curve]) -> str:
    verdict = summary.get("verdict", "")
    colour = VERDICT_COLOURS.get(verdict, "#57606a")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>spikelint smoke: {escape(verdict.upper())}</title>", f"<style>{STYLE}</style></head><body>",
             f'<h1>spikelint smoke: <span style="color:{colour}">{escape(verdict.replace("_", " ").upper())}</span></h1>',
             f"<p>{escape(summary.get('message', ''))}</p>"]
    if summary.get("job"):
        parts.append(f"<p class=\"job\"><code>{escape(str(summary['job']))}</code></p>")
    parts.append("<h2>Loss against step</h2>")
    parts.append(loss_chart(reference, curves) if reference or any(c.resumed for c in curves) else
                 "<p>No loss was printed on the step lines, so there is nothing to draw; the verdict rests on the "
                 "checkpoints alone.</p>")
    parts += variant_table(summary)
    parts += difference_table(summary)
    for warning in summary.get("warnings", []):
        parts.append(f'<p class="warning">warning: {escape(str(warning))}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def loss_chart(reference: dict[int, float], curves: list[Curve]) -> str:
    """An SVG: the reference as a solid line, each resumed run dashed in its colour, kills and resumes marked."""
    points = [*reference.items(), *(item for curve in curves for item in curve.resumed.items())]
    if not points:
        return ""
    low_x, high_x = min(step for step, _ in points), max(step for step, _ in points)
    low_y, high_y = min(value for _, value in points), max(value for _, value in points)
    if high_x == low_x:
        high_x += 1
    if high_y == low_y:
        high_y, low_y = high_y + 0.5, low_y - 0.5

    def x(step: float) -> float:
        return LEFT + (step - low_x) / (high_x - low_x) * (WIDTH - LEFT - RIGHT)

    def y(value: float) -> float:
        return TOP + (high_y - value) / (high_y - low_y) * (HEIGHT - TOP - BOTTOM)

    def line(series: dict[int, float], colour: str, dash: str, label: str) -> str:
        path = " ".join(f"{x(step):.1f},{y(value):.1f}" for step, value in sorted(series.items()))
        return (f'<polyline fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}" points="{path}">'
                f"<title>{escape(label)}</title></polyline>")

    shapes = [f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}" '
              'fill="#fff" stroke="#d1d9e0"/>']
    for index in range(5):  # axis ticks
        value = low_y + (high_y - low_y) * index / 4
        shapes.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.4g}</text>')
        step = low_x + (high_x - low_x) * index / 4
        shapes.append(f'<text x="{x(step):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{step:.0f}</text>')
    shapes.append(f'<text x="{(LEFT + WIDTH) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">step</text>')
    if reference:
        shapes.append(line(reference, REFERENCE_COLOUR, "none", "uninterrupted run"))
    legend = [(REFERENCE_COLOUR, "uninterrupted run", "none")]
    for index, curve in enumerate(curves):
        colour = COLOURS[index % len(COLOURS)]
        if curve.killed_after is not None:
            shapes.append(f'<line x1="{x(curve.killed_after):.1f}" y1="{TOP}" x2="{x(curve.killed_after):.1f}" '
                          f'y2="{HEIGHT - BOTTOM}" stroke="{colour}" stroke-dasharray="2 3">'
                          f"<title>{escape(curve.name)}: killed after step {curve.killed_after}</title></line>")
        if curve.resumed:
            shapes.append(line(curve.resumed, colour, "6 4", f"{curve.name}: resumed run"))
        if curve.resumed_from is not None and curve.resumed:
            first = min(curve.resumed)
            shapes.append(f'<circle cx="{x(first):.1f}" cy="{y(curve.resumed[first]):.1f}" r="4" fill="{colour}">'
                          f"<title>{escape(curve.name)}: resumed from step {curve.resumed_from}</title></circle>")
        legend.append((colour, f"{curve.name} ({curve.verdict.replace('_', ' ')})", "6 4"))
    rows = "".join(f'<li><svg width="28" height="10"><line x1="0" y1="5" x2="28" y2="5" stroke="{colour}" '
                   f'stroke-width="2" stroke-dasharray="{dash}"/></svg> {escape(label)}</li>'
                   for colour, label, dash in legend)
    return (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
            f'aria-label="loss against step">{"".join(shapes)}</svg><ul class="legend">{rows}</ul>'
            "<p class=\"hint\">Dotted vertical lines: where each variant was interrupted; dots: the first step "
            "after its resume. A resumed run that reproduces the uninterrupted one lies on its line.</p>")


def variant_table(summary: dict[str, Any]) -> list[str]:
    variants = summary.get("variants", [])
    if not variants:
        return []
    rows = ["<h2>Variants</h2>", '<table class="fixed"><colgroup><col style="width:13rem"><col style="width:8rem"><col>'
            "</colgroup><thead><tr><th>variant</th><th>verdict</th><th>what happened</th></tr></thead><tbody>"]
    for variant in variants:
        colour = VERDICT_COLOURS.get(variant.get("verdict", ""), "#57606a")
        rows.append(f"<tr><td>{escape(variant.get('name', ''))}</td>"
                    f'<td style="color:{colour}">{escape(variant.get("verdict", "").replace("_", " "))}</td>'
                    f"<td>{escape(variant.get('message', ''))}</td></tr>")
    rows.append("</tbody></table>")
    return rows


def difference_table(summary: dict[str, Any]) -> list[str]:
    differences = summary.get("differences", [])
    if not differences:
        return []
    rows = ["<h2>State differences</h2>", "<table><thead><tr><th>variant</th><th>key</th><th>kind</th>"
            "<th>largest |difference|</th></tr></thead><tbody>"]
    for difference in differences[:200]:
        largest = difference.get("max_abs_diff")
        rows.append(f"<tr><td>{escape(str(difference.get('variant', '')))}</td>"
                    f"<td><code>{escape(str(difference.get('key', '')))}</code></td>"
                    f"<td>{escape(str(difference.get('kind', '')))}</td>"
                    f"<td>{'' if largest is None else f'{largest:.3g}'}</td></tr>")
    rows.append("</tbody></table>")
    return rows


STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 60rem;
       padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.8rem; }
.job code { font: 12.5px ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
svg.chart { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; fill: #1f2328; }
ul.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4rem 1.4rem; }
.hint, .warning { color: #59636e; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #d1d9e0; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #f6f8fa; }
table.fixed { table-layout: fixed; }
"""
