"""How a launcher's own options are read, to find the program it starts: ``srun -N2 --mpi=pmix bash run.sh``
runs ``bash run.sh``, ``mpirun -np 8 --mca btl tcp python train.py`` runs ``python train.py``.

Both the purpose of a workload (:mod:`spikelint.adapters.entry_points`) and the settings of the script
it runs (:mod:`spikelint.facts.paths`) unwrap launchers the same way, from these tables.
"""

from __future__ import annotations

import posixpath
from typing import Sequence

MPI_LAUNCHERS = frozenset(("mpirun", "mpiexec", "orterun", "srun", "jsrun", "aprun", "ibrun", "prun",
                           "charmrun", "flux", "oshrun", "horovodrun", "ray"))

# options of wrappers and launchers that take a value (the value is not the program)
VALUE_OPTIONS = frozenset((
    "-n", "-np", "-N", "-c", "-H", "-x", "-p", "-u", "-w", "-t", "-k", "-s", "-e", "-o", "-i", "--hostfile",
    "--host", "-host", "-hostfile", "--map-by", "-map-by", "--bind-to", "-bind-to", "--mca", "-mca", "-x",
    "--nodes", "--ntasks", "--ntasks-per-node", "--gpus", "--gpus-per-node", "--cpus-per-task", "--partition",
    "--account", "--time", "--job-name", "--container-image", "--container-mounts", "--mpi", "--export",
    "--name", "--prefix", "--data-file", "--source", "--rcfile", "--omit", "--include", "--env", "--cwd",
    "--signal", "--kill-after", "-l", "--preserve-env", "--num_gpus", "--num_nodes", "--master_port",
    "--master_addr", "--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank", "--node-rank",
    "--rdzv_backend", "--rdzv-backend", "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id",
    "--max_restarts", "--max-restarts", "--config_file", "--config-file", "--num_processes", "--num_machines",
    "--machine_rank", "--main_process_ip", "--main_process_port", "--mixed_precision", "--deepspeed_config_file",
    "--launcher", "--include", "--exclude", "--num_cpu_threads_per_process", "-m", "--module", "--runtime-env",
    "--working-dir", "--address", "--submission-id", "--entrypoint-num-gpus", "--entrypoint-num-cpus"))

# ``srun``/``salloc`` options that take no value: every other option of theirs does (``--comment x``)
SRUN_FLAGS = frozenset((
    "--exclusive", "--overlap", "--pty", "--unbuffered", "--label", "--no-kill", "--kill-on-bad-exit", "--quiet",
    "--verbose", "--exact", "--whole", "--container-writable", "--container-readonly", "--container-remap-root",
    "--no-container-remap-root", "--container-mount-home", "--no-container-mount-home", "--container-entrypoint",
    "--no-container-entrypoint", "--overcommit", "--contiguous", "--hold", "--spread-job", "--use-min-nodes",
    "--disable-status", "--multi-prog", "--test-only", "--no-allocate", "--preserve-env", "--relative-env",
    "--help", "--usage", "--version", "--requeue", "--no-requeue", "-u", "-l", "-k", "-K", "-Q", "-v", "-O", "-H",
    "-X", "-Z", "-E", "-h", "-V", "-s"))
SLURM_LAUNCHERS = frozenset(("srun", "salloc"))
# MPI options that take two values: ``--mca btl_tcp_if_include eth0``
MPI_PAIR_OPTIONS = frozenset(("--mca", "-mca", "--gmca", "-gmca", "--pmixmca", "-pmixmca", "--prtemca", "-prtemca"))


def option_width(word: str, launcher: str) -> int:
    """How many words an option of ``launcher`` spans (itself and its values)."""
    if launcher in SLURM_LAUNCHERS:
        if "=" in word or word in SRUN_FLAGS:
            return 1
        return 1 if not word.startswith("--") and len(word) > 2 else 2  # ``-N2`` / ``-N 2``
    if word in MPI_PAIR_OPTIONS:
        return 3
    return 2 if word in VALUE_OPTIONS else 1


def first_program(words: list[str], launcher: str = "") -> int | None:
    """Index of the program an MPI/Slurm launcher runs: the first word that is not one of its options."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return index + 1 if index + 1 < len(words) else None
        if word.startswith("-"):
            index += option_width(word, launcher)
            continue
        if word in ("run", "submit", "job", "exec") and index == 0:
            index += 1  # ``flux run``, ``ray job submit``
            continue
        return index
    return None


def launched_index(words: Sequence[str]) -> int | None:
    """Index in ``words`` of the command an MPI or Slurm launcher starts (``srun -N2 bash run.sh`` -> 2), or
    ``None`` when ``words`` is no such launch."""
    if not words or posixpath.basename(words[0]) not in MPI_LAUNCHERS - {"horovodrun", "ray"}:
        return None
    start = first_program(list(words[1:]), posixpath.basename(words[0]))
    return None if start is None else start + 1
