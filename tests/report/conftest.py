"""Fixtures for the reporter tests: hand-built reports (see report_samples)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_samples import RULES
from report_samples import SOURCES
from report_samples import build_findings
from report_samples import shared_folder

from spikelint.model import Report


@pytest.fixture
def sample_report() -> Report:
    return Report(
        findings=build_findings(),
        files_checked=5,
        suppressed=2,
        baselined=1,
        rules=RULES,
        sources=SOURCES,
        tool_version="1.2.3",
    )


@pytest.fixture
def empty_report() -> Report:
    return Report(findings=[], files_checked=3, rules=RULES,
                  sources={"a.yaml": ["kind: Job"], "b.yaml": [], "c d/e.sh": []}, tool_version="1.2.3")


@pytest.fixture
def reference() -> Path:
    folder = shared_folder()
    if folder is None:
        pytest.skip("needs the official SARIF 2.1.0 and GitLab Code Quality JSON Schemas, which a clone does not include")
    return folder / "reference"
