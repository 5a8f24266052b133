"""Checks that fail fast (exit 2) before any training: device, checkpoint folder, storage class.

The storage class is a heuristic read from ``/proc/self/mountinfo``: it says whether a
checkpoint written there survives the pod or node going away, which is what a preemptible
GPU job needs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from typing import NamedTuple

MOUNTINFO = Path("/proc/self/mountinfo")
MIN_FREE_BYTES = 64 * 1024 * 1024

VOLATILE = "volatile"
EPHEMERAL = "ephemeral"
CONTAINER_LAYER = "container-layer"
SHARED = "shared"
LOCAL_DISK = "local-disk"
UNKNOWN = "unknown"

NOT_PERSISTENT = frozenset({VOLATILE, EPHEMERAL, CONTAINER_LAYER})

STORAGE_MEANING = {
    VOLATILE: "memory-backed (tmpfs/ramfs): lost when the machine or container stops",
    EPHEMERAL: "a Kubernetes emptyDir: deleted when the pod leaves the node",
    CONTAINER_LAYER: "the container's writable layer (overlay): lost with the container",
    SHARED: "shared network/parallel storage: survives a restart and a reschedule",
    LOCAL_DISK: "local disk: survives a process restart, not a reschedule to another node",
    UNKNOWN: "mount table not readable: storage class unknown",
}

SHARED_FILESYSTEMS = frozenset(
    {
        "nfs", "nfs4", "lustre", "gpfs", "ceph", "cephfs", "cifs", "smb3", "smbfs",
        "glusterfs", "beegfs", "wekafs", "panfs", "orangefs", "afs", "pvfs2",
    }
)


class PreflightError(Exception):
    """A condition that makes the smoke test meaningless on this machine (exit 2)."""


class MountEntry(NamedTuple):
    mount_point: str
    root: str
    fstype: str
    source: str


class StorageReport(NamedTuple):
    path: str
    mount_point: str | None
    fstype: str | None
    storage_class: str
    persistent: bool
    meaning: str
    free_bytes: int
    total_bytes: int


class DeviceChoice(NamedTuple):
    type: str  # "cpu" or "cuda"
    visible_devices: int  # visible CUDA devices (0 on cpu)


def unescape_mount_field(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as three octal digits."""
    out: list[str] = []
    index = 0
    while index < len(field):
        chunk = field[index : index + 4]
        if len(chunk) == 4 and chunk[0] == "\\" and chunk[1:].isdigit():
            out.append(chr(int(chunk[1:], 8)))
            index += 4
        else:
            out.append(field[index])
            index += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[MountEntry]:
    """``root`` is field 4, ``mount point`` field 5; fstype and source follow the ``-``."""
    entries: list[MountEntry] = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        separator = fields.index("-", 6)  # optional fields end at the first lone "-"
        after = fields[separator + 1 :]
        if not after:
            continue
        fstype = after[0]
        source = after[1] if len(after) > 1 else ""
        entries.append(
            MountEntry(
                mount_point=unescape_mount_field(fields[4]),
                root=unescape_mount_field(fields[3]),
                fstype=fstype,
                source=unescape_mount_field(source),
            )
        )
    return entries


def mount_for(path: str, entries: list[MountEntry]) -> MountEntry | None:
    """The mount that holds ``path``: the longest mount point that is a prefix (last wins on ties)."""
    best: MountEntry | None = None
    for entry in entries:
        point = entry.mount_point.rstrip("/") or "/"
        inside = path == point or path.startswith(point if point == "/" else point + "/")
        if inside and (best is None or len(point) >= len(best.mount_point.rstrip("/") or "/")):
            best = entry
    return best


def classify_mount(fstype: str, root: str) -> str:
    """The storage class of one mount (see ``STORAGE_MEANING``)."""
    base = fstype.split(".", 1)[0]
    if fstype in ("tmpfs", "ramfs"):
        return VOLATILE
    if "kubernetes.io~empty-dir" in root:
        return EPHEMERAL
    if fstype == "overlay":
        return CONTAINER_LAYER
    if fstype in SHARED_FILESYSTEMS or base == "fuse" or base == "fuseblk":
        return SHARED
    return LOCAL_DISK


