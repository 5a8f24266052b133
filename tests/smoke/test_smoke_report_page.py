"""``report.html`` of a smoke run: the losses drawn as an inline SVG, the variants and the differences."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from spikelint.smoke.report.page import Curve
from spikelint.smoke.report.page import losses
from spikelint.smoke.report.page import render_page

CHROMIUM = next((path for name in ("chromium", "chromium-browser", "google-chrome")
                 if (path := shutil.which(name))), None)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


REFERENCE = {step: 2.0 / step for step in range(1, 41)}
SUMMARY = {
    "verdict": "state_differs", "message": "1 of 2 variants failed; <kill> & more", "job": "python train.py {resume}",
    "variants": [{"name": "kill-between-checkpoints", "verdict": "state_differs", "message": "losses differ"},
                 {"name": "kill-off-period", "verdict": "verified", "message": "equal"}],
    "differences": [{"variant": "kill-between-checkpoints", "key": "step-28.pt:optimizer.state.0.exp_avg",
                     "kind": "value", "max_abs_diff": 0.0123}],
    "warnings": [],
}
CURVES = [Curve("kill-between-checkpoints", "state_differs", {s: REFERENCE[s] for s in range(1, 27)},
                {s: REFERENCE[s] * 1.1 for s in range(25, 41)}, 26, 24),
          Curve("kill-off-period", "verified", {s: REFERENCE[s] for s in range(1, 17)},
                {s: REFERENCE[s] for s in range(16, 41)}, 16, 15)]


def parsed(text: str) -> Tags:
    page = Tags()
    page.feed(text)
    return page


def test_the_page_draws_the_reference_and_every_resumed_run() -> None:
    text = render_page(SUMMARY, REFERENCE, CURVES)
    page = parsed(text)
    assert page.tags.count("polyline") == 3 and page.tags.count("circle") == 2  # reference, 2 resumes; 2 resume dots
    assert page.tags.count("line") >= 2 and "script" not in page.tags  # the kill points; no script, nothing fetched
    words = " ".join(page.text)
    assert "1 of 2 variants failed; <kill> & more" in words  # escaped, shown as text
    assert "step-28.pt:optimizer.state.0.exp_avg" in words and "0.0123" in words


def test_without_losses_the_page_says_what_the_verdict_rests_on() -> None:
    text = render_page(dict(SUMMARY, verdict="verified"), {}, [])
    assert "svg" not in parsed(text).tags and "rests on the checkpoints alone" in text


def test_only_finite_numbers_are_drawn() -> None:
    assert losses({1: "0.5", 2: "nan", 3: "", 4: "inf", 5: "1e-3"}) == {1: 0.5, 5: 0.001}


@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium (Debian: apt-get install chromium)")
def test_the_page_renders_in_a_real_browser(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_page(SUMMARY, REFERENCE, CURVES), encoding="utf-8")
    common = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,1200"]
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    assert dom.stdout.count("<polyline") == 3
    shot = tmp_path / "report.png"
    subprocess.run([*common, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
