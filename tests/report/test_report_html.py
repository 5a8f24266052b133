"""``--format html``: one self-contained page, read by a real HTML parser and by a real headless browser."""

from __future__ import annotations

import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_samples import SECRET
from report_samples import SPACED
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report.html import render_html

CHROMIUM = next((path for name in ("chromium", "chromium-browser", "google-chrome")
                 if (path := shutil.which(name))), None)
# what a sandboxed CI machine needs: no network at start-up, a throw-away profile
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync")


class Page(HTMLParser):
    """What the page holds: tags, the text of each cell, anything that would be fetched."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.fetched: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.fetched += [value or "" for name, value in attrs if name in ("src", "href") and tag != "a"]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def test_the_page_holds_the_summary_the_rules_and_every_finding(sample_report: Report) -> None:
    text = render_html(sample_report, RenderOptions())
    page = parsed(text)
    words = " ".join(page.text)
    assert text.startswith("<!DOCTYPE html>") and "script" not in page.tags and page.fetched == []
    assert "3 errors, 3 warnings, 1 info in 3 files (5 files checked, 2 suppressed, 1 baselined)" in words
    assert words.count("SPK303") == 3  # once in the per-rule table, once per finding
    assert SPACED in words and "image: pytorch/pytorch:latest" in words  # the offending line is shown
    assert SECRET not in text and SECRET[:8] not in text  # a secret rule never shows its line


def test_what_a_finding_says_is_escaped_never_markup() -> None:
    finding = make_finding(message="value '<script>alert(1)</script>' & \"quotes\"", path="a<b>.yaml")
    text = render_html(Report([finding], 1, sources={"a<b>.yaml": ["image: x:<latest>"]}), RenderOptions())
    page = parsed(text)
    assert "script" not in page.tags and "b" not in page.tags
    assert "value '<script>alert(1)</script>' & \"quotes\"" in " ".join(page.text)


def test_backticked_spans_are_code_and_every_file_is_linked() -> None:
    finding = make_finding(message="set `set -o pipefail` first <now>")
    text = render_html(Report([finding], 1), RenderOptions())
    assert "<code>set -o pipefail</code> first &lt;now&gt;" in text
    assert '<a href="#file-a-yaml">a.yaml</a>' in text and 'id="file-a-yaml"' in text


def test_a_long_minified_line_is_cut_around_the_column() -> None:
    line = "x" * 5000 + "image: busybox:latest" + "y" * 5000
    finding = make_finding(column=5001)
    text = render_html(Report([finding], 1, sources={"a.yaml": [line]}), RenderOptions())
    assert "image: busybox:latest" in text and len(text) < 12000


def test_no_findings_is_said_in_words() -> None:
    assert "No findings." in render_html(Report([], 3), RenderOptions())


@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium (Debian: apt-get install chromium)")
def test_the_page_renders_in_a_real_browser(sample_report: Report, tmp_path: Path) -> None:
    """Chromium opens the file with the network cut off, lays it out and takes a picture of it;
    the DOM it built holds one row per finding, and the screenshot is a real, non-blank image."""
    page = tmp_path / "report.html"
    page.write_text(render_html(sample_report, RenderOptions()), encoding="utf-8")
    common = [str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1000"]
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    rules = len({finding.rule for finding in sample_report.findings})
    assert dom.stdout.count("<td class=\"num\">") == len(sample_report.findings) + 2 * rules  # findings, rule counts
    shot = tmp_path / "report.png"
    subprocess.run([*common, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # a laid-out page, not an empty frame


def test_the_html_format_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                                       "    - name: c\n      image: busybox:latest\n", encoding="utf-8")
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "spikelint", "check", "--format", "html", "--output", str(out),
                           "--format", "text", "job.yaml"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "SPK101" in done.stdout
    assert "busybox:latest" in " ".join(parsed(out.read_text(encoding="utf-8")).text)
