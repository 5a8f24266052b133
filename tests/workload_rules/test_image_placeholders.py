"""SPK101/SPK102/SPK104 on references that are not what they look like: ALL-CAPS stand-ins, names the
deploy tooling replaces (skaffold artifacts, ``kustomize edit set image``), images a Slurm script builds
itself, tags that end in a commit sha, and the CUDA ``devel`` flavour after a version."""

from __future__ import annotations

from pathlib import Path

import pytest

from spikelint.config import Config
from spikelint.engine import check_paths
from spikelint.engine import lint_snippet
from spikelint.facts.images import placeholder_parts

SELECT = {"select": ["SPK1"]}


def pairs(name: str, text: str, extra: dict[str, str] | None = None, **config: object) -> list[tuple[int, str]]:
    return sorted((f.line, f.rule) for f in lint_snippet(name, text, {**SELECT, **config}, extra_files=extra))


def pod(*images: str) -> str:
    containers = "".join(f"    - name: c{index}\n      image: {image}\n" for index, image in enumerate(images))
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\nspec:\n  containers:\n{containers}"


# --------------------------------------------------------------------------- 1. ALL-CAPS placeholders


@pytest.mark.parametrize("image", ["acme/fitter:IMAGE_TAG", "registry.example.org/fitter:TAG", "IMAGE_NAME",
                                   "CONTAINER_IMAGE", "YOUR_IMAGE", "ghcr.io/acme/fitter:VERSION",
                                   "ACCOUNT_ID.dkr.ecr.eu-west-1.amazonaws.com/fitter:1.2.3",
                                   "gcr.io/PROJECT_ID/fitter:2.0.1", "<account>.dkr.ecr.eu-west-1.amazonaws.com/f:1.2.3"])
def test_an_all_caps_stand_in_is_unresolved_not_mutable(image: str) -> None:
    assert pairs("pod.yaml", pod(image)) == [(8, "SPK104")]


@pytest.mark.parametrize(("image", "rule"), [("acme/fitter:LATEST", "SPK101"), ("acme/fitter:GPU", "SPK102"),
                                             ("acme/fitter:RELEASE_1_2", "SPK102"), ("acme/fitter:image_tag", "SPK102"),
                                             ("acme/fitter:tags", "SPK102"), ("fitter", "SPK101")])
def test_real_tags_in_capitals_or_lower_case_stay_judged(image: str, rule: str) -> None:
    assert pairs("pod.yaml", pod(image)) == [(8, rule)]


def test_one_finding_per_file_and_placeholder() -> None:
    same = pod("acme/fitter:IMAGE_TAG", "acme/sidecar:IMAGE_TAG")
    assert pairs("pod.yaml", same) == [(8, "SPK104")]
    different = pod("acme/fitter:IMAGE_TAG", "acme/sidecar:SIDECAR_TAG")
    assert pairs("pod.yaml", different) == [(8, "SPK104"), (10, "SPK104")]


def test_placeholders_in_a_dockerfile_and_a_slurm_script() -> None:
    assert pairs("Dockerfile", "FROM BASE_IMAGE\nRUN true\n") == [(1, "SPK104")]
    script = ("#!/bin/bash\n#SBATCH --gres=gpu:4\n#SBATCH --time=02:00:00\n"
              "srun --container-image=CONTAINER_IMAGE python fit.py\n")
    assert pairs("fit.sbatch", script) == [(4, "SPK104")]


def test_placeholder_parts_name_the_stand_ins() -> None:
    assert placeholder_parts("ACCOUNT_ID.dkr.ecr.x.amazonaws.com/acme/f:IMAGE_TAG") == ("ACCOUNT_ID", "IMAGE_TAG")
    assert placeholder_parts("acme/f:LATEST") == ()
    assert placeholder_parts("acme/f:V1") == ()
    assert placeholder_parts("acme/f:RELEASE_1_2") == ()


# --------------------------------------------------------------------------- 2. skaffold artifacts

SKAFFOLD = ("apiVersion: skaffold/v4beta11\nkind: Config\nbuild:\n  artifacts:\n    - image: fitter\n"
            "      context: .\n    - image: ghcr.io/acme/loader\n      context: loader\n"
            "profiles:\n  - name: gpu\n    build:\n      artifacts:\n        - image: fitter-gpu\n"
            "verify:\n  - name: smoke\n    container:\n      name: smoke\n      image: alpine:latest\n")


def test_skaffold_artifact_names_are_not_references() -> None:
    """Lines 5, 7 and 13 name what skaffold builds and tags; the verify container at 18 is pulled."""
    assert pairs("skaffold.yaml", SKAFFOLD) == [(18, "SPK101")]


