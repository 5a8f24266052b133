"""The summary (``summary.json``, ``--format json``) and its text rendering (no torch here).

``summary.json`` follows ``schemas/smoke-summary.v1.schema.json``; a setup error produces a
summary of the same shape so that a CI job can always read the verdict from one place.
"""

from __future__ import annotations

import json
from typing import Any

from spikelint import __version__

SCHEMA_NAME = "smoke-summary.v1.schema.json"
EXIT_CODES = {"verified": 0, "state_differs": 1, "resume_failed": 1, "setup_error": 2, "incomplete": 3}
NOT_AVAILABLE = "not available"
HEADLINES = {
    "verified": "VERIFIED: every resumed run equals the uninterrupted run bit for bit",
    "state_differs": "STATE DIFFERS: a resumed run does not reproduce the uninterrupted run",
    "resume_failed": "RESUME FAILED: a run could not be resumed from its checkpoints",
    "setup_error": "SETUP ERROR: the smoke test could not run",
    "incomplete": "INCOMPLETE: every variant run passed, but the plan could not test everything the job has",
}


def empty_measurements() -> dict[str, Any]:
    return {
        "total_wall_s": None,
        "startup": None,
        "step_time_s": None,
        "data_wait_s": NOT_AVAILABLE,
        "compute_s": None,
        "peak_host_memory_bytes": None,
        "peak_device_memory_bytes": NOT_AVAILABLE,
        "gpu_utilisation": NOT_AVAILABLE,
        "checkpoint_size_bytes": None,
        "checkpoint_write_s": None,
        "checkpoint_read_s": None,
        "sigterm": None,
    }


def base_summary(verdict: str, message: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "tool": "spikelint smoke",
        "spikelint_version": __version__,
        "run_id": None,
        "run_dir": None,
        "verdict": verdict,
        "exit_code": EXIT_CODES[verdict],
        "message": message,
        "device": None,
        "job": None,
        "plan": None,
        "storage": None,
        "variants": [],
        "differences": [],
        "measurements": empty_measurements(),
        "warnings": [],
        "errors": [],
        "checkpoints_kept": None,
    }


def setup_error_summary(message: str) -> dict[str, Any]:
    summary = base_summary("setup_error", message)
    summary["errors"] = [message]
    return summary


def render_json(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2) + "\n"


