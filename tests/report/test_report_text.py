from __future__ import annotations

import re

from report_samples import SECRET
from report_samples import SPACED
from report_samples import UNICODE
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report import summary_line
from spikelint.report.text import MAX_WIDTH
from spikelint.report.text import render_text

HEADER = re.compile(r"^(?P<path>.+):(?P<line>\d+):(?P<column>\d+): (?P<rule>SPK\d{3}) \[(?P<severity>error|warning|info)\] (?P<message>.+)$")
PLAIN = RenderOptions(color=False, width=0)  # one line a message: the format without wrapping


def headers(output: str) -> list[re.Match[str]]:
    return [match for match in map(HEADER.match, output.splitlines()) if match]


def snippet_after(output: str, header_start: str) -> list[str]:
    lines = output.splitlines()
    index = next(n for n, line in enumerate(lines) if line.startswith(header_start))
    return lines[index + 1:index + 3]


def caret_span(source_row: str, caret_row: str) -> str:
    """The part of the displayed source line above the carets."""
    start = caret_row.index("^")
    stop = caret_row.rindex("^") + 1
    return source_row[start:stop]


def test_header_format(sample_report):
    output = render_text(sample_report, PLAIN)
    assert f"{SPACED}:9:18: SPK101 [error] image 'pytorch/pytorch:latest' uses the mutable tag 'latest'" in output.splitlines()
    assert len(headers(output)) == len(sample_report.findings)


def test_sorted_by_path_line_column(sample_report):
    found = [(m["path"], int(m["line"]), int(m["column"])) for m in headers(render_text(sample_report, PLAIN))]
    assert found == sorted(found)
    assert [m["path"] for m in headers(render_text(sample_report, PLAIN))][0] == SPACED


def test_snippet_with_caret_under_the_range(sample_report):
    output = render_text(sample_report, PLAIN)
    source_row, caret_row = snippet_after(output, f"{SPACED}:9:18:")
    assert source_row.startswith("  9 | ")
    assert source_row.endswith("image: pytorch/pytorch:latest")
    assert caret_span(source_row, caret_row) == "pytorch/pytorch:latest"
    assert set(caret_row.split("|", 1)[1].strip()) == {"^"}


def test_single_caret_without_end(sample_report):
    output = render_text(sample_report, PLAIN)
    source_row, caret_row = snippet_after(output, f"{UNICODE}:1:1:")
    assert caret_row.count("^") == 1
    assert caret_span(source_row, caret_row) == "k"


def test_tab_expanded_and_caret_aligned(sample_report):
    output = render_text(sample_report, PLAIN)
    source_row, caret_row = snippet_after(output, "scripts/launch.sh:2:2:")
    assert "\t" not in source_row
    assert caret_span(source_row, caret_row) == "python train.py | tee train.log"


def test_wide_characters_keep_the_caret_aligned():
    line = "name: 训练作业 image: x:latest"
    column = line.index("x:latest") + 1
    finding = make_finding(path="w.yaml", line=1, column=column, end_line=1, end_column=column + 8)
    output = render_text(Report([finding], 1, sources={"w.yaml": [line]}), PLAIN)
    source_row, caret_row = output.splitlines()[1:3]
    # Each CJK character takes two cells: the caret moves by four extra cells.
    gutter = len("  1 | ")
    assert caret_row.index("^") - gutter == line.index("x:latest") + 4
    assert source_row[gutter:].startswith("name: 训练作业")


def test_secret_source_line_never_shown(sample_report):
    output = render_text(sample_report, PLAIN)
    assert SECRET not in output
    assert SECRET[:8] not in output
    assert f"{SPACED}:12:22: SPK202 [error]" in output
    # The line after the secret header is the next header, not a snippet.
    lines = output.splitlines()
    index = next(n for n, line in enumerate(lines) if line.startswith(f"{SPACED}:12:22:"))
    assert HEADER.match(lines[index + 1])


def test_no_ansi_without_color(sample_report):
    assert "\x1b" not in render_text(sample_report, PLAIN)


def test_ansi_with_color(sample_report):
    output = render_text(sample_report, RenderOptions(color=True, width=0))
    assert "\x1b[31m" in output
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", output)
    assert stripped == render_text(sample_report, PLAIN)


def test_show_source_off_prints_headers_only(sample_report):
    output = render_text(sample_report, RenderOptions(show_source=False))
    assert len(output.splitlines()) == len(sample_report.findings)


def test_long_line_cut_around_the_column():
    line = "x" * 900 + "IMAGE" + "y" * 900
    finding = make_finding(path="long.yaml", line=1, column=901, end_line=1, end_column=906)
    output = render_text(Report([finding], 1, sources={"long.yaml": [line]}), PLAIN)
    source_row, caret_row = output.splitlines()[1:3]
    assert len(source_row) <= MAX_WIDTH + 10
    assert source_row.count("…") == 2
    assert caret_span(source_row, caret_row) == "IMAGE"


def test_range_past_the_end_of_a_long_line_is_clamped():
    line = "a" * 400
    finding = make_finding(path="long.yaml", line=1, column=390, end_line=1, end_column=2000)
    source_row, caret_row = render_text(Report([finding], 1, sources={"long.yaml": [line]}), PLAIN).splitlines()[1:3]
    assert len(caret_row) <= len(source_row) + 1
    assert set(caret_span(source_row, caret_row)) == {"a"}


def test_missing_or_short_source_gives_no_snippet():
    findings = [make_finding(path="gone.yaml", line=3), make_finding(path="short.yaml", line=9)]
    output = render_text(Report(findings, 2, sources={"short.yaml": ["only one line"]}), PLAIN)
    assert len(output.splitlines()) == 2