def storage_report(folder: Path, mountinfo_text: str | None = None) -> StorageReport:
    path = os.path.realpath(folder)
    usage = os.statvfs(path)  # what an unprivileged writer may still use, and the whole size
    if mountinfo_text is None:
        try:
            mountinfo_text = MOUNTINFO.read_text(encoding="utf-8", errors="replace")
        except OSError:
            mountinfo_text = ""
    entry = mount_for(path, parse_mountinfo(mountinfo_text))
    storage_class = classify_mount(entry.fstype, entry.root) if entry else UNKNOWN
    return StorageReport(
        path=path,
        mount_point=entry.mount_point if entry else None,
        fstype=entry.fstype if entry else None,
        storage_class=storage_class,
        persistent=storage_class not in NOT_PERSISTENT,
        meaning=STORAGE_MEANING[storage_class],
        free_bytes=usage.f_bavail * usage.f_frsize,
        total_bytes=usage.f_blocks * usage.f_frsize,
    )


def check_writable(folder: Path) -> None:
    """Create the folder, then write, fsync and remove a probe file in it."""
    from spikelint.util.folders import file_in_the_way

    blocking = file_in_the_way(folder)
    if blocking is not None:
        raise PreflightError(f"checkpoint folder {folder}: {blocking} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".spikelint-write-probe-{os.getpid()}"
        with open(probe, "wb") as handle:
            handle.write(b"spikelint")
            handle.flush()
            os.fsync(handle.fileno())
        probe.unlink()
    except OSError as error:
        raise PreflightError(f"checkpoint folder {folder} is not writable: {error.strerror or error}") from None


def check_room(report: StorageReport, needed_bytes: int = MIN_FREE_BYTES) -> None:
    if report.free_bytes < needed_bytes:
        raise PreflightError(
            f"checkpoint folder {report.path} has {report.free_bytes / 2**20:.1f} MiB free; "
            f"the smoke test needs at least {needed_bytes / 2**20:.1f} MiB"
        )


def storage_warning(report: StorageReport) -> str | None:
    if report.persistent:
        return None
    return (
        f"checkpoint folder {report.path} is not persistent storage "
        f"({report.fstype}: {report.meaning}); a preempted or rescheduled job loses its checkpoints"
    )


def check_checkpoint_folder(folder: Path, require_persistent: bool) -> tuple[StorageReport, str | None]:
    """Writable, has room, and its storage class; a warning, or an error with ``--require-persistent``."""
    check_writable(folder)
    report = storage_report(folder)
    check_room(report)
    warning = storage_warning(report)
    if warning and require_persistent:
        raise PreflightError(f"{warning} (--require-persistent)")
    return report, warning


def cuda_unavailable_message(torch_version: str, built_with_cuda: str | None, visible: str | None) -> str:
    """Say why ``--device cuda`` cannot work: a CPU build, or no device visible to a CUDA build."""
    if built_with_cuda is None:
        return (
            f"--device cuda: this torch {torch_version} was built without CUDA (torch.version.cuda is None); "
            f"install a CUDA build of torch, or use --device cpu"
        )
    where = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
    return (
        f"--device cuda: torch {torch_version} was built with CUDA {built_with_cuda}, but no CUDA device is "
        f"visible{where}; check the driver (nvidia-smi) and the container's GPU request"
    )


def resolve_device(requested: str, nproc: int, torch: Any) -> DeviceChoice:
    """``auto`` means cuda when a device is visible.

    The availability check uses NVML (``PYTORCH_NVML_BASED_CUDA_CHECK=1``, set by the caller)
    so that the parent does not initialise CUDA before it forks the training processes.
    """
    available = bool(torch.cuda.is_available())
    count = int(torch.cuda.device_count()) if available else 0
    if requested == "cpu" or (requested == "auto" and not available):
        return DeviceChoice("cpu", 0)
    if not available:
        raise PreflightError(
            cuda_unavailable_message(str(torch.__version__), torch.version.cuda, os.environ.get("CUDA_VISIBLE_DEVICES"))
        )
    if nproc > count:
        raise PreflightError(f"--nproc {nproc} needs {nproc} CUDA devices; {count} visible")
    return DeviceChoice("cuda", count)