def test_a_manifest_image_that_skaffold_builds_is_replaced_at_deploy() -> None:
    manifest = pod("fitter", "ghcr.io/acme/loader:latest", "fitter-gpu:dev", "acme/other:latest")
    assert pairs("k8s/pod.yaml", manifest, {"skaffold.yaml": SKAFFOLD}) == [(14, "SPK101")]


def test_without_skaffold_in_the_tree_the_same_manifest_is_judged() -> None:
    assert pairs("k8s/pod.yaml", pod("fitter")) == [(8, "SPK101")]
    assert pairs("k8s/pod.yaml", pod("fitter"), {"other/skaffold.yaml": SKAFFOLD.replace("image: fitter\n",
                                                                                        "image: trainer\n")}) == [
        (8, "SPK101")]


# --------------------------------------------------------------------------- 3. kustomize edit set image

BASE = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: manager\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: manager\n          image: controller:latest\n")


@pytest.mark.parametrize("command", ["kustomize edit set image controller=${IMG}",
                                     '"${KUSTOMIZE}" edit set image controller=registry.acme.test/ctl:${TAG}',
                                     "bin/kustomize edit set image controller:1.4.2",
                                     "kustomize edit set image controller@sha256:" + "ab" * 32])
def test_an_image_a_release_script_sets_is_not_the_base_tag(command: str) -> None:
    script = f"#!/bin/bash\nset -euo pipefail\ncd config/manager && {command}\nkustomize build config/default\n"
    assert pairs("config/manager/manager.yaml", BASE, {"hack/release.sh": script}) == []


@pytest.mark.parametrize("command", ["kustomize edit set image webhook=${IMG}",
                                     "kubectl set image deployment/manager manager=registry.acme.test/ctl:v2",
                                     "# kustomize edit set image controller=${IMG}",
                                     "kustomize edit set image ${NAME}=${IMG}"])
def test_other_names_or_other_commands_leave_the_base_judged(command: str) -> None:
    script = f"#!/bin/bash\nset -euo pipefail\n{command}\n"
    assert pairs("config/manager/manager.yaml", BASE, {"hack/release.sh": script}) == [(10, "SPK101")]


def test_the_release_script_is_a_dependency_of_the_cached_result(tmp_path: Path) -> None:
    """Read from disk (the script is checked too, before the manifest), and an edit of the script
    invalidates the manifest's cached result."""
    script = tmp_path / "hack" / "release.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/bash\nkustomize edit set image controller=${IMG}\n", encoding="utf-8")
    (tmp_path / "manager.yaml").write_text(BASE, encoding="utf-8")

    def found() -> list[tuple[str, int, str]]:
        report = check_paths(["."], Config(select=("SPK1",)), cwd=tmp_path, jobs=1, cache=True).report
        return [(finding.path, finding.line, finding.rule) for finding in report.findings]

    assert found() == []
    script.write_text("#!/bin/bash\nkustomize build config/default\n", encoding="utf-8")
    assert found() == [("manager.yaml", 10, "SPK101")]


# --------------------------------------------------------------------------- 4. Slurm: built, then imported

JOB = "#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=04:00:00\n"


@pytest.mark.parametrize("body", [
    "docker build -t fitter:latest .\nenroot import -o fitter.sqsh dockerd://fitter:latest\n",
    "podman build --tag fitter .\nenroot import podman://fitter\n",
    "IMG=fitter:dev\ndocker buildx build -t \"$IMG\" .\nenroot import \"dockerd://$IMG\"\n",
])
def test_an_image_the_job_builds_is_not_a_registry_reference(body: str) -> None:
    assert pairs("fit.sbatch", JOB + body + "srun python fit.py\n") == []


@pytest.mark.parametrize("body", [
    "docker build -t fitter:latest .\nenroot import docker://nvcr.io#nvidia/pytorch:latest\n",
    "true\nenroot import dockerd://fitter:latest\n",
    "docker build -t fitter:v2 .\nenroot import dockerd://fitter:latest\n",
    "docker pull fitter:latest\nenroot import dockerd://fitter:latest\n",
])
def test_a_pulled_or_unbuilt_image_stays_spk101(body: str) -> None:
    assert pairs("fit.sbatch", JOB + body + "srun python fit.py\n") == [(5, "SPK101")]


def test_a_build_after_the_import_does_not_count() -> None:
    body = "enroot import dockerd://fitter:latest\ndocker build -t fitter:latest .\n"
    assert pairs("fit.sbatch", JOB + body) == [(4, "SPK101")]


# --------------------------------------------------------------------------- 5. commit-sha tags, CUDA flavours


@pytest.mark.parametrize("tag", ["v1beta1-45c5727", "2024.05-abc1234f", "main-3f9c2ab", "build_0a1b2c3d4e",
                                 "gpu.7f3c9e1a", "v20220916-gd32f8c343", "v1.2-14-g2414721"])