def _seconds(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return NOT_AVAILABLE
    if value < 1:
        return f"{value * 1000:.2f} ms"
    return f"{value:.2f} s"


def _bytes(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return NOT_AVAILABLE
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{int(value)} B"


def _stats(stats: Any) -> str:
    if not isinstance(stats, dict):
        return NOT_AVAILABLE
    return f"median {_seconds(stats.get('median'))}, max {_seconds(stats.get('max'))}"


def _shared_notes(variants: list[dict[str, Any]]) -> list[str]:
    """Notes every variant carries (the same volatile leaves, the same Python values): said once."""
    if len(variants) < 2:
        return []
    first = variants[0].get("notes", [])
    return [note for note in first if all(note in variant.get("notes", []) for variant in variants[1:])]


def _variant_lines(variant: dict[str, Any], shared: list[str] | None = None) -> list[str]:
    lines = [f"  {variant['verdict']:<14}{variant['name']}: {variant['message']}"]
    for refused in variant.get("refused_checkpoints", []):
        lines.append(f"{'':16}refused {refused.get('path')}: {refused.get('reason')}")
    for temporary in variant.get("removed_temporaries", []):
        lines.append(f"{'':16}removed torn temporary file {temporary}")
    sigterm = variant.get("sigterm")
    if sigterm and sigterm.get("signal_to_exit_s") is not None:
        ended = (variant.get("interrupted_exit") or ["exit 143"])[0]  # how the process really ended
        lines.append(
            f"{'':16}after SIGTERM: {ended}, {_seconds(sigterm['signal_to_exit_s'])} later "
            f"(checkpoint write {_seconds(sigterm.get('checkpoint_write_s'))})"
        )
    for note in variant.get("notes", []):
        if note not in (shared or []):
            lines.append(f"{'':16}note: {note}")
    return lines


def _observed_lines(plan: dict[str, Any]) -> list[str]:
    """``--cmd``: which lines were steps, the epoch, and the checkpoint layout, as the reference showed them."""
    lines = []
    step_lines = plan.get("step_lines")
    if step_lines and step_lines.get("examples"):
        lines.append(f"steps:   read from lines such as {step_lines['examples'][0]!r}")
        if step_lines.get("not_steps_count"):
            lines.append(f"         {step_lines['not_steps_count']} line(s) that name a step were not read as steps, "
                         f"such as {step_lines['not_steps'][0]!r}")
    if plan.get("steps_per_epoch"):
        crossed = "crossed" if plan.get("epoch_boundary_crossed") else "NOT crossed"
        probed = (f" (found by running the command to step {plan['epoch_probed_to_step']})"
                  if plan.get("epoch_probed_to_step") else "")
        lines.append(f"epochs:  {plan['steps_per_epoch']} steps each{probed}; an epoch boundary was {crossed} "
                     "after a resume in a later epoch")
    seen = plan.get("checkpoints_seen")
    if seen:
        if seen.get("layout") == "single":
            lines.append(f"files:   one checkpoint kept ({', '.join(seen['complete'][:3])}): nothing to fall back to")
        if seen.get("partial"):
            lines.append(f"         left out as partial writes: {', '.join(seen['partial'][:5])}")
    return lines


def headline(summary: dict[str, Any]) -> str:
    """The verdict's sentence; where some variants could not resume and others resumed with different
    state, both counts (the worse verdict alone read as if no run had resumed)."""
    verdicts = [variant.get("verdict") for variant in summary.get("variants", [])]
    failed, differ = verdicts.count("resume_failed"), verdicts.count("state_differs")
    if summary["verdict"] == "resume_failed" and failed and differ:
        return (f"RESUME FAILED in {failed} of {len(verdicts)} variants, and in {differ} more a resumed run does not "
                "reproduce the uninterrupted run")
    return HEADLINES[summary["verdict"]]


def render_text(summary: dict[str, Any]) -> str:
    """The human report: verdict first, then what was tried, then the measurements."""
    lines = [f"spikelint smoke: {headline(summary)}", f"  {summary['message']}"]
    device = summary.get("device")
    if device:
        name = f" ({device['name']})" if device.get("name") else ""
        lines.append(f"device:  {device.get('type')}{name}, {device.get('processes')} process(es) per run")
    if summary.get("job"):
        lines.append(f"job:     {summary['job']}")
    plan = summary.get("plan")
    if plan:
        lines.append(
            f"plan:    {plan['steps']} steps, checkpoint every {plan['checkpoint_every']}, "
            f"interruption at step {plan['kill_at_step']}, seed {plan['seed']}"
        )
        for skipped in plan.get("not_applicable", []):
            lines.append(f"         {skipped['name']} not run: {skipped['reason']}")
        lines += _observed_lines(plan)
    storage = summary.get("storage")
    if storage:
        lines.append(
            f"storage: {storage['path']}: {storage['fstype']} = {storage['storage_class']} "
            f"({storage['meaning']}), {_bytes(storage['free_bytes'])} free"
        )
    if summary["variants"]:
        lines.append("variants:")
        shared = _shared_notes(summary["variants"])
        for variant in summary["variants"]:
            lines += _variant_lines(variant, shared)
        lines += [f"  note (every variant): {note}" for note in shared]
    measurements = summary["measurements"]
    if measurements.get("step_time_s"):
        step = measurements["step_time_s"]
        wait = measurements["data_wait_s"]
        split = (
            f"; data wait {_seconds(wait)}, compute {_seconds(measurements['compute_s'])} in total"
            if isinstance(wait, (int, float))
            else ""
        )
        lines.append("measurements:")
        lines.append(f"  step time        median {_seconds(step['median'])}, p95 {_seconds(step['p95'])}{split}")
        lines.append(
            f"  checkpoint       {_bytes(measurements['checkpoint_size_bytes'])} per file; write "
            f"{_stats(measurements['checkpoint_write_s'])}; read {_stats(measurements['checkpoint_read_s'])}"
        )
        sigterm = measurements.get("sigterm")
        if sigterm:
            verdict = "fits" if sigterm["fits_grace_period"] else "does NOT fit"
            lines.append(
                f"  SIGTERM save     {_seconds(sigterm['checkpoint_write_s'])}, exit after "
                f"{_seconds(sigterm['signal_to_exit_s'])}: {verdict} the {sigterm['grace_period_s']:g} s grace period"
            )
        lines.append(
            f"  memory           peak host {_bytes(measurements['peak_host_memory_bytes'])}, "
            f"peak device {_bytes(measurements['peak_device_memory_bytes'])}"
        )
        resume = measurements.get("resume_device_memory")
        if isinstance(resume, dict):
            lines.append(
                f"  resume memory    state of {_bytes(resume['state_bytes'])} loaded onto the device: peak "
                f"{_bytes(resume['peak_during_load_bytes'])}, {_bytes(resume['allocated_before_bytes'])} before"
            )
        utilisation = measurements["gpu_utilisation"]
        if isinstance(utilisation, dict):
            utilisation = (
                f"mean {utilisation['mean_percent']}%, max {utilisation['max_percent']}% "
                f"({utilisation['samples']} samples, {utilisation['source']})"
            )
        lines.append(f"  GPU utilisation  {utilisation}")
        startup = measurements.get("startup") or {}
        lines.append(
            f"  start-up         import torch {_seconds(startup.get('import_torch_s'))}, deterministic mode "
            f"{_seconds(startup.get('deterministic_mode_s'))}, per process {_stats(startup.get('process_start_s'))} "
            f"({startup.get('processes')} processes)"
        )
    if measurements.get("total_wall_s") is not None:
        lines.append(f"  wall time        {_seconds(measurements['total_wall_s'])} in total")
    for warning in summary["warnings"]:
        lines.append(f"warning: {warning}")
    for error in summary["errors"]:
        lines.append(f"error:   {error}")
    if summary.get("run_dir"):
        lines.append(f"run folder: {summary['run_dir']}")
    return "\n".join(lines) + "\n"
