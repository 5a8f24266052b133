from __future__ import annotations

import types
from pathlib import Path

import pytest

pytest.importorskip("torch")

from spikelint.smoke.preflight import CONTAINER_LAYER
from spikelint.smoke.preflight import EPHEMERAL
from spikelint.smoke.preflight import LOCAL_DISK
from spikelint.smoke.preflight import SHARED
from spikelint.smoke.preflight import VOLATILE
from spikelint.smoke.preflight import PreflightError
from spikelint.smoke.preflight import check_checkpoint_folder
from spikelint.smoke.preflight import check_room
from spikelint.smoke.preflight import classify_mount
from spikelint.smoke.preflight import cuda_unavailable_message
from spikelint.smoke.preflight import mount_for
from spikelint.smoke.preflight import parse_mountinfo
from spikelint.smoke.preflight import resolve_device
from spikelint.smoke.preflight import storage_report

MOUNTINFO = """\
22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
23 22 0:22 / /proc rw,relatime - proc proc rw
24 22 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=65536k
25 22 253:1 /var/lib/kubelet/pods/0f1e/volumes/kubernetes.io~empty-dir/scratch /scratch rw - ext4 /dev/nvme0n1 rw
26 22 0:40 / /mnt/shared rw,relatime master:3 - nfs4 server:/export rw,vers=4.1
27 22 0:41 / /mnt/lustre rw - lustre 10.0.0.1@tcp:/fs rw
28 22 0:42 / /mnt/s3 rw - fuse.s3fs s3fs rw
29 22 253:2 /pv/ckpt /checkpoints rw - xfs /dev/sdb rw
30 29 253:3 / /checkpoints/deep\\040dir rw - ext4 /dev/sdc rw
31 22 0:43 / /mnt/ram rw - ramfs ramfs rw
"""


def test_mountinfo_fields_and_escapes_are_parsed() -> None:
    entries = parse_mountinfo(MOUNTINFO)
    assert len(entries) == 10
    assert entries[0].fstype == "overlay" and entries[0].mount_point == "/"
    assert entries[4].fstype == "nfs4" and entries[4].source == "server:/export"
    assert entries[8].mount_point == "/checkpoints/deep dir"


@pytest.mark.parametrize(
    ("path", "mount_point"),
    [
        ("/checkpoints/run1", "/checkpoints"),
        ("/checkpoints/deep dir/x", "/checkpoints/deep dir"),
        ("/checkpointsX", "/"),
        ("/mnt/shared", "/mnt/shared"),
        ("/home/user", "/"),
    ],
)
def test_the_longest_mount_point_holds_the_path(path: str, mount_point: str) -> None:
    entry = mount_for(path, parse_mountinfo(MOUNTINFO))
    assert entry is not None and entry.mount_point == mount_point


@pytest.mark.parametrize(
    ("path", "storage_class"),
    [
        ("/dev/shm/ckpt", VOLATILE),
        ("/mnt/ram/x", VOLATILE),
        ("/scratch/ckpt", EPHEMERAL),
        ("/tmp/ckpt", CONTAINER_LAYER),
        ("/mnt/shared/ckpt", SHARED),
        ("/mnt/lustre/ckpt", SHARED),
        ("/mnt/s3/ckpt", SHARED),
        ("/checkpoints/run", LOCAL_DISK),
    ],
)
def test_storage_classes(path: str, storage_class: str) -> None:
    entry = mount_for(path, parse_mountinfo(MOUNTINFO))
    assert entry is not None
    assert classify_mount(entry.fstype, entry.root) == storage_class


def test_storage_report_of_a_real_folder_uses_the_given_mount_table(tmp_path: Path) -> None:
    table = f"30 1 0:1 / {tmp_path} rw - tmpfs tmpfs rw\n"
    report = storage_report(tmp_path, table)
    assert report.storage_class == VOLATILE and not report.persistent
    assert report.free_bytes > 0 and report.mount_point == str(tmp_path)


def test_check_room_refuses_a_full_disk(tmp_path: Path) -> None:
    report = storage_report(tmp_path, "")._replace(free_bytes=1024)
    with pytest.raises(PreflightError, match="needs at least"):
        check_room(report)


def test_unwritable_checkpoint_folder_is_a_preflight_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(PreflightError, match="file is a file, not a folder"):
        check_checkpoint_folder(blocker / "checkpoints", require_persistent=False)


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm")
def test_tmpfs_warns_and_fails_with_require_persistent(tmp_path: Path) -> None:
    folder = Path("/dev/shm") / f"spikelint-test-{tmp_path.name}"
    try:
        report, warning = check_checkpoint_folder(folder, require_persistent=False)
        if report.storage_class != VOLATILE:
            pytest.skip("/dev/shm is not tmpfs here")
        assert warning is not None and "not persistent" in warning
        with pytest.raises(PreflightError, match="--require-persistent"):
            check_checkpoint_folder(folder, require_persistent=True)
    finally:
        folder.rmdir()


def test_cuda_message_for_a_cpu_build_names_torch_and_the_missing_cuda() -> None:
    message = cuda_unavailable_message("2.13.0+cpu", None, None)
    assert "2.13.0+cpu" in message and "built without CUDA" in message


def test_cuda_message_for_a_cuda_build_without_a_device() -> None:
    message = cuda_unavailable_message("2.13.0+cu128", "12.8", "")
    assert "built with CUDA 12.8" in message and "no CUDA device is visible" in message
    assert "CUDA_VISIBLE_DEVICES=''" in message


def fake_torch(available: bool, count: int, cuda_version: str | None = "12.8") -> types.SimpleNamespace:
    cuda = types.SimpleNamespace(is_available=lambda: available, device_count=lambda: count)
    return types.SimpleNamespace(cuda=cuda, version=types.SimpleNamespace(cuda=cuda_version), __version__="2.13.0")


def test_device_resolution() -> None:
    assert resolve_device("auto", 1, fake_torch(False, 0)).type == "cpu"
    assert resolve_device("auto", 1, fake_torch(True, 2)) == ("cuda", 2)
    assert resolve_device("cpu", 4, fake_torch(True, 1)).type == "cpu"
    with pytest.raises(PreflightError, match="built without CUDA"):
        resolve_device("cuda", 1, fake_torch(False, 0, cuda_version=None))
    with pytest.raises(PreflightError, match="needs 2 CUDA devices"):
        resolve_device("cuda", 2, fake_torch(True, 1))
