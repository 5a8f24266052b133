"""What ``spikelint init`` sees in a tree to propose: persistent mount paths and image registries.

The workloads of the tree's manifests, Run:ai files and launch/Slurm scripts are read with the
adapters (the same model the rules use): mounts backed by a PVC, NFS or a CSI volume, and mounts
named for a shared cluster filesystem (Lustre, FSx, GPFS, Weka, BeeGFS), are proposed as
``persistent_paths``; the registries of the images they run as ``allowed_registries``.  Both are
written commented out, for the team to confirm: a proposal, never a policy taken from the tree.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Iterable
from typing import NamedTuple

from spikelint.model import FileKind
from spikelint.model import Workload

SHARED_FILESYSTEMS = ("lustre", "fsx", "gpfs", "weka", "beegfs", "nfs", "efs", "filestore")
READ_KINDS = (FileKind.YAML, FileKind.JSON, FileKind.SHELL)
MAX_FILES = 2000
MAX_BYTES = 1 << 20


class Observed(NamedTuple):
    persistent_paths: tuple[str, ...]
    registries: tuple[str, ...]


def observe(folder: Path, files: Iterable[str]) -> Observed:
    """Persistent mount paths and registries of the workloads in ``files`` (relative to ``folder``)."""
    from spikelint.adapters import workloads_in
    from spikelint.config import Config
    from spikelint.documents import parse_text
    from spikelint.files import detect_kind
    from spikelint.model import SourceFile

    config = Config()
    paths: set[str] = set()
    registries: set[str] = set()
    read = 0
    for name in files:
        if read >= MAX_FILES:
            break
        path = folder / name
        try:
            if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        kind = detect_kind(name, text[:128])
        if kind not in READ_KINDS:
            continue
        read += 1
        try:
            document = parse_text(SourceFile(name, str(path), kind), text)
            workloads = workloads_in(document, config)
        except Exception:  # noqa: BLE001 - a file init cannot read proposes nothing; check reports it
            continue
        for workload in workloads:
            paths.update(_persistent_mounts(workload))
            registries.update(_registries(workload))
    return Observed(tuple(sorted(paths)), tuple(sorted(registries)))


def _persistent_mounts(workload: Workload) -> set[str]:
    found: set[str] = set()
    for container in workload.containers:
        for mount in container.mounts:
            path = str(mount.path.value).strip()
            if not path.startswith("/") or "$" in path or "{" in path:
                continue
            persistent = mount.volume is not None and mount.volume.persistent
            named = any(word in part.lower() for part in path.split("/") for word in SHARED_FILESYSTEMS)
            if (persistent or named) and not mount.read_only:
                found.add(posixpath.normpath(path))
    return found


def _registries(workload: Workload) -> set[str]:
    from spikelint.facts.images import ImageSyntaxError
    from spikelint.facts.images import is_placeholder
    from spikelint.facts.images import is_unresolved
    from spikelint.facts.images import parse_image

    found: set[str] = set()
    for container in workload.containers:
        text = str(container.image.value) if container.image is not None else ""
        if not text or is_unresolved(text) or is_placeholder(text):
            continue
        try:
            found.add(parse_image(text).registry)
        except ImageSyntaxError:
            continue
    return found


def proposal_lines(observed: Observed) -> list[str]:
    """The commented ``persistent_paths``/``allowed_registries`` lines of the starter file."""
    lines = ["# Mount prefixes that are persistent even where the spec does not show the volume",
             "# (a Run:ai data source, storage a Helm template attaches, a cluster filesystem):"]
    if observed.persistent_paths:
        lines.append("# seen in this tree (PVC, NFS and shared-filesystem mounts) — confirm, then uncomment:")
        lines.append("# persistent_paths: [" + ", ".join(json.dumps(path) for path in observed.persistent_paths) + "]")
    else:
        lines.append('# persistent_paths: ["/data", "/ckpt"]')
    lines.append("")
    lines.append("# SPK103: images must come from these registries.")
    if observed.registries:
        lines.append("# seen in this tree's workloads — keep the ones the team trusts, then uncomment:")
        lines.append("# allowed_registries: [" + ", ".join(json.dumps(host) for host in observed.registries) + "]")
    else:
        lines.append('# allowed_registries: ["registry.example.org"]')
    return lines
