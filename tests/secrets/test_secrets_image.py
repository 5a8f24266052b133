"""SPK205: image tarballs built here with ``tarfile`` (docker save and OCI layouts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import Fakes
from fakes import docker_save
from fakes import image_config
from fakes import oci_layout
from fakes import tar_bytes

from spikelint.config import Config
from spikelint.documents import read_document
from spikelint.documents.image import ImageError
from spikelint.documents.image import read_image
from spikelint.engine import check_paths
from spikelint.model import FileKind
from spikelint.model import Finding
from spikelint.model import SourceFile

FAKE = Fakes(11)


def check_image(path: Path) -> list[Finding]:
    result = check_paths([str(path)], Config(select=("SPK0", "SPK2")), cwd=path.parent, jobs=1)
    assert not result.internal_errors
    return result.report.findings


def leaky_layers(token: str) -> list[dict[str, bytes]]:
    netrc = f"machine huggingface.co login hf password {token}\n".encode()
    return [
        {"etc/": b"", "etc/os-release": b"ID=ubuntu\n"},
        {"root/": b"", "root/.netrc": netrc, "root/.cache/": b""},
        {"root/.wh..netrc": b"", "workspace/train.py": b"print('hi')\n"},
    ]


def test_docker_save_config_history_and_deleted_file(tmp_path: Path) -> None:
    token = FAKE.hf()
    config = image_config([f"HF_TOKEN={token}", "PATH=/usr/bin", "TOKENIZERS_PARALLELISM=false"],
                          [f"|1 HF_TOKEN={token} /bin/sh -c huggingface-cli download meta-llama/x", "/bin/sh -c #(nop) CMD"])
    path = docker_save(tmp_path / "train.tar", leaky_layers(token), config)
    findings = check_image(path)
    assert [finding.rule for finding in findings] == ["SPK205"] * 3
    messages = "\n".join(finding.message for finding in findings)
    assert "config Env HF_TOKEN" in messages
    assert "history[0].created_by" in messages
    assert "layer 2" in messages and "/root/.netrc" in messages and "deleted in layer 3" in messages
    assert token not in messages
    assert len({finding.fingerprint for finding in findings}) == 3


def test_oci_layout_with_gzip_layers_and_registry_credentials(tmp_path: Path) -> None:
    docker_config = json.dumps({"auths": {"harbor.example.org": {"auth": FAKE.docker_auth("robot$ml+ci")}}}).encode()
    layers = [{"root/.docker/config.json": docker_config},
              {"home/bob/.ssh/id_ed25519": FAKE.private_key().encode(),
               "usr/lib/python3/site-packages/tornado/test/test.key": FAKE.private_key().encode(),
               "etc/ssl/certs/ca.pem": b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}]
    path = oci_layout(tmp_path / "oci.tar", layers, image_config(["PATH=/usr/bin"], ["/bin/sh -c pip install x"]))
    findings = check_image(path)
    assert [finding.rule for finding in findings] == ["SPK205", "SPK205"]
    messages = "\n".join(finding.message for finding in findings)
    assert "Harbor robot credentials" in messages and "/root/.docker/config.json" in messages
    assert "/home/bob/.ssh/id_ed25519" in messages and "tornado" not in messages


def test_clean_image_and_empty_placeholders(tmp_path: Path) -> None:
    layers = [{"root/.netrc": b"", "root/.aws/credentials": b"[default]\naws_access_key_id = <key>\n",
               "app/.env": b"HF_TOKEN=${HF_TOKEN}\n"}]
    config = image_config(["HF_TOKEN=", "WANDB_MODE=offline"], ["/bin/sh -c #(nop) ENV HF_HOME=/data/hf"],
                          {"org.opencontainers.image.revision": FAKE.wandb()})
    path = docker_save(tmp_path / "clean.tar", layers, config, compress_layers=True)
    assert check_image(path) == []


def test_history_command_line_credentials(tmp_path: Path) -> None:
    password = FAKE.password()
    config = image_config([], [f"/bin/sh -c git clone https://bot:{password}@git.example.org/ml/x.git /src",
                               "/bin/sh -c curl -H 'Authorization: Bearer " + FAKE.high_entropy(40) + "' https://x"])
    path = docker_save(tmp_path / "h.tar", [{"a": b"1"}], config)
    findings = check_image(path)
    assert [finding.rule for finding in findings] == ["SPK205", "SPK205"]
    assert all(password not in finding.message for finding in findings)


def test_truncated_tarball_is_spk001(tmp_path: Path) -> None:
    good = docker_save(tmp_path / "good.tar", leaky_layers(FAKE.hf()), image_config([], []))
    broken = tmp_path / "broken.tar"
    broken.write_bytes(good.read_bytes()[:3000])
    findings = check_image(broken)
    assert [finding.rule for finding in findings] == ["SPK001"]
    assert "corrupt or truncated" in findings[0].message


def test_garbage_is_spk001(tmp_path: Path) -> None:
    path = tmp_path / "junk.tar"
    path.write_bytes(b"\x00\x01not a tar at all" * 100)
    assert [finding.rule for finding in check_image(path)] == ["SPK001"]


def test_a_plain_archive_is_read_as_an_archive_not_skipped(tmp_path: Path) -> None:
    """A tarball of files (a data shard), not of an image: its text members are checked (docs/secrets.md)."""
    path = tmp_path / "shard-000.tar"
    path.write_bytes(tar_bytes({"000001.jpg": b"\xff\xd8", "000001.txt": b"a cat"}))
    assert check_image(path) == []


def test_reader_keeps_only_candidates_and_whiteouts(tmp_path: Path) -> None:
    layers = [{f"data/{index}.bin": b"x" * 10 for index in range(200)} | {"root/.git-credentials": b"https://a:b@c\n"},
              {"root/.wh..git-credentials": b"", "data/.wh..wh..opq": b""}]
    path = docker_save(tmp_path / "big.tar", layers, image_config([], []), compress_layers=True)
    image = read_image(str(path)).images[0]
    assert [file.path for file in image.layers[0].files] == ["root/.git-credentials"]
    assert image.layers[1].whiteouts == ["root/.git-credentials"] and image.layers[1].opaque == ["data"]


def test_read_document_routes_images_without_reading_them_whole(tmp_path: Path) -> None:
    path = docker_save(tmp_path / "i.tar", [{"a": b"1"}], image_config([], []))
    document = read_document(SourceFile("i.tar", str(path), FileKind.IMAGE))
    assert document.problems == [] and document.parsed is not None and document.text == ""


def test_missing_file_raises_image_error(tmp_path: Path) -> None:
    with pytest.raises(ImageError):
        read_image(str(tmp_path / "nope.tar"))


def test_gzipped_docker_save(tmp_path: Path) -> None:
    import gzip

    token = FAKE.hf()
    plain = docker_save(tmp_path / "x.tar", leaky_layers(token), image_config([], []))
    packed = tmp_path / "x.tar.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    findings = check_image(packed)
    assert [finding.rule for finding in findings] == ["SPK205"] and "deleted in layer 3" in findings[0].message


def test_an_empty_tar_is_a_placeholder_not_a_broken_image(tmp_path: Path) -> None:
    from spikelint.config import Config
    from spikelint.engine import check_paths

    (tmp_path / "archives.tar").write_bytes(b"")
    (tmp_path / "broken.tar").write_bytes(b"not a tar archive at all" * 40)
    found = {(finding.path, finding.rule) for finding in check_paths(["."], Config(), cwd=tmp_path).report.findings}
    assert ("archives.tar", "SPK001") not in found and ("broken.tar", "SPK001") in found
