"""SPK301–SPK303: training output that vanishes with the pod.

One check decides all three so that the most specific finding wins: an output path
reported by SPK301 silences SPK303 for the mount that holds it and SPK302 for its workload.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator
from typing import NamedTuple

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import Mount
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.facts.paths import PathUse
from spikelint.facts.placement import Placement
from spikelint.facts.paths import describe
from spikelint.facts.placement import is_relative
from spikelint.facts.placement import place
from spikelint.facts.placement import resolve
from spikelint.facts.paths import run_view
from spikelint.facts.paths import shown
from spikelint.facts.placement import storage_unknown
from spikelint.facts.placement import under
from spikelint.facts.runconfig import CKPT_LOCATION
from spikelint.facts.runconfig import LOG
from spikelint.facts.runconfig import LOG_HOLDER
from spikelint.facts.runconfig import OUTPUT
from spikelint.facts.runconfig import is_remote

DURABLE_NAME = lazy_regex(r"^(data|checkpoint.*|ckpt.*|output.*|results?|logs?|runs?|models?)$", re.IGNORECASE)
CACHE_NAME = lazy_regex(r"^(\.cache|cache|caches|tmp|temp|\.tmp|shm|scratch-cache)$", re.IGNORECASE)
EPHEMERAL_SOURCES = ("emptyDir", "hostPath")


class Ephemeral(NamedTuple):
    """An output path that lands somewhere that does not survive the pod."""

    use: PathUse
    placement: Placement


def what_it_is(use: PathUse) -> str:
    """``checkpoints``, ``logs`` or ``outputs`` — the words a message uses for the path."""
    roles = use.setting.roles
    if use.write is not None or (LOG in roles and CKPT_LOCATION not in roles):
        return "logs"
    if CKPT_LOCATION in roles and LOG_HOLDER not in roles:
        return "checkpoints"
    return "outputs"


def ephemeral_outputs(workload: Workload, document: Document, ctx: CheckContext) -> list[Ephemeral]:
    """Output paths of the workload that resolve to a non-persistent place."""
    view = run_view(workload, document, ctx.project)
    found: list[Ephemeral] = []
    seen: set[tuple[int, int, str]] = set()
    for use in view.uses:
        if is_relative(use.text) and use.cwd is None:
            continue  # SPK603: where it lands depends on the image's WORKDIR
        absolute = resolve(use.text, use.cwd)
        if absolute is None or platform_managed(absolute, workload):
            continue
        placement = place(absolute, use.container, workload, ctx.config)
        identity = (use.report_at.line, use.report_at.column, absolute)
        if placement.persistent is False and identity not in seen:
            seen.add(identity)
            found.append(Ephemeral(use, placement))
    return found


def platform_managed(absolute: str, workload: Workload) -> bool:
    """A path the platform mounts at run time and reads itself (Katib's metrics collector)."""
    folders = workload.platform.platform_paths
    return any(under(absolute, folder) for folder in folders)


def ephemeral_problem(item: Ephemeral, workload: Workload) -> Problem:
    use, placement = item.use, item.placement
    kind = what_it_is(use)
    source = describe(use.setting)
    via = f" (from {source})" if use.config_ref is not None else f" ({source})"
    fix = workload.platform.ephemeral_fix
    volume = placement.mount.volume if placement.mount is not None else None
    if volume is not None:
        fix = "use an existing (non-ephemeral) PVC there" if volume.source == "ephemeral-pvc" \
            else "back that mount with a persistentVolumeClaim"
    # a volume the spec declares (emptyDir, an ephemeral PVC) is what it is: no setting makes it persistent
    unknown_place = "" if volume is not None else ", or list the path in persistent_paths if it is persistent"
    message = (f"{kind} written to {shown(use.text)!r}{via} land {placement.reason}: a preemption, eviction or "
               f"retry loses them — {fix}{' (or a Run:ai data source)' if workload.on_runai() else ''}{unknown_place}")
    return Problem.at("SPK301", use.report_at, message, key=f"{shown(use.text)}")


def slurm_log_files(workload: Workload, ctx: CheckContext, seen: set[tuple[int, int]]) -> Iterator[Problem]:
    """``#SBATCH --output``/``--error`` under a node-local folder: the job's log stays on the first node."""
    for option, where in workload.slurm.logs if workload.slurm is not None else ():
        text = str(where.value)
        absolute = resolve(text, None)
        if absolute is None or (where.line, where.column) in seen:
            continue
        container = workload.containers[0]
        placement = place(absolute, container, workload, ctx.config)
        if placement.persistent is not False:
            continue
        yield Problem.at("SPK301", where,
                         f"the job's log file {text!r} (#SBATCH {option}) lands {placement.reason}: after a failure, a "
                         f"preemption or a requeue the log is gone with the node — write it under a shared "
                         f"filesystem, or list the path in persistent_paths if it is persistent", key=f"{option}:{text}")


REMOTE_ROLES = frozenset((OUTPUT, CKPT_LOCATION))


def _persistent_anywhere(workload: Workload, document: Document, ctx: CheckContext) -> bool:
    """A PVC, Run:ai PVC/data source or NFS is mounted, the run writes to an object store, or under persistent_paths."""
    if workload.persistent_mount_paths or any(volume.persistent for volume in workload.volumes):
        return True
    if storage_unknown(workload):
        return True
    for container in workload.main_containers():
        for mount in container.mounts:
            if mount.volume is None or mount.volume.persistent:
                return True  # undeclared volume: cannot tell, stay quiet
    if any(setting.roles & REMOTE_ROLES and isinstance(setting.value, str) and is_remote(setting.value)
           for setting in run_view(workload, document, ctx.project).settings):
        return True  # it writes its outputs or checkpoints to an object store (gs://, s3://), which the pod cannot lose
    if workload.platform.platform_paths:
        view = run_view(workload, document, ctx.project)
        if any((absolute := resolve(use.text, use.cwd)) is not None and platform_managed(absolute, workload)
               for use in view.uses):
            return True  # it writes where the platform collects (Katib's metrics folder)
    if ctx.config.persistent_paths:
        view = run_view(workload, document, ctx.project)
        for use in view.uses:
            absolute = resolve(use.text, use.cwd)
            if absolute is not None and any(under(absolute, prefix) for prefix in ctx.config.persistent_paths):
                return True
    return False


def durable_mounts(workload: Workload) -> Iterator[Mount]:
    """emptyDir/hostPath mounts named like checkpoints, outputs, logs or data (not /dev/shm, not caches)."""
    seen: set[tuple[int, int]] = set()
    for container in workload.main_containers():
        for mount in container.mounts:
            volume = mount.volume
            path = str(mount.path.value).strip()
            if volume is None or volume.source not in EPHEMERAL_SOURCES or not path:
                continue
            normal = posixpath.normpath(path)
            parts = [part for part in normal.split("/") if part]
            if normal == "/dev/shm" or not parts or any(CACHE_NAME.match(part) for part in parts):
                continue
            if not any(DURABLE_NAME.match(part) for part in parts):
                continue
            if (mount.path.line, mount.path.column) not in seen:
                seen.add((mount.path.line, mount.path.column))
                yield mount


@check("SPK301", "SPK302", "SPK303", scope="workload")
def output_storage(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Outputs on ephemeral places (SPK301), no persistent volume (SPK302), durable-named emptyDir (SPK303)."""
    if not workload.is_training:
        return
    ephemeral = ephemeral_outputs(workload, document, ctx)
    for item in ephemeral:
        yield ephemeral_problem(item, workload)
    if not workload.platform.mounts_volumes:
        yield from slurm_log_files(workload, ctx, {(item.use.report_at.line, item.use.report_at.column)
                                                   for item in ephemeral})
        return  # no volumes to mount: SPK302 and SPK303 do not apply
    covered = {posixpath.normpath(str(item.placement.mount.path.value)) for item in ephemeral
               if item.placement.mount is not None}
    for mount in durable_mounts(workload):
        if posixpath.normpath(str(mount.path.value)) in covered:
            continue
        volume = mount.volume
        assert volume is not None
        lost = "deleted with the pod" if volume.source == "emptyDir" else \
            "left on one node, where a rescheduled pod will not find it"
        runai = f" (Run:ai: --existing-pvc …,path={mount.path.value})" if workload.on_runai() else ""
        yield Problem.at("SPK303", mount.path,
                         f"{volume.source} volume {volume.name!r} is mounted at {mount.path.value!r}, a path named "
                         f"for data that must last, but its content is {lost} — back it with a "
                         f"persistentVolumeClaim{runai}",
                         key=f"{volume.source}:{mount.path.value}")
    if ephemeral or _persistent_anywhere(workload, document, ctx):
        return
    how = ("mount a PVC (Run:ai: --existing-pvc claimname=…,path=/ckpt, or a data source)" if workload.on_runai()
           else "mount a persistentVolumeClaim (e.g. at /ckpt)")
    yield Problem.at("SPK302", workload.anchor,
                     f"this training workload {workload.purpose_reason or 'trains'} but mounts no "
                     f"persistent volume: every checkpoint, log and result it writes is lost when the pod stops, is "
                     f"preempted or retried — {how} and write there, or declare the storage a template attaches in "
                     f"persistent_paths",
                     severity=no_volume_severity(workload), key="no-persistent-volume")


def no_volume_severity(workload: Workload) -> str:
    """SPK302 is an error when the loss costs something: GPUs held, preemption or retries; else a warning."""
    from spikelint.checks.checkpoint.resume import retry_count

    total = workload.gpus_total
    gpus = total is not None and isinstance(total.value, (int, float)) and total.value > 0
    return "error" if gpus or workload.preemptible or retry_count(workload) > 0 else "warning"