def test_control_characters_are_escaped():
    finding = make_finding(path="a.yaml", message="bad \x1b[31mvalue\nnext")
    output = render_text(Report([finding], 1, sources={"a.yaml": ["key: \x1b[2J"]}), PLAIN)
    assert "\x1b" not in output
    assert "\\x1b[31mvalue\\nnext" in output
    assert len(output.splitlines()) == 3


def test_empty_report_renders_nothing(empty_report):
    assert render_text(empty_report, PLAIN) == ""


def test_summary_line(sample_report, empty_report):
    assert summary_line(empty_report) == "0 errors, 0 warnings, 0 info in 0 files (3 files checked)"
    assert summary_line(sample_report) == (
        "3 errors, 3 warnings, 1 info in 3 files (5 files checked, 2 suppressed, 1 baselined)"
    )
    only_suppressed = Report([], 4, suppressed=3)
    assert summary_line(only_suppressed) == "0 errors, 0 warnings, 0 info in 0 files (4 files checked, 3 suppressed)"


def test_summary_line_singular():
    one = Report([make_finding(path="a.yaml", severity="error"), make_finding(path="a.yaml", severity="warning")], 1)
    assert summary_line(one) == "1 error, 1 warning, 0 info in 1 file (1 file checked)"


def test_huge_minified_line_shows_only_a_window():
    line = "{" + "\"k\":1," * 200_000 + "\"image\":\"x:latest\"}"
    column = line.index("x:latest") + 1
    findings = [make_finding(path="min.json", line=1, column=column, end_line=1, end_column=column + 8)] * 50
    output = render_text(Report(findings, 1, sources={"min.json": [line]}), PLAIN)
    rows = output.splitlines()
    assert len(rows) == 150
    assert max(len(row) for row in rows) < MAX_WIDTH + 200
    assert caret_span(rows[1], rows[2]) == "x:latest"


LONG = ("outputs written to '/checkpoints/bert' (--output_dir) land on emptyDir volume 'scratch' (mounted at "
        "/checkpoints), which is deleted with the pod: a preemption, eviction or retry loses them — back that "
        "mount with a persistentVolumeClaim (or a Run:ai data source), or list the path in persistent_paths if "
        "it is persistent (because: 1 GPU requested; runs python train.py)")


def test_a_long_message_is_wrapped_with_the_fix_and_reason_on_lines_of_their_own():
    finding = make_finding(path="job.yaml", line=1, column=1, message=LONG)
    output = render_text(Report([finding], 1, sources={"job.yaml": ["args: [--output_dir, /checkpoints/bert]"]}),
                         RenderOptions(width=100))
    lines = output.splitlines()
    assert max(map(len, lines)) <= 100
    assert lines[0].startswith("job.yaml:1:1: SPK101 [error] outputs written to '/checkpoints/bert'")
    assert all(line.startswith("    ") for line in lines[1:lines.index("  1 | args: [--output_dir, /checkpoints/bert]")])
    fix = next(n for n, line in enumerate(lines) if line.startswith("  = fix: back that mount"))
    assert lines[fix + 1].startswith(" " * len("  = fix: ")) and "persistent_paths" in lines[fix + 1]
    assert lines[-1] == "  = because: 1 GPU requested; runs python train.py"
    # nothing lost, nothing added: the parts put back together are the message
    snippet = lines.index("  1 | args: [--output_dir, /checkpoints/bert]")
    what = " ".join([lines[0].split("[error] ", 1)[1], *(line.strip() for line in lines[1:snippet])])
    fix_text = " ".join([lines[fix].split("= fix: ", 1)[1], *(line.strip() for line in lines[fix + 1:-1])])
    assert f"{what} — {fix_text} (because: {lines[-1].split('= because: ', 1)[1]})" == LONG


def test_no_line_holds_a_lone_word_and_a_token_is_never_cut():
    token_like = "x" * 40
    message = "word " * 18 + "tail"  # 94 characters: the last word would sit alone on a line
    finding = make_finding(path="a.yaml", line=1, column=1, message=f"{message} {token_like}")
    lines = render_text(Report([finding], 1, sources={}), RenderOptions(width=100)).splitlines()
    assert token_like in "\n".join(lines)
    assert all(len(line.strip()) >= 16 for line in lines) and max(map(len, lines)) <= 100


def test_a_lone_word_is_avoided_by_narrowing_the_lines_as_little_as_that_takes():
    message = ("the Job retries 3 times but nothing tells the program to resume from its checkpoints: every retry "
               "starts again from step 0 and pays for the same work again")
    finding = make_finding(path="examples/k8s/finetune-job.yaml", line=3, column=1, message=message)
    lines = render_text(Report([finding], 1, sources={}), RenderOptions(width=100)).splitlines()
    assert all(len(line.strip()) >= 16 for line in lines)
    assert all(len(line) > 90 for line in lines[:-1])  # not narrowed to 84 columns when 96 do


def test_short_messages_and_concise_output_stay_on_one_line():
    finding = make_finding(path="a.yaml", line=1, column=1, message=LONG)
    output = render_text(Report([finding], 1, sources={}), RenderOptions(show_source=False, width=100))
    assert output.splitlines() == [f"a.yaml:1:1: SPK101 [error] {LONG}"]
    short = make_finding(path="a.yaml", line=1, column=1, message="image 'x:latest' is mutable — pin it")
    assert render_text(Report([short], 1, sources={}), RenderOptions(width=100)).splitlines() == [
        "a.yaml:1:1: SPK101 [error] image 'x:latest' is mutable", "  = fix: pin it"]
