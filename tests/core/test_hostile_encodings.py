"""Secrets are scanned in every file, whatever its encoding or size, within a bound."""

from __future__ import annotations

import pickle
import random
import string
from pathlib import Path

import pytest
from core_support import write

import spikelint.documents.bounded as bounded


def fake_token(seed: int) -> str:
    rng = random.Random(seed)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


TOKEN = fake_token(11)


def _secrets(run_cli, repo: Path, *arguments: str) -> list[tuple[str, int, str]]:  # type: ignore[no-untyped-def]
    outcome = run_cli(["check", "--format", "json", "--fail-on", "never", *arguments, "."], cwd=repo)
    assert TOKEN not in outcome.out + outcome.err
    return sorted((f["path"], f["line"], f["rule"]) for f in outcome.json()["findings"])


@pytest.mark.parametrize("bom,encoding", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
                                          (b"\xff\xfe\x00\x00", "utf-32-le")])
def test_utf16_and_utf32_files_are_decoded_and_scanned(run_cli, tmp_path: Path, bom: bytes, encoding: str) -> None:
    repo = write(tmp_path / "repo", {"conf.yaml": bom + f"name: x\ntoken: {TOKEN}\n".encode(encoding),
                                     "notes.txt": bom + f"GITHUB_TOKEN={TOKEN}\n".encode(encoding)})
    assert _secrets(run_cli, repo) == [("conf.yaml", 1, "SPK001"), ("conf.yaml", 2, "SPK201"),
                                       ("notes.txt", 1, "SPK201")]


def test_nul_bytes_and_binary_names_do_not_hide_a_token(run_cli, tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {
        "job.yaml": b"a: 1\x00\nb: " + TOKEN.encode() + b"\n",
        "model.pkl": pickle.dumps({"hub_token": TOKEN, "weights": bytes(range(256)) * 4}),
        "pytorch_model.bin": bytes(range(256)) * 40 + TOKEN.encode() + b"\x00" * 8,
        "logo.png": b"\x89PNG\r\n" + TOKEN.encode(),  # media is never read
    })
    found = _secrets(run_cli, repo)
    assert ("job.yaml", 1, "SPK003") in found and ("job.yaml", 2, "SPK201") in found
    assert {path for path, _, rule in found if rule == "SPK201"} == {"job.yaml", "model.pkl", "pytorch_model.bin"}
    assert not [entry for entry in found if entry[0] == "pytorch_model.bin" and entry[2] == "SPK003"]


def test_a_binary_file_is_scanned_within_a_bound(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "MAX_BINARY_SCAN", 4096)
    repo = write(tmp_path / "repo", {"early.bin": TOKEN.encode() + b"\x00" * 10_000,
                                     "late.bin": b"\x00" * 10_000 + fake_token(12).encode()})
    found = _secrets(run_cli, repo)
    assert ("early.bin", 1, "SPK201") in found and ("late.bin", 1, "SPK003") in found
    assert not [entry for entry in found if entry[0] == "late.bin" and entry[2] == "SPK201"]


def test_an_oversized_file_is_scanned_in_chunks(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "CHUNK", 1000)
    padding = "".join(f"padding line {number}\n" for number in range(3000))
    repo = write(tmp_path / "repo", {"dump.txt": padding + f"export GH={TOKEN}\n" + padding,
                                     ".spikelint.yaml": "max_file_size: 10000\n"})
    found = _secrets(run_cli, repo)
    assert found == [("dump.txt", 1, "SPK003"), ("dump.txt", 3001, "SPK201")]
    outcome = run_cli(["check", "--format", "json", "--fail-on", "never", "."], cwd=repo)
    info = next(f for f in outcome.json()["findings"] if f["rule"] == "SPK003")
    assert "only scanned for token shapes" in info["message"] and info["severity"] == "info"


def test_an_oversized_file_is_scanned_only_up_to_the_bound(run_cli, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "CHUNK", 1000)
    monkeypatch.setattr(bounded, "MAX_OVERSIZED_SCAN", 20_000)
    repo = write(tmp_path / "repo", {"dump.txt": "x\n" * 20_000 + f"GH={TOKEN}\n",
                                     ".spikelint.yaml": "max_file_size: 10000\n"})
    outcome = run_cli(["check", "--format", "json", "--fail-on", "never", "."], cwd=repo)
    (info,) = outcome.json()["findings"]
    assert info["rule"] == "SPK003" and "the first 20000 bytes" in info["message"]
