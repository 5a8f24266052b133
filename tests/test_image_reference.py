from __future__ import annotations

import pytest

from spikelint.facts.images import ImageSyntaxError
from spikelint.facts.images import has_literal_digest
from spikelint.facts.images import is_unresolved
from spikelint.facts.images import parse_image
from spikelint.facts.images import registry_allowed


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest"),
    [
        ("ubuntu", "docker.io", "library/ubuntu", None, None),
        ("pytorch/pytorch:2.3.1-cuda12.1", "docker.io", "pytorch/pytorch", "2.3.1-cuda12.1", None),
        ("harbor.example.org:5000/ml/train", "harbor.example.org:5000", "ml/train", None, None),
        ("harbor.example.org:5000/ml/team/train:v1", "harbor.example.org:5000", "ml/team/train", "v1", None),
        ("localhost/train:dev", "localhost", "train", "dev", None),
        ("localhost:5000/train", "localhost:5000", "train", None, None),
        ("[fd00::1]:5000/ml/trainer:nightly", "[fd00::1]:5000", "ml/trainer", "nightly", None),
        ("ml/train:5000", "docker.io", "ml/train", "5000", None),
        ("index.docker.io/library/python:3.11", "docker.io", "library/python", "3.11", None),
        ("nvcr.io/nvidia/pytorch:24.05-py3@sha256:" + "a" * 64, "nvcr.io", "nvidia/pytorch", "24.05-py3", "sha256:" + "a" * 64),
        ("ghcr.io/acme/x@sha256:" + "b" * 64, "ghcr.io", "acme/x", None, "sha256:" + "b" * 64),
    ],
)
def test_parse_image(text: str, registry: str, repository: str, tag: str | None, digest: str | None) -> None:
    image = parse_image(text)
    assert (image.registry, image.repository, image.tag, image.digest) == (registry, repository, tag, digest)


@pytest.mark.parametrize("text", ["", "two words", "x@sha256:short", "repo:", "harbor.example.org/"])
def test_parse_image_rejects(text: str) -> None:
    with pytest.raises(ImageSyntaxError):
        parse_image(text)


@pytest.mark.parametrize("text", ["${IMAGE}", "$IMAGE", "$(IMAGE)", "{{ .Values.image }}", "repo:${TAG}"])
def test_unresolved(text: str) -> None:
    assert is_unresolved(text)


def test_registry_allowed_host_port_and_prefix() -> None:
    assert registry_allowed(parse_image("harbor.example.org/ml/x:v1"), ("harbor.example.org",))
    assert registry_allowed(parse_image("harbor.example.org:443/ml/x:v1"), ("harbor.example.org",))
    assert registry_allowed(parse_image("python:3.11"), ("docker.io",))
    assert registry_allowed(parse_image("harbor.example.org/ml/x:v1"), ("harbor.example.org/ml",))
    assert not registry_allowed(parse_image("harbor.example.org/other/x:v1"), ("harbor.example.org/ml",))
    assert not registry_allowed(parse_image("python:3.11"), ("harbor.example.org",))


@pytest.mark.parametrize(("text", "pinned"), [
    ("${REGISTRY}/ml/trainer@sha256:" + "a" * 64, True),
    ("{{ .Values.registry }}/ml/trainer:2.1.0@sha256:" + "a" * 64, True),
    ("harbor.example.org/ml/trainer:${TAG}", False),
    ("${IMAGE}@sha256:abc", False),
    ("${IMAGE}@${DIGEST}", False),
    ("ubuntu:22.04", False),
])
def test_literal_digest(text: str, pinned: bool) -> None:
    assert has_literal_digest(text) is pinned
