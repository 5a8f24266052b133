"""Fake credentials generated at test time, so the repository holds no token-shaped literals.

Every value is random but shaped like the real thing (prefix, length, alphabet); a fixed seed
keeps test runs reproducible.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import string
import tarfile
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


class Fakes:
    """A deterministic source of fake tokens of every shape the detectors know."""

    def __init__(self, seed: int = 20261129) -> None:
        self.random = random.Random(seed)

    def chars(self, alphabet: str, length: int) -> str:
        return "".join(self.random.choice(alphabet) for _ in range(length))

    def hf(self) -> str:
        return "hf_" + self.chars(ALNUM, 34)

    def wandb(self) -> str:
        return self.chars(HEX, 40)

    def github(self) -> str:
        return "ghp_" + self.chars(ALNUM, 36)

    def github_fine_grained(self) -> str:
        return "github_pat_" + self.chars(ALNUM, 22) + "_" + self.chars(ALNUM, 59)

    def gitlab(self) -> str:
        return "glpat-" + self.chars(ALNUM, 20)

    def openai(self) -> str:
        return "sk-proj-" + self.chars(ALNUM + "-_", 74) + "T3BlbkFJ" + self.chars(ALNUM + "-_", 74)

    def anthropic(self) -> str:
        return "sk-ant-api03-" + self.chars(ALNUM, 93) + "AA"

    def nvidia(self) -> str:
        return "nvapi-" + self.chars(ALNUM + "-_", 64)

    def aws_key_id(self) -> str:
        return "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)

    def aws_secret(self) -> str:
        return self.chars(ALNUM + "/+", 40)

    def google_api_key(self) -> str:
        return "AIza" + self.chars(ALNUM + "-_", 35)

    def slack(self) -> str:
        return "xoxb-" + self.chars(string.digits, 12) + "-" + self.chars(string.digits, 13) + "-" + self.chars(ALNUM, 24)

    def stripe(self) -> str:
        return "sk_" + "live_" + self.chars(ALNUM, 24)

    def password(self) -> str:
        return self.chars(ALNUM, 6) + "!" + self.chars(string.digits, 3)

    def high_entropy(self, length: int = 32) -> str:
        return self.chars(ALNUM, length)

    def jwt(self) -> str:
        def part(data: dict[str, object]) -> str:
            return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
        return part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": self.chars(HEX, 12), "iat": 1700000000}) + \
            "." + self.chars(ALNUM + "-_", 43)

    def private_key(self) -> str:
        body = "\n".join(self.chars(ALNUM + "+/", 64) for _ in range(6))
        return "-----BEGIN " + "RSA PRIVATE KEY-----\n" + body + "\n-----END " + "RSA PRIVATE KEY-----\n"

    def docker_auth(self, user: str = "ci-bot") -> str:
        return base64.b64encode(f"{user}:{self.high_entropy(24)}".encode()).decode()


# --------------------------------------------------------------------------- image tarballs


def tar_bytes(files: dict[str, bytes], compress: bool = False) -> bytes:
    """A tar (optionally gzip) holding ``files``; names ending in ``/`` are folders."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compress else "w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name.rstrip("/"))
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
                continue
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def image_config(env: list[str], history: list[str], labels: dict[str, str] | None = None) -> bytes:
    return json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": env, "Labels": labels or {}, "Cmd": ["python", "train.py"]},
        "history": [{"created_by": line} for line in history],
        "rootfs": {"type": "layers", "diff_ids": []},
    }).encode()


def docker_save(path: Path, layers: list[dict[str, bytes]], config: bytes, compress_layers: bool = False) -> Path:
    """A ``docker save`` tarball: ``<id>/layer.tar`` + ``<config>.json`` + ``manifest.json`` (written last)."""
    files: dict[str, bytes] = {}
    names = []
    for index, layer in enumerate(layers):
        layer_id = hashlib.sha256(f"layer{index}".encode()).hexdigest()
        files[f"{layer_id}/"] = b""
        files[f"{layer_id}/VERSION"] = b"1.0"
        files[f"{layer_id}/layer.tar"] = tar_bytes(layer, compress=compress_layers)
        names.append(f"{layer_id}/layer.tar")
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    files[config_name] = config
    files["manifest.json"] = json.dumps([{"Config": config_name, "RepoTags": ["harbor.example.org/ml/train:1.0.0"],
                                          "Layers": names}]).encode()
    path.write_bytes(tar_bytes(files))
    return path


def oci_layout(path: Path, layers: list[dict[str, bytes]], config: bytes, compress_layers: bool = True) -> Path:
    """An OCI image layout tarball: ``oci-layout``, ``index.json`` and ``blobs/sha256/…``."""
    blobs: dict[str, bytes] = {}

    def add(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        blobs[f"blobs/sha256/{digest}"] = data
        return f"sha256:{digest}"

    layer_digests = [add(tar_bytes(layer, compress=compress_layers)) for layer in layers]
    config_digest = add(config)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest}
                   for digest in layer_digests],
    }).encode()
    manifest_digest = add(manifest)
    index = json.dumps({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
        "annotations": {"org.opencontainers.image.ref.name": "2.0.1"}}]}).encode()
    files = {"oci-layout": b'{"imageLayoutVersion": "1.0.0"}', **blobs, "index.json": index}
    path.write_bytes(tar_bytes(files))
    return path
