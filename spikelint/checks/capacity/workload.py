"""SPK701–SPK704: how much of the cluster a workload takes, and for how long."""

from __future__ import annotations

from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.model import BASELINE_ANNOTATION
from spikelint.model import Document
from spikelint.model import Located
from spikelint.model import Problem
from spikelint.model import Workload

def workload_label(workload: Workload) -> str:
    """``Job 'bert-ft'`` / ``Run:ai training workload 'sft'`` for messages."""
    name = f" {workload.name.value!r}" if workload.name is not None and workload.name.value else ""
    return f"{workload.platform.label or workload.kind}{name}"


def has_baseline(workload: Workload) -> bool:
    where = workload.annotations.get(BASELINE_ANNOTATION)
    return where is not None and str(where.value).strip() != ""


def job_field(workload: Workload, name: str, plain_place: str) -> str:
    """Where to set ``name``: Kubeflow jobs keep it in ``spec.runPolicy``, other kinds at ``plain_place``."""
    if workload.platform.settings_prefix:
        return f"{workload.platform.settings_prefix}{name}"
    return plain_place


def gpu_breakdown(workload: Workload) -> str:
    """``4 pods × 8 GPUs`` (``2 nodes × 4 GPUs``) when several replicas share the request, else empty."""
    groups = [(container.replicas, container.gpus.value) for container in workload.containers
              if container.gpus is not None and container.role in ("main", "sidecar") and container.replicas > 0]
    if len(groups) == 1 and groups[0][0] > 1:
        return f" ({groups[0][0]} {workload.platform.replica_word} × {groups[0][1]:g} GPUs)"
    if len(groups) > 1:
        return " (" + " + ".join(f"{pods} × {gpus:g}" for pods, gpus in groups) + ")"
    return ""


@check("SPK701", scope="workload")
def large_gpu_request(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """More GPUs than ``max_gpus`` without naming the one-GPU baseline run."""
    limit = ctx.config.max_gpus
    total = workload.gpus_total
    if limit is None or total is None or not isinstance(total.value, (int, float)) or total.value <= limit:
        return
    if has_baseline(workload):
        return
    yield Problem.at("SPK701", total,
                     f"{workload_label(workload)} requests {workload.accelerators_requested()} in total"
                     f"{gpu_breakdown(workload)}, "
                     f"more than max_gpus ({limit:g}), and names no one-GPU baseline run — run it on "
                     f"one GPU first and {workload.platform.baseline_fix}",
                     key=f"gpus:{workload_label(workload)}:{total.value:g}")


@check("SPK702", scope="workload")
def no_cleanup_ttl(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A finished Job/JobSet/PyTorchJob lingers without ``ttlSecondsAfterFinished``."""
    if not workload.supports_ttl or not workload.is_training or workload.ttl is not None:
        return
    where = job_field(workload, "ttlSecondsAfterFinished", "spec.ttlSecondsAfterFinished")
    yield Problem.at("SPK702", workload.anchor,
                     f"{workload_label(workload)} has no ttlSecondsAfterFinished, so the finished object and its "
                     f"pods linger — set {where} (e.g. 86400)", key=f"ttl:{workload_label(workload)}")


@check("SPK703", scope="workload")
def short_grace_period(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A grace period too short to write a checkpoint on SIGTERM."""
    grace = workload.grace_period
    if grace is None or not (workload.preemptible or workload.is_training):
        return
    untrapped = workload.slurm.untrapped_signal if workload.slurm is not None else None
    if untrapped is not None:
        yield Problem.at("SPK703", untrapped,
                         f"#SBATCH --signal={untrapped.value} sends the notice to the batch shell, which has no trap for "
                         f"it: bash takes the signal's default action and exits, so the job ends "
                         f"{grace.value:g}s early without a checkpoint — add a trap that tells the training process "
                         f"to save (and `scontrol requeue $SLURM_JOB_ID`), or drop `B:` so the job steps get the "
                         f"signal and the training process saves on it", key=f"untrapped:{untrapped.value}")
        return
    if not isinstance(grace.value, (int, float)) or isinstance(grace.value, bool):
        return
    minimum = ctx.config.min_grace_period_seconds
    if grace.value >= minimum:
        return
    reason = "preemptible" if workload.preemptible else "training"
    yield Problem.at("SPK703", grace,
                     workload.platform.short_grace.format(grace=f"{grace.value:g}", reason=reason, minimum=minimum,
                                                          suggested=max(minimum, 90)),
                     key=f"grace:{grace.value:g}")


@check("SPK704", scope="workload")
def no_active_deadline(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A Kubernetes training job that can hold its GPUs forever when it hangs."""
    if not workload.supports_deadline or not workload.is_training or workload.deadline is not None:
        return
    platform = workload.platform
    requested = workload.accelerators_requested()
    held = f"its {requested}" if requested else platform.held_without_gpus
    unlimited = workload.slurm is not None and workload.slurm.time_written  # written, but UNLIMITED or infinite
    missing = "an unlimited --time" if unlimited else f"no {platform.deadline_setting}"
    yield Problem.at("SPK704", workload.anchor,
                     f"{workload_label(workload)} has {missing}, so a hung run holds {held} {platform.held_until} "
                     f"— set {platform.deadline_fix} a margin above the expected run time",
                     key=f"deadline:{workload_label(workload)}")


@check("SPK705", scope="workload")
def ignored_sbatch_directive(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """An ``#SBATCH`` line after the first command: sbatch has stopped reading directives there."""
    ignored = workload.slurm.ignored if workload.slurm is not None else ()
    first_command = _first_command_line(document, workload)
    for where in ignored:
        after = f" (the first command is on line {first_command})" if first_command else ""
        if where.column > 1 and (first_command is None or where.line < first_command):
            why = (f"{where.value} is indented: sbatch reads a directive only where #SBATCH starts the line, so "
                   "the job runs without this setting — remove the spaces before #SBATCH")
        else:
            why = (f"{where.value} comes after the first command of the batch script{after}: sbatch stops "
                   f"reading #SBATCH directives at the first command, so the job runs without this setting "
                   f"— move the line up into the directive block at the top of the script")
        yield Problem.at("SPK705", where, why,
                         severity="error" if workload.is_training or _requests_gpus(where) else "info",
                         key=f"late:{where.value}")


def _requests_gpus(where: Located) -> bool:
    """The ignored line asks for GPUs, read as the Slurm adapter reads a directive."""
    from spikelint.adapters.slurm import directive_words
    from spikelint.adapters.slurm import gpu_request
    from spikelint.adapters.slurm import read_options

    return gpu_request(read_options(directive_words(str(where.value), where.line)))[1] is not None


def _first_command_line(document: Document, workload: Workload) -> int | None:
    first, last = workload.platform.line_range
    for number in range(first, min(last, len(document.lines)) + 1):
        stripped = document.lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            return number
    return None
