"""The :class:`~spikelint.model.Platform` record of each form: how messages name the object and its settings.

Every platform-specific word a check uses comes from here, so the checks never ask which platform a workload
came from, and a new form is one more function.
"""

from __future__ import annotations

from spikelint.model import BASELINE_ANNOTATION
from spikelint.model import Platform

KUBEFLOW_GROUP = "kubeflow.org/"
SLURM_SHORT_GRACE = ("#SBATCH --signal gives the {reason} job {grace}s of notice before its time limit, below "
                     "min_grace_period_seconds ({minimum}): the job is killed before a checkpoint can be written — "
                     "signal it at least {minimum}s ahead (--signal=B:USR1@{suggested}) and save on that signal")


def kubernetes_platform(kind: str, api_version: str, line_range: tuple[int, int], *, storage_unknown: bool = False,
                        platform_paths: tuple[str, ...] = (), entrypoint: str = "") -> Platform:
    """A Kubernetes object: Kubeflow jobs keep their run settings in ``spec.runPolicy``."""
    prefix = "spec.runPolicy." if api_version.startswith(KUBEFLOW_GROUP) else ""
    return Platform(form="kubernetes", label=kind, subject=kind or "workload", api_version=api_version,
                    runai="run.ai" in api_version, line_range=line_range, settings_prefix=prefix,
                    deadline_setting=f"{prefix}activeDeadlineSeconds", storage_unknown=storage_unknown,
                    platform_paths=platform_paths, entrypoint=entrypoint)


def runai_crd_platform(kind: str, api_version: str, workload_class: str, line_range: tuple[int, int]) -> Platform:
    return Platform(form="runai", label=kind, api_version=api_version, workload_class=workload_class, runai=True,
                    line_range=line_range)


def runai_rest_platform(kind: str, workload_class: str, line_range: tuple[int, int], *,
                        storage_unknown: bool) -> Platform:
    """A REST body: its ``assets`` name storage the body does not show."""
    return Platform(form="runai-rest", label=f"Run:ai {kind} workload", workload_class=workload_class, runai=True,
                    line_range=line_range, storage_unknown=storage_unknown)


def runai_cli_platform(kind: str, workload_class: str, line_range: tuple[int, int], *,
                       storage_unknown: bool) -> Platform:
    """A ``runai … submit`` command: a template it names may attach storage."""
    return Platform(form="runai-cli", label=f"Run:ai {kind} workload", workload_class=workload_class, runai=True,
                    line_range=line_range, working_dir_setting="--working-dir", storage_unknown=storage_unknown)


def slurm_platform(line_range: tuple[int, int], requeue_by: str | None, requeue_line: int | None = None,
                   command_line: bool = False) -> Platform:
    """A batch script: files live on the cluster's filesystems, stdout goes to a file, a retry is a requeue.
    ``command_line``: the job's options are ``sbatch``'s own (``sbatch --wrap``), not ``#SBATCH`` lines."""
    option = "sbatch " if command_line else "#SBATCH "
    where = f", line {requeue_line}" if requeue_line else ""
    return Platform(form="slurm", label="Slurm job", subject="job", line_range=line_range,
                    deadline_setting=f"{option}--time",
                    deadline_fix="sbatch's --time" if command_line else "#SBATCH --time",
                    held_without_gpus="its nodes",
                    held_until="until the partition's time limit", short_grace=SLURM_SHORT_GRACE,
                    durable_storage="a shared filesystem",
                    ephemeral_fix="write under a shared filesystem (Lustre, NFS, GPFS) instead",
                    no_retries=f"drop --requeue ({option}--no-requeue)",
                    baseline_fix=f"name it in the job's comment: {option}--comment={BASELINE_ANNOTATION}:<run-id>",
                    replica_word="nodes",
                    retried=f"is requeued ({requeue_by or option + '--requeue'}{where})",
                    mounts_volumes=False, node_local_only=True, stdout_kept=True)