def test_a_tag_that_ends_in_a_commit_sha_is_pinned_enough(tag: str) -> None:
    assert pairs("pod.yaml", pod(f"ghcr.io/acme/fitter:{tag}")) == []


@pytest.mark.parametrize("tag", ["gpu-deadbee", "build-1234567", "abc1234f-gpu", "gpu-abc123", "cu121-ABC1234F"])
def test_hex_without_a_digit_and_a_letter_or_not_at_the_end_floats(tag: str) -> None:
    assert pairs("pod.yaml", pod(f"ghcr.io/acme/fitter:{tag}")) == [(8, "SPK102")]


@pytest.mark.parametrize(("tag", "rule"), [("9.0-devel", "SPK101"), ("12.4-runtime", "SPK102"),
                                           ("12.1.0-cudnn8-devel-ubuntu22.04", None), ("12.4.1-devel", None)])
def test_devel_after_a_full_version_names_one_build(tag: str, rule: str | None) -> None:
    """rules.md: a tag ending in a mutable word floats unless the rest is itself immutable."""
    expected = [(8, rule)] if rule else []
    assert pairs("pod.yaml", pod(f"nvidia/cuda:{tag}")) == expected


@pytest.mark.parametrize("tag", ["devel", "devel-gpu", "cuda-devel", "9.0-latest", "9.0-nightly", "v9-nightly"])
def test_devel_without_a_leading_version_and_other_words_still_float(tag: str) -> None:
    assert pairs("pod.yaml", pod(f"acme/cuda:{tag}")) == [(8, "SPK101")]




@pytest.mark.parametrize("image", ["xxxxxxxxxxxx.dkr.ecr.us-west-2.amazonaws.com/trainer-efa:latest",
                                   "000000000000.dkr.ecr.eu-west-1.amazonaws.com/trainer:latest",
                                   "example/ray:tag", "registry.example.org/fit:version"])
def test_filler_accounts_and_a_bare_tag_word_are_placeholders(image: str) -> None:
    assert pairs("pod.yaml", pod(image)) == [(8, "SPK104")]


@pytest.mark.parametrize(("image", "rule"), [("123456789012.dkr.ecr.us-west-2.amazonaws.com/trainer:latest", "SPK101"),
                                             ("ghcr.io/acme/fitter:tagged", "SPK102"),
                                             ("ghcr.io/acme/xx/fitter:latest", "SPK101")])
def test_real_accounts_and_tags_that_only_contain_the_words_are_judged(image: str, rule: str) -> None:
    assert pairs("pod.yaml", pod(image)) == [(8, rule)]


# --------------------------------------------------------------------------- 6. the tag beside the name

OPERATOR_RESOURCE = ("apiVersion: example.com/v1\nkind: DriverSet\nmetadata:\n  name: sample\nspec:\n"
                     "  repository: ghcr.io/acme\n  image: {image}\n  version: {version}\n")


@pytest.mark.parametrize(("image", "version", "expected"), [
    ("kernel-driver", '"570.86.15"', []),  # the tag sits beside the name: pinned
    ("kernel-driver", '""', []),  # left empty for the operator to fill
    ("kernel-driver", '"v2.6"', [(8, "SPK102")]),  # a partial version floats, reported at the version
    ("kernel-driver", "latest", [(8, "SPK101")]),
    ("kernel-driver:1.2.3", "v2", []),  # a whole reference: the version key is something else
])
def test_an_image_whose_tag_is_a_sibling_version_key(image: str, version: str, expected: list) -> None:
    document = OPERATOR_RESOURCE.format(image=image, version=version)
    assert pairs("driverset.yaml", document) == expected


def test_an_image_without_a_version_beside_it_still_means_latest() -> None:
    document = OPERATOR_RESOURCE.format(image="kernel-driver", version="x").replace("  version: x\n", "")
    assert pairs("driverset.yaml", document) == [(7, "SPK101")]


# --------------------------------------------------------------------------- a shell function's argument

PROBE_FUNCTION = """#!/bin/bash
#SBATCH --gres=gpu:1
check_image() {
    local image="$1"
    srun --ntasks=1 --container-image "${image}" nvidia-smi
}
check_image "$IMAGE"
"""


def test_an_image_from_a_functions_argument_is_unresolved_not_untagged() -> None:
    assert pairs("probe.sbatch", PROBE_FUNCTION) == [(4, "SPK104")]


def test_a_literal_untagged_image_in_the_same_function_is_still_spk101() -> None:
    assert pairs("probe.sbatch", PROBE_FUNCTION.replace('"$1"', '"nvcr.io/nvidia/pytorch"')) == [(4, "SPK101")]
