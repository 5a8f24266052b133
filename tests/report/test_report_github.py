from __future__ import annotations

from report_samples import SPACED
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report.github import escape_data
from spikelint.report.github import escape_property
from spikelint.report.github import render_github


def test_escaping():
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"


def test_commands_per_severity(sample_report):
    lines = render_github(sample_report, RenderOptions()).splitlines()
    assert len(lines) == len(sample_report.findings)
    assert lines[0] == (
        f"::warning file={SPACED},line=3,col=14,endLine=3,endColumn=46,title=SPK102 unpinned-image"
        "::image 'nvcr.io/nvidia/pytorch:24.05-py3' has a floating tag"
    )
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert set(kinds) == {"::error", "::warning", "::notice"}
    notice = next(line for line in lines if line.startswith("::notice"))
    assert "title=SPK702 no-cleanup-ttl" in notice and "endLine" not in notice


def test_properties_and_message_escaped():
    finding = make_finding(path="odd/a,b:c%.yaml", message="line one\nline two: 50%", line=4, column=2,
                           end_line=4, end_column=2)
    (line,) = render_github(Report([finding], 1), RenderOptions(path_prefix="repo sub")).splitlines()
    assert line == ("::error file=repo sub/odd/a%2Cb%3Ac%25.yaml,line=4,col=2,endLine=4,"
                    "title=SPK101 mutable-image-tag::line one%0Aline two: 50%25")


def test_multi_line_range_has_no_end_column():
    finding = make_finding(line=2, column=3, end_line=5, end_column=9)
    (line,) = render_github(Report([finding], 1), RenderOptions()).splitlines()
    assert "endLine=5" in line and "endColumn" not in line


def test_empty_report(empty_report):
    assert render_github(empty_report, RenderOptions()) == ""
