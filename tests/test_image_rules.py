"""SPK101/SPK104 shapes that need more than one file or are easiest stated as code."""

from __future__ import annotations

import pytest

from spikelint.config import Config
from spikelint.engine import lint_snippet

SELECT = {"select": ["SPK1"]}
BASE = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: manager\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: manager\n          image: controller:latest\n")


def pairs(name: str, text: str, extra: dict[str, str] | None = None) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in lint_snippet(name, text, SELECT, extra_files=extra)]


def overlay(resources: str, tag: str = "v1.4.2") -> str:
    return (f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {resources}\n"
            f"images:\n  - name: controller\n    newName: registry.acme.test/platform/controller\n    newTag: {tag}\n")


def test_an_overlay_in_another_folder_decides_the_base_image() -> None:
    base_kustomization = "resources:\n  - manager.yaml\n"
    files = {"config/base/kustomization.yaml": base_kustomization,
             "config/overlays/prod/kustomization.yaml": overlay("../../base")}
    assert pairs("config/base/manager.yaml", BASE, files) == []
    assert pairs("config/overlays/prod/kustomization.yaml", overlay("../../base"),
                 {**files, "config/base/manager.yaml": BASE}) == []


def test_one_finding_when_the_overlay_tag_floats_too() -> None:
    files = {"config/kustomization.yaml": overlay("manager.yaml", "main")}
    assert pairs("config/manager.yaml", BASE, files) == []
    assert pairs("config/kustomization.yaml", overlay("manager.yaml", "main"), {"config/manager.yaml": BASE}) == [
        (8, "SPK101")]


def test_an_unrelated_kustomization_does_not_hide_the_base_image() -> None:
    files = {"other/kustomization.yaml": overlay("deployment.yaml")}
    assert pairs("config/manager.yaml", BASE, files) == [(10, "SPK101")]


def test_an_overlay_that_only_renames_keeps_the_base_tag_judged() -> None:
    renames = ("resources:\n  - manager.yaml\nimages:\n  - name: controller\n"
               "    newName: registry.acme.test/platform/controller\n")
    assert pairs("config/manager.yaml", BASE, {"config/kustomization.yaml": renames}) == [(10, "SPK101")]


def test_unresolved_build_arguments_are_one_finding_per_dockerfile_and_variable() -> None:
    text = ("ARG PYTHON_VERSION\nFROM python:${PYTHON_VERSION}-slim AS build\nRUN pip wheel . -w /w\n"
            "FROM python:${PYTHON_VERSION}-slim AS run\nCOPY --from=build /w /w\n")
    assert pairs("Dockerfile", text) == [(2, "SPK104")]


def test_a_variant_message_names_the_mutable_word() -> None:
    text = BASE.replace("controller:latest", "tensorflow/tensorflow:latest-gpu")
    (finding,) = lint_snippet("pod.yaml", text, SELECT)
    assert finding.rule == "SPK101" and finding.severity == "error"
    assert "'latest-gpu', a variant of the mutable 'latest'" in finding.message


def test_mutable_tags_from_configuration_get_variants_too() -> None:
    text = BASE.replace("controller:latest", "ghcr.io/acme/trainer:rc-gpu")
    assert pairs("pod.yaml", text) == [(10, "SPK102")]
    findings = lint_snippet("pod.yaml", text, {"select": ["SPK1"], "mutable_tags": ["rc"]})
    assert [(f.line, f.rule) for f in findings] == [(10, "SPK101")]


def test_placeholders_in_a_dockerfile_and_a_script() -> None:
    assert pairs("Dockerfile", "FROM CHANGE_ME\nRUN true\n") == [(1, "SPK104")]
    script = "#!/bin/bash\nrunai submit train -i PLACEHOLDER_IMAGE -g 1 -- python train.py\n"
    assert [rule for _, rule in pairs("submit.sh", script) if rule.startswith("SPK10")] == ["SPK104"]


@pytest.mark.parametrize("tag", ["efa1.37.0-ofiv1.13.2-aws-ncclv2.23.4-1-testsv2.13.10", "release-2.3.1", "pytorch2.5.1"])
def test_full_version_after_a_word_is_immutable(tag: str) -> None:
    """AWS's EFA/NCCL test images and release tags carry a full x.y.z version after a word."""
    assert Config().immutable_tag_regex().match(tag)


@pytest.mark.parametrize("tag", ["2024-05-01", "nightly-2025-11-30", "v2024-05-01-cu121", "20240501",
                                 "RELEASE.2019-08-14T20-37-41Z"])
def test_a_dated_tag_is_a_date_stamp(tag: str) -> None:
    """A day written out (``maxtext:2024-05-01``, a dated nightly) names one build, like ``20240501``."""
    assert Config().immutable_tag_regex().match(tag)


@pytest.mark.parametrize("tag", ["py3", "24.05-py3", "cuda12", "gpu-2.1", "pytorch2.5", "gpu-deadbee", "cuda-1234567",
                                 "jammy", "2024-05", "2024-05-py3", "1234-56-78"])
def test_flavours_and_partial_versions_still_float(tag: str) -> None:
    assert not Config().immutable_tag_regex().match(tag)
