"""Writing a rendered report where the user asked, with the text summary on stderr."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Sequence
from pathlib import Path

from spikelint.model import Report
from spikelint.secrets.output_mask import mask_output
from spikelint.secrets.output_mask import mask_shapes
from spikelint.util.safe_write import UnsafeTarget
from spikelint.util.safe_write import write_text_safely

REPOSITORY_RELATIVE_FORMATS = ("sarif", "gitlab", "github", "junit")


class OutputError(Exception):
    """The report could not be written; the message names the file."""


def repository_prefix() -> str:
    """The current folder relative to the Git root, so CI annotations land on the right file."""
    try:
        result = subprocess.run(["git", "rev-parse", "--show-prefix"], capture_output=True, text=True, timeout=30,
                                check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def _root_uri(prefix: str) -> str:
    """The repository root as a ``file://`` URI ending in ``/``: the current folder less ``prefix``."""
    root = Path.cwd()
    for _ in [part for part in prefix.split("/") if part]:
        root = root.parent
    return root.as_uri().rstrip("/") + "/"


def use_color(stream_is_tty: bool) -> bool:
    """``NO_COLOR`` (non-empty) turns colour off, ``FORCE_COLOR`` (non-empty, not 0) on; else a terminal decides."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    return stream_is_tty and "NO_COLOR" not in os.environ


def text_width(stream_is_tty: bool) -> int:
    """A terminal's width (60–160 columns), else 100: the text format's lines fit where they are read."""
    if not stream_is_tty:
        return 100
    import shutil

    return min(max(shutil.get_terminal_size((100, 24)).columns, 60), 160)


LONG_RUN = 10  # from this many findings of several rules, text output ends with the per-rule table


def emit_report(report: Report, fmt: str, output: str | None, prefix: str | None = None,
                fail_on: str = "info", code_frame: bool = True, summary: bool | None = None,
                masks: Sequence[re.Pattern[str]] = ()) -> None:
    """Render ``report`` as ``fmt`` to ``output`` (or stdout); colour only on a TTY without NO_COLOR.

    ``prefix``: the current folder relative to the repository root (the engine's, which also
    knows the configuration's folder outside Git); ``None`` asks Git.  ``summary``: whether the
    summary line goes to stderr (default: for text, for a report written to a file, and for a machine format
    on stdout whose findings a baseline thinned, which the report would not say otherwise).
    """
    from spikelint.report import RENDERERS
    from spikelint.report import RenderOptions

    color = output is None and fmt == "text" and use_color(sys.stdout.isatty())
    if fmt not in REPOSITORY_RELATIVE_FORMATS:
        prefix = ""
    elif prefix is None:
        prefix = repository_prefix()
    options = RenderOptions(color=color, show_source=code_frame, path_prefix=prefix, fail_on=fail_on,
                            root_uri=_root_uri(prefix), width=text_width(output is None and sys.stdout.isatty()))
    rendered = RENDERERS[fmt](report, options)
    if output:
        try:
            write_text_safely(Path(output), mask_output(rendered, masks))
        except UnsafeTarget as error:
            raise OutputError(f"cannot write the report: {error}") from None
        except OSError as error:
            raise OutputError(f"cannot write {output}: {error.strerror or error}") from None
    elif rendered:
        if masks:  # a team's token shapes; the stream masks the shapes spikelint knows
            rendered = mask_shapes(rendered, masks)
        sys.stdout.write(rendered if rendered.endswith("\n") else rendered + "\n")
        sys.stdout.flush()
    if fmt == "github":
        _github_summary(report, output)
    if summary if summary is not None else fmt == "text" or output or report.baselined:
        print_summary(report, fmt == "text")


def print_summary(report: Report, table: bool) -> None:
    """The summary line on stderr; after a long text run of several rules, the per-rule table first."""
    from spikelint.report import summary_line

    sys.stdout.flush()  # the findings first: piped, stdout is block-buffered and stderr is not
    if table and len(report.findings) >= LONG_RUN and len({f.rule for f in report.findings}) > 1:
        from spikelint.report import statistics_text

        sys.stderr.write("\nby rule:\n" + statistics_text(report.findings))
    print(summary_line(report), file=sys.stderr)


def _github_summary(report: Report, output: str | None) -> None:
    """A ``::notice`` with the summary in the log, and the per-rule table in the job summary page."""
    from spikelint.report.github import render_github_summary

    notice, markdown = render_github_summary(report)
    if output is None:
        print(notice, flush=True)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        try:
            with open(summary_file, "a", encoding="utf-8") as handle:
                handle.write(mask_output(markdown))
        except OSError as error:
            print(f"spikelint: cannot append to GITHUB_STEP_SUMMARY {summary_file}: {error.strerror or error}",
                  file=sys.stderr)
