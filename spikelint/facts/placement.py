"""Where a path lands: resolved against the working directory, then looked up in the mounts.

A path is persistent when a configured persistent path, a persistent volume or a persistent
mount holds it; otherwise the reason names what discards it (emptyDir, the container's own
filesystem, a Slurm node's local disk), or says it cannot be told from the file.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING
from typing import Iterable
from typing import NamedTuple

from spikelint.model import Container
from spikelint.model import Mount
from spikelint.model import Workload
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.runconfig import is_remote

if TYPE_CHECKING:
    from spikelint.config import Config

TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/run")
# a Slurm compute node's own disk: not shared with the other nodes, wiped when the job ends
NODE_LOCAL = ("/tmp", "/var/tmp", "/dev/shm", "/run")
NODE_LOCAL_STEMS = ("/local", "/scratch/local", "/raid/local")  # /local, /local_scratch, /raid/local0 …
WORKDIR_UNKNOWN = "\x01"  # the working directory was changed to something that cannot be resolved


def is_relative(text: str) -> bool:
    """``out/run``, ``./ckpt`` — not ``/abs``, ``~/x``, ``$VAR/x`` (unknown) or ``s3://…``."""
    stripped = text.strip()
    if not stripped or stripped.startswith(("/", "~", UNRESOLVED, "$", "`", "{")):
        return False
    return not is_remote(stripped)


def resolve(text: str, cwd: str | None) -> str | None:
    """An absolute, normalised path (its known prefix); ``None`` when it cannot be known."""
    stripped = text.strip()
    if not stripped or stripped.startswith((UNRESOLVED, "~", "$", "`")):
        return None
    if not stripped.startswith("/"):
        if cwd is None or cwd.startswith(WORKDIR_UNKNOWN) or UNRESOLVED in cwd:
            return None
        stripped = posixpath.join(cwd, stripped)
    if UNRESOLVED in stripped:
        stripped = stripped[: stripped.index(UNRESOLVED)]
        stripped = stripped[: stripped.rfind("/") + 1] or "/"
    return posixpath.normpath(stripped)


def under(path: str, prefix: str) -> bool:
    prefix = posixpath.normpath(prefix) if prefix else prefix
    if not prefix:
        return False
    if prefix == "/":
        return True
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class Placement(NamedTuple):
    """Where an absolute path lands: persistent or not (``None``: cannot tell), and why."""

    persistent: bool | None
    path: str
    mount: Mount | None
    reason: str


VOLUME_REASONS = {
    "emptyDir": "on emptyDir volume {name!r} (mounted at {at}), which is deleted with the pod",
    "hostPath": "on hostPath volume {name!r} (mounted at {at}), which stays on one node while a rescheduled pod "
                "lands on another",
    "ephemeral-pvc": "on ephemeral PVC {name!r} (mounted at {at}), which is deleted with the workload",
    "configMap": "on configMap volume {name!r} (mounted at {at}), which is read-only",
    "secret": "on secret volume {name!r} (mounted at {at}), which is read-only",
    "git": "on git volume {name!r} (mounted at {at}), a checkout that is not kept",
}


def mount_for(path: str, mounts: Iterable[Mount]) -> Mount | None:
    """The mount holding ``path`` (longest mount path prefix)."""
    best: Mount | None = None
    best_length = -1
    for mount in mounts:
        mount_path = str(mount.path.value).strip()
        if not mount_path.startswith("/"):
            continue
        normal = posixpath.normpath(mount_path)
        if under(path, normal) and len(normal) > best_length:
            best, best_length = mount, len(normal)
    return best


def node_local(path: str) -> str | None:
    """The node-local folder an absolute path lies under (``/tmp``, ``/dev/shm``, ``/local*``, ``/raid/local*``)."""
    found = next((prefix for prefix in NODE_LOCAL if under(path, prefix)), None)
    if found is not None:
        return found
    for stem in NODE_LOCAL_STEMS:
        if path.startswith(stem):
            return "/" + path.lstrip("/").split("/")[0] if stem == "/local" else \
                stem.rsplit("/", 1)[0] + "/" + path[len(stem.rsplit("/", 1)[0]) + 1:].split("/")[0]
    return None


def place(path: str, container: Container, workload: Workload, config: Config) -> Placement:
    """Is the absolute ``path`` persistent for this container?"""
    for prefix in config.persistent_paths:
        if under(path, prefix):
            return Placement(True, path, None, f"configured persistent path {prefix}")
    if workload.platform.node_local_only:
        local = node_local(path)
        if local is None:
            return Placement(None, path, None, "on the cluster's filesystem (shared or not: the script does not say)")
        return Placement(False, path, None, f"in {local} on the compute node's local disk, which the other nodes do "
                                            f"not see and which is wiped when the job ends or is requeued elsewhere")
    mount = mount_for(path, container.mounts)
    if mount is not None:
        return _mount_placement(path, mount)
    for mount_path in workload.persistent_mount_paths:
        if isinstance(mount_path.value, str) and under(path, mount_path.value):
            return Placement(True, path, None, f"persistent mount {mount_path.value}")
    if storage_unknown(workload):
        return Placement(None, path, None, "storage attached by a data source or template the file does not show")
    temporary = next((prefix for prefix in TEMPORARY if under(path, prefix)), None)
    if temporary is not None:
        return Placement(False, path, None, f"in {temporary} inside the container, which is discarded with the pod")
    return Placement(False, path, None, "in the container's own filesystem (no volume is mounted there), which is "
                                         "discarded with the pod")


def _mount_placement(path: str, mount: Mount) -> Placement:
    volume = mount.volume
    at = str(mount.path.value)
    if volume is None:
        return Placement(None, path, mount, f"volume mounted at {at} (not declared in this file)")
    if volume.persistent:
        return Placement(True, path, mount, f"{volume.source} {volume.claim or volume.name!r}")
    if posixpath.normpath(at) == "/dev/shm":
        return Placement(False, path, mount, "in shared memory (/dev/shm), which is cleared with the pod")
    template = VOLUME_REASONS.get(volume.source, "on {source} volume {name!r} (mounted at {at}), which does not "
                                                 "outlive the pod")
    return Placement(False, path, mount, template.format(name=volume.name, source=volume.source, at=at))


def storage_unknown(workload: Workload) -> bool:
    """Storage may be attached by something the file only names: REST assets, a Run:ai template, a data source id."""
    if workload.platform.storage_unknown:
        return True
    return any(volume.source == "datasource" and volume.persistent for volume in workload.volumes)
