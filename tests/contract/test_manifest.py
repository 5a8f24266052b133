"""The manifest is written atomically and records hashes exactly."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from spikelint.run import manifest as manifest_module
from spikelint.run.manifest import new_run_id
from spikelint.run.manifest import sha256_file
from spikelint.run.manifest import utc_now
from spikelint.run.manifest import utc_text
from spikelint.run.manifest import write_json_atomic


def test_atomic_write_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    write_json_atomic(target, {"a": 1})
    write_json_atomic(target, {"a": 2, "text": "é"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": 2, "text": "é"}
    assert [path.name for path in tmp_path.iterdir()] == ["manifest.json"]


def test_atomic_write_fsyncs_the_file_and_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(descriptor: int) -> None:
        synced.append(descriptor)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", spy)
    write_json_atomic(tmp_path / "manifest.json", {"a": 1})
    assert len(synced) == 2


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "manifest.json"
    write_json_atomic(target, {"old": True})

    def broken(source: object, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(manifest_module.os, "replace", broken)
    with pytest.raises(OSError):
        write_json_atomic(target, {"new": True})
    assert json.loads(target.read_text(encoding="utf-8")) == {"old": True}
    assert [path.name for path in tmp_path.iterdir()] == ["manifest.json"]


def test_sha256_of_a_file_larger_than_a_chunk(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    data = os.urandom(3 * 1024 * 1024 + 17)
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_times_and_ids() -> None:
    moment = utc_now()
    assert utc_text(moment).endswith("Z") and "T" in utc_text(moment)
    first, second = new_run_id(moment), new_run_id(moment)
    assert first != second and first[:16] == second[:16]
