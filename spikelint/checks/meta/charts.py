"""SPK003 once per Helm chart: how many templates went unchecked, and how to lint them rendered.

Templates are skipped while reading (``documents.templates``); one line per template would
open a report with dozens of identical notices, so the chart's ``Chart.yaml`` carries one
count, or, for templates with no ``Chart.yaml`` in the scanned tree, the first of them does.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath
from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.documents.templates import UnrenderedTemplate
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem
from spikelint.model import SourceFile
from spikelint.discovery.project import Project
from spikelint.util.lazyre import lazy_regex

CHART_FILE = "Chart.yaml"
ROOT = PurePosixPath(".")


@check("SPK003", scope="document", kinds=(FileKind.YAML, FileKind.TEXT))
def skipped_chart_templates(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    project = ctx.project
    path = PurePosixPath(document.path)
    is_chart_file = path.name == CHART_FILE and document.kind == FileKind.YAML
    if not is_chart_file and not isinstance(document.parsed, UnrenderedTemplate):
        return
    charts = {PurePosixPath(source.path).parent for source in project.named(CHART_FILE)}
    if is_chart_file:
        skipped = _skipped(project, path.parent, charts)
        if skipped:
            yield _notice(path.parent, len(skipped), chart=True)
        return
    if _chart_of(path, charts) is not None:
        return  # counted at the chart's Chart.yaml
    group = _group(path)
    skipped = _skipped(project, group, charts)
    if not skipped or skipped[0].path == document.path:
        # no Chart.yaml above it: Helm's advice only where the template speaks Helm (``.Values``, ``.Release``);
        # a ``templates/`` folder of another tool (CloudFormation through a Go renderer) gets the general one
        chart = isinstance(document.parsed, UnrenderedTemplate) and document.parsed.chart_template and \
            HELM_OBJECTS.search(document.text) is not None
        yield _notice(group, max(len(skipped), 1), chart=chart)


HELM_OBJECTS = lazy_regex(r"\.(?:Values|Release|Chart|Capabilities)\.|\binclude\s+\"")


def _notice(folder: PurePosixPath, count: int, *, chart: bool) -> Problem:
    shown = folder.as_posix()
    plural = "template" if count == 1 else "templates"
    rendered = shlex.quote(f"{shown}/rendered.yaml" if folder != ROOT else "rendered.yaml")
    if chart:
        how = f"helm template release {shlex.quote(shown)} | spikelint check --stdin-filename {rendered}"
        message = (f"{count} unrendered Helm {plural} not checked (only scanned for secrets); "
                   f"lint the rendered chart: `{how}`")
    else:
        where = "this folder" if folder == ROOT else f"{shown}/"
        message = (f"{count} unrendered {plural} in {where} not checked (only scanned for secrets); render "
                   f"them and lint the output: `<render command> | spikelint check --stdin-filename {rendered}`")
    return Problem("SPK003", 1, 1, message, key=f"templates:{shown}")


def _chart_of(path: PurePosixPath, charts: set[PurePosixPath]) -> PurePosixPath | None:
    """The folder of the nearest ``Chart.yaml`` above ``path`` in the scanned tree."""
    for folder in path.parents:
        if folder in charts:
            return folder
    return None


def _group(path: PurePosixPath) -> PurePosixPath:
    """Where a chart-less template belongs: the folder holding its ``templates/``, else its own folder."""
    parts = path.parts[:-1]
    if "templates" in parts:
        last = len(parts) - 1 - parts[::-1].index("templates")
        return PurePosixPath(*parts[:last]) if last else ROOT
    return path.parent


def _skipped(project: Project, folder: PurePosixPath, charts: set[PurePosixPath]) -> list[SourceFile]:
    """The unrendered templates that belong to ``folder`` (not to a chart or group nested in it), sorted."""
    prefix = "" if folder == ROOT else folder.as_posix() + "/"
    found = []
    for source in project.sources:
        if not source.path.startswith(prefix) or source.kind not in (FileKind.YAML, FileKind.TEXT, FileKind.JSON,
                                                                        FileKind.TOML):
            continue
        path = PurePosixPath(source.path)
        if (_chart_of(path, charts) or _group(path)) != folder:
            continue
        if isinstance(project.document(source).parsed, UnrenderedTemplate):
            found.append(source)
    return sorted(found, key=lambda source: source.path)
