"""Image tarballs are read within limits: a bomb or a huge layer is cut short and said, never a stall."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fakes import Fakes
from fakes import docker_save
from fakes import image_config
from fakes import tar_bytes

from spikelint.config import config_from_mapping
from spikelint.documents.image import ImageError
from spikelint.documents.image import ImageLimits
from spikelint.documents.image import read_image
from spikelint.engine import check_paths

FAKE = Fakes()


def _findings(path: Path, settings: dict[str, object]) -> list[tuple[str, str]]:
    config = config_from_mapping({"select": ["SPK0", "SPK2"], **settings}, source="test", root=str(path.parent))
    result = check_paths([str(path)], config, cwd=path.parent, jobs=1)
    assert not result.internal_errors
    return [(finding.rule, finding.message) for finding in result.report.findings]


def test_a_decompression_bomb_layer_is_cut_short(tmp_path: Path) -> None:
    token = FAKE.hf()
    bomb = {"zeros": bytes(8 * 1024 * 1024)}  # 8 MiB of zeros gzip to ~8 KiB
    path = docker_save(tmp_path / "bomb.tar", [bomb], image_config([f"HF_TOKEN={token}"], []), compress_layers=True)
    start = time.perf_counter()
    contents = read_image(str(path), ImageLimits(ratio_floor=1024 * 1024))
    assert time.perf_counter() - start < 5
    assert len(contents.notes) == 1 and "decompression bomb" in contents.notes[0]
    assert contents.images[0].config["config"]["Env"] == [f"HF_TOKEN={token}"], "the config is still read"


def test_limits_come_from_the_configuration_and_are_reported(tmp_path: Path) -> None:
    token = FAKE.hf()
    many = {f"empty/{number}": b"" for number in range(300)}
    path = docker_save(tmp_path / "many.tar", [many, {"root/.netrc": f"machine h password {token}\n".encode()}],
                       image_config([f"HF_TOKEN={token}"], []))
    found = _findings(path, {"max_layer_entries": 100})
    assert [rule for rule, _ in found].count("SPK003") == 1
    note = next(message for rule, message in found if rule == "SPK003")
    assert "more than 100 members" in note and "max_layer_entries" in note
    assert [rule for rule, _ in found].count("SPK205") == 2, "the config and the next layer are still scanned"
    assert not [rule for rule, _ in _findings(path, {}) if rule == "SPK003"], "within the default limits"


def test_the_byte_and_time_limits(tmp_path: Path) -> None:
    layers = [{"data/a": bytes(range(256)) * 400}, {"data/b": bytes(range(256)) * 400}]
    path = docker_save(tmp_path / "big.tar", layers, image_config([], []))
    notes = read_image(str(path), ImageLimits(max_bytes=150_000)).notes
    assert len(notes) == 1 and "exceed 150000 decompressed bytes" in notes[0]
    with pytest.raises(ImageError, match="longer than 0 s"):
        read_image(str(path), ImageLimits(max_seconds=0.0))  # nothing read: an SPK001 that says why


def test_an_ordinary_gzip_layer_is_not_a_bomb(tmp_path: Path) -> None:
    text = "".join(f"line {number} of an ordinary file\n" for number in range(20_000)).encode()
    layer = tar_bytes({"app/readme.txt": text}, compress=True)
    assert len(text) / len(layer) < 100
    path = docker_save(tmp_path / "ok.tar", [{"app/readme.txt": text}], image_config([], []), compress_layers=True)
    assert read_image(str(path), ImageLimits(ratio_floor=1024)).notes == []
