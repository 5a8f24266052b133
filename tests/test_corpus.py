"""The bundled example corpus (``../shared/corpus``): every image and secret problem its README
lists is found at its line, and nothing else of those families (the good files stay clean)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spikelint.cli import main

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="needs the workload corpus of spikelint's development workspace, which a clone does not include")
GOOD_FILES = ("01-runai-cli-good.sh", "03-runai-trainingworkload-good.yaml", "06-runai-rest-training-good.json",
              "08-k8s-job-good.yaml", "13-Dockerfile.good", "18-lightning-cli.yaml")

# (file, line, rule) for SPK0, SPK1 and SPK2, reviewed against each file's header comment.
EXPECTED_META_IMAGE_SECRET = {
    ("17-hf-training-args.yaml", 9, "SPK105"),  # model_name_or_path: a hub id with no model_revision
    ("02-runai-cli-bad.sh", 12, "SPK101"),
    ("02-runai-cli-bad.sh", 16, "SPK202"),
    ("02-runai-cli-bad.sh", 22, "SPK102"),
    ("02-runai-cli-bad.sh", 23, "SPK202"),
    ("02-runai-cli-bad.sh", 25, "SPK203"),
    ("02-runai-cli-bad.sh", 28, "SPK104"),
    ("04-runai-interactiveworkload-bad.yaml", 18, "SPK101"),
    ("04-runai-interactiveworkload-bad.yaml", 30, "SPK202"),
    ("04-runai-interactiveworkload-bad.yaml", 32, "SPK202"),
    ("05-runai-distributedworkload.yaml", 25, "SPK202"),
    ("07-runai-rest-workspace-bad.json", 7, "SPK101"),
    ("07-runai-rest-workspace-bad.json", 13, "SPK202"),
    ("07-runai-rest-workspace-bad.json", 14, "SPK202"),
    ("09-k8s-pod-bad.yaml", 18, "SPK101"),
    ("09-k8s-pod-bad.yaml", 19, "SPK203"),
    ("09-k8s-pod-bad.yaml", 23, "SPK101"),
    ("09-k8s-pod-bad.yaml", 27, "SPK203"),
    ("09-k8s-pod-bad.yaml", 31, "SPK202"),
    ("09-k8s-pod-bad.yaml", 33, "SPK202"),
    ("09-k8s-pod-bad.yaml", 62, "SPK101"),
    ("10-kubeflow-pytorchjob.yaml", 50, "SPK102"),
    ("11-jobset-and-volcano.yaml", 69, "SPK101"),
    ("12-helm-kustomize/chart/templates/job.yaml", 1, "SPK003"),
    ("12-helm-kustomize/chart/values.yaml", 9, "SPK101"),
    ("12-helm-kustomize/chart/values.yaml", 16, "SPK201"),
    ("12-helm-kustomize/overlay/kustomization.yaml", 19, "SPK206"),
    ("14-Dockerfile.bad", 9, "SPK101"),
    ("14-Dockerfile.bad", 10, "SPK101"),
    ("14-Dockerfile.bad", 13, "SPK102"),
    ("14-Dockerfile.bad", 14, "SPK202"),
    ("14-Dockerfile.bad", 16, "SPK202"),
    ("14-Dockerfile.bad", 17, "SPK202"),
    ("14-Dockerfile.bad", 18, "SPK101"),
    ("14-Dockerfile.bad", 20, "SPK205"),  # RUN using the build argument GITHUB_TOKEN: kept in docker history
    ("14-Dockerfile.bad", 21, "SPK205"),  # RUN writing the build argument HF_TOKEN into /root/.netrc
    ("15-notebook-leaky.ipynb", 25, "SPK201"),
    ("15-notebook-leaky.ipynb", 27, "SPK201"),
    ("15-notebook-leaky.ipynb", 36, "SPK207"),
    ("15-notebook-leaky.ipynb", 40, "SPK204"),
    ("15-notebook-leaky.ipynb", 45, "SPK201"),
    ("15-notebook-leaky.ipynb", 46, "SPK203"),
    ("15-notebook-leaky.ipynb", 59, "SPK204"),
    ("15-notebook-leaky.ipynb", 88, "SPK204"),
    ("15-notebook-leaky.ipynb", 139, "SPK204"),
    ("15-notebook-leaky.ipynb", 143, "SPK204"),
    ("15-notebook-leaky.ipynb", 149, "SPK201"),
    ("16-hydra-config.yaml", 30, "SPK201"),
    ("17-hf-training-args.yaml", 28, "SPK201"),
}


def run_json(capsys: pytest.CaptureFixture[str], *options: str) -> dict:
    code = main(["check", str(CORPUS), "--format", "json", *options])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    assert "internal error" not in captured.err
    return json.loads(captured.out)


def corpus_name(path: str) -> str:
    return path.split("corpus/", 1)[1]


def test_images_and_secrets_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--select", "SPK0,SPK1,SPK2")
    got = {(corpus_name(f["path"]), f["line"], f["rule"]) for f in report["findings"]}
    assert sorted(got - EXPECTED_META_IMAGE_SECRET) == []
    assert sorted(EXPECTED_META_IMAGE_SECRET - got) == []


def test_good_files_have_no_image_or_secret_findings(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, "--select", "SPK1,SPK2")
    assert [f for f in report["findings"] if corpus_name(f["path"]) in GOOD_FILES] == []


def test_every_rule_runs_without_crash_or_unparseable_file(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys)
    assert not [f for f in report["findings"] if f["rule"] == "SPK001"]
    assert report["summary"]["files"] >= 20
