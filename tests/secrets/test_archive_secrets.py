"""Committed archives: each text member checked like a file (``bundle.tar.gz!src/.env``), within the tarball
limits; a bomb, a nested archive and binary members are left unread, and what was not read is said."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from spikelint.cli import main

TOKEN = "hf_" + "Qw7eR5tY3uI1oP9aS8dF6gH4jK2lZ0xC7v"


def tar_gz(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def check(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    monkeypatch.chdir(folder)
    code = main(["check", ".", "--concise", "--select", "SPK2,SPK003", *argv])
    return code, capsys.readouterr().out


def test_a_token_in_a_member_is_found_and_named_inside_the_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    tar_gz(tmp_path / "bundle.tar.gz", {"src/.env": f"HF_TOKEN={TOKEN}\n".encode(), "src/README.md": b"hello\n"})
    with zipfile.ZipFile(tmp_path / "configs.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("deploy/job.yaml", f"env:\n  - name: X\n    value: {TOKEN}\n")
    code, out = check(tmp_path, monkeypatch, capsys)
    assert code == 1
    assert "bundle.tar.gz!src/.env:1:10: SPK201 [error] hardcoded hf_Q… (Hugging Face token)" in out
    assert "configs.zip!deploy/job.yaml:3:12: SPK201" in out
    assert TOKEN[:8] not in out


def test_what_an_archive_cannot_hold_for_long_is_left_unread_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An archive inside the archive is not opened; a checkpoint's or a pickle's strings are read, as a committed
    one's are;
    members that expand past the limits (66 of a megabyte of zeros each, compressed to almost nothing) stop the
    reading, and both are said."""
    tar_gz(tmp_path / "inner.tar.gz", {"a.env": f"K={TOKEN}\n".encode()})
    with zipfile.ZipFile(tmp_path / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("nested.tar.gz", (tmp_path / "inner.tar.gz").read_bytes())
        archive.writestr("model.bin", b"\0" * 1024 + TOKEN.encode())
        archive.writestr("state.pkl", b"\x80\x04\x95" + b"\0" * 16 + b"\x8c\x25" + TOKEN.encode() + b"\x94.")
        for index in range(66):
            archive.writestr(f"zeros/{index}.txt", b"0" * ((1 << 20) + 1))
        archive.writestr("after.env", f"K={TOKEN}\n")
    (tmp_path / "inner.tar.gz").unlink()
    code, out = check(tmp_path, monkeypatch, capsys)
    assert "'nested.tar.gz' is an archive inside the archive: not opened" in out
    assert "a decompression bomb?): the members from 'zeros/6" in out
    assert sorted(line.split(":")[0] for line in out.splitlines() if "SPK201" in line) == \
        ["bundle.zip!model.bin", "bundle.zip!state.pkl"]  # a checkpoint's and a pickle's strings, as committed ones
    assert "after.env" not in out  # past the limit: not read


def test_an_image_tarball_is_still_read_as_an_image_and_a_corrupt_archive_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 40)  # a test fixture of a malformed zip
    tar_gz(tmp_path / "truncated.tar.gz", {"a.env": b"K=v\n"})
    (tmp_path / "truncated.tar.gz").write_bytes((tmp_path / "truncated.tar.gz").read_bytes()[:30])
    code, out = check(tmp_path, monkeypatch, capsys, "--select", "SPK001,SPK003")
    assert "broken.zip:1:1: SPK003 [info] not a readable zip archive; its content was not looked at" in out
    assert "truncated.tar.gz:1:1: SPK001" in out


@pytest.mark.parametrize("fmt", ["sarif", "github", "gitlab"])
def test_ci_formats_place_a_member_finding_on_the_archive_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """Code scanning, GitLab and workflow annotations attach only to files of the repository: the archive, line 1,
    the member and its line in the message."""
    tar_gz(tmp_path / "bundle.tar.gz", {"src/.env": f"HF_TOKEN={TOKEN}\n".encode()})
    code, out = check(tmp_path, monkeypatch, capsys, "--format", fmt)
    assert code == 1 and "bundle.tar.gz" in out
    assert "bundle.tar.gz%21" not in out and "bundle.tar.gz!src" not in out
    assert "in src/.env, line 1: hardcoded hf_Q" in out
