"""SPK503 and SPK504: where a training workload's log goes.

SPK503: several pods append to one fixed log file on shared storage.  SPK504: no log
destination is visible at all (one that is not persistent is SPK301's).
"""

from __future__ import annotations

import re
from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.model import FileKind
from spikelint.facts.placement import TEMPORARY
from spikelint.facts.invocations import Invocation
from spikelint.facts.expansion import expand
from spikelint.facts.paths import is_log_write
from spikelint.facts.invocations import script_invocations
from spikelint.facts.expansion import script_lookup
from spikelint.facts.placement import under
from spikelint.facts.paths import PathUse
from spikelint.facts.placement import is_relative
from spikelint.facts.placement import place
from spikelint.facts.placement import resolve
from spikelint.facts.paths import run_view
from spikelint.facts.paths import launcher_nodes
from spikelint.facts.runconfig import LOG
from spikelint.facts.runconfig import UNRESOLVED

PER_POD = lazy_regex(
    r"\$\{?\(?(?:RANK|NODE_RANK|GROUP_RANK|GLOBAL_RANK|WORLD_RANK|HOSTNAME|HOST|POD_NAME|MY_POD_NAME|POD_UUID|"
    r"POD_INDEX|POD_IP|JOB_COMPLETION_INDEX|PMI_RANK|PMIX_RANK|OMPI_COMM_WORLD_RANK|SLURM_PROCID|SLURM_NODEID|"
    r"REPLICA_INDEX|WORKER_INDEX|TASK_INDEX)\b|\$\(\s*hostname\b|`\s*hostname\b|%h\b|\{rank\}|\{node_rank\}")
RANK_GUARD = lazy_regex(r"RANK|_INDEX|HOSTNAME|POD_NAME|rank", re.IGNORECASE)


# --------------------------------------------------------------------------- SPK503


def _pods_running(container: Container, invocation: Invocation, workload: Workload) -> int:
    """Pods that run this command: the container's replicas, or torchrun's --nnodes when it says more."""
    replicas = container.replicas if container.replicas > 0 else 0
    return max(replicas, launcher_nodes(invocation.words, invocation.lookup) if replicas <= 1 else 0)


def _log_file_uses(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[PathUse]:
    """Redirect/tee targets and log-file flags written by the workload's own commands."""
    view = run_view(workload, document, ctx.project)
    for use in view.uses:
        if use.invocation is None or use.config_ref is not None:
            continue
        if use.write is not None or (LOG in use.setting.roles and use.setting.key[-1] in ("log_file", "logfile",
                                                                                         "log_path")):
            yield use


@check("SPK503", scope="workload")
def shared_log_across_ranks(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Two or more pods of a distributed run append to the same fixed file on shared storage."""
    if not workload.is_training:
        return
    view = run_view(workload, document, ctx.project)
    if max(workload.pods, view.nnodes) <= 1:
        return
    groups: dict[str, list[tuple[PathUse, int]]] = {}
    for use in _log_file_uses(workload, document, ctx):
        invocation = use.invocation
        assert invocation is not None
        if RANK_GUARD.search(invocation.condition or ""):
            continue
        if any(PER_POD.search(text) for _, text in use.sources) or UNRESOLVED in use.text and not use.sources:
            continue
        if is_relative(use.text) and use.cwd is None:
            continue
        absolute = resolve(use.text, use.cwd)
        if absolute is None or UNRESOLVED in use.text:
            continue
        placement = place(absolute, use.container, workload, ctx.config)
        if placement.persistent is not True:
            continue  # node-local or lost: SPK301 speaks about it
        groups.setdefault(absolute, []).append((use, _pods_running(use.container, invocation, workload)))
    for absolute, uses in groups.items():
        containers = {id(use.container): pods for use, pods in uses}
        pods = sum(containers.values())
        if pods < 2:
            continue
        seen: set[tuple[int, int]] = set()
        for use, _ in uses:
            where = use.report_at
            if (where.line, where.column) in seen:
                continue
            seen.add((where.line, where.column))
            operator = use.write.operator if use.write is not None else use.setting.origin
            yield Problem.at("SPK503", where, _shared_log_message(f"{pods} pods of this workload", absolute,
                                                                  operator), key=absolute)


def _shared_log_message(pods: str, absolute: str, operator: str) -> str:
    return (f"{pods} write the same file {absolute!r} ({operator}) on shared storage: their lines interleave and "
            f"overwrite each other, and the log of a failed run is unreadable — put the rank in the name "
            f"(train-rank${{NODE_RANK}}.log, ${{HOSTNAME}}) or write the file from rank 0 only")


@check("SPK503", scope="document", kinds=(FileKind.SHELL,))
def script_shared_log(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A launch script run on every node (``torchrun --nnodes 2``…) appending to one fixed file.

    Without mounts to look at, a fixed absolute path outside the node's temporary folders is
    taken as shared (an NFS home, a cluster filesystem); ``runai`` commands are workloads and
    are checked as such.
    """
    script = document.parsed
    if script is None or not hasattr(script, "pipelines"):
        return
    for invocation in script_invocations(script, None, script_lookup(script), skip=frozenset(("runai",))):
        lookup = invocation.lookup
        nodes = launcher_nodes(invocation.words, lookup)
        if nodes < 2 or RANK_GUARD.search(invocation.condition or ""):
            continue
        for write in invocation.writes:
            if not is_log_write(write, invocation) or lookup is None:
                continue
            expanded = expand(str(write.target.value), write.target, lookup)
            if any(PER_POD.search(text) for _, text in expanded.sources) or UNRESOLVED in expanded.text:
                continue
            absolute = resolve(expanded.text, invocation.cwd)
            if absolute is None or any(under(absolute, prefix) for prefix in TEMPORARY):
                continue
            yield Problem.at("SPK503", write.target,
                             _shared_log_message(f"the {nodes} nodes this script runs on", absolute, write.operator),
                             key=absolute)


# --------------------------------------------------------------------------- SPK504


@check("SPK504", scope="workload")
def log_not_persisted(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A training workload's log goes only to stdout: no tee, redirect, log dir or trainer output folder.

    A Slurm job's stdout already goes to a file (``--output``, by default ``slurm-%j.out``)."""
    if not workload.is_training or workload.platform.stdout_kept:
        return
    view = run_view(workload, document, ctx.project)
    facts = view.facts
    if facts is None or facts.logs or view.missing_configs or view.opaque:
        return  # a config or script it names but that is not here may well set the log folder
    if any(use.write is not None for use in view.uses) or any(LOG in s.roles for s in view.settings):
        return
    yield Problem.at("SPK504", workload.anchor,
                     "the training log goes only to the container's stdout, which is rotated and deleted with the "
                     "pod: after a failed run the evidence is gone — also write it to the PVC (… 2>&1 | tee -a "
                     "/ckpt/<run>/train.log with set -o pipefail, --log-dir /ckpt/<run>/logs, or the trainer's "
                     "--output_dir on the PVC)",
                     key="log-not-persisted")

