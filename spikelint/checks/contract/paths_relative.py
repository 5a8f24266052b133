"""SPK603: a relative output path in a container that sets no working directory."""

from __future__ import annotations

from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.checks.storage.outputs import what_it_is
from spikelint.model import Document
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.facts.paths import describe
from spikelint.facts.placement import is_relative
from spikelint.facts.paths import run_view
from spikelint.facts.paths import shown


@check("SPK603", scope="workload")
def relative_output_path(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Where a relative ``--output_dir out`` lands depends on the image's WORKDIR when none is set."""
    if not workload.is_training:
        return
    view = run_view(workload, document, ctx.project)
    seen: set[tuple[int, int, str]] = set()
    for use in view.uses:
        if use.cwd is not None or not is_relative(use.text):
            continue
        identity = (use.report_at.line, use.report_at.column, use.text)
        if identity in seen:
            continue
        seen.add(identity)
        via = f" (from {describe(use.setting)})" if use.config_ref is not None else f" ({describe(use.setting)})"
        yield Problem.at("SPK603", use.report_at,
                         f"{what_it_is(use)} go to the relative path {shown(use.text)!r}{via}, but the container sets "
                         f"no working directory: whether they land on a volume or in the container's filesystem "
                         f"depends on the image's WORKDIR — use an absolute path on the PVC or set "
                         f"{workload.platform.working_dir_setting}",
                         key=shown(use.text))
