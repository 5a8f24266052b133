"""No output format ever carries a raw secret; suppressions and pragmas land on secret findings;
the shared corpus gives exactly the secrets its README lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import Fakes
from fakes import docker_save
from fakes import image_config

from spikelint.cli import main
from spikelint.engine import lint_snippet

FAKE = Fakes(23)
FORMATS = ("text", "json", "sarif", "junit", "gitlab", "github")
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def seeded_repository(root: Path) -> list[str]:
    """A small repository with one secret in every kind of file; returns the raw secrets."""
    secrets = [FAKE.hf(), FAKE.wandb(), FAKE.github(), FAKE.password(), FAKE.aws_secret(), FAKE.openai(),
               FAKE.anthropic(), FAKE.private_key(), FAKE.nvidia(), FAKE.jwt()]
    hf, wandb, github, password, aws, openai, anthropic, key, nvidia, jwt = secrets
    (root / "k8s").mkdir()
    (root / "k8s" / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers:\n"
        "        - name: m\n          image: harbor.example.org/ml/t:1.0.0\n          env:\n"
        f"            - name: HF_TOKEN\n              value: {hf}\n"
        f"          args: [\"--api-key\", \"{openai}\"]\n")
    (root / "launch.sh").write_text(f"#!/bin/bash\ncurl -H 'Authorization: Bearer {jwt}' https://x\n"
                                    f"git clone https://bot:{password}@git.example.org/a.git\n")
    (root / "conf.yaml").write_text(f"wandb:\n  api_key: {wandb}\nclaude:\n  key: {anthropic}\n")
    (root / "train.py").write_text(f"NGC_KEY = \"{nvidia}\"\n")
    (root / ".env").write_text(f"AWS_SECRET_ACCESS_KEY={aws}\n")
    (root / "id_rsa").write_text(key)
    (root / "nb.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
        "source": ["print(t)"], "outputs": [{"output_type": "stream", "name": "stdout", "text": [f"{github}\n"]}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    docker_save(root / "image.tar", [{"root/.netrc": f"machine x login y password {hf}\n".encode()}],
                image_config([f"WANDB_API_KEY={wandb}"], [f"|1 TOKEN={github} /bin/sh -c make"]))
    return secrets


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_format_prints_a_raw_secret(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secrets = seeded_repository(tmp_path)
    code = main(["check", str(tmp_path), "--select", "SPK2", "--format", fmt, "--jobs", "1"])
    output = capsys.readouterr()
    printed = output.out + output.err
    assert code == 1
    for secret in secrets:
        for line in secret.splitlines():
            if len(line) >= 8:
                assert line not in printed, f"{fmt} output holds a raw secret"
    assert printed.count("…") + printed.count("\\u2026") >= 12  # JSON escapes the ellipsis


def test_report_file_and_baseline_hold_no_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    secrets = seeded_repository(repository)
    baseline = tmp_path / "baseline.json"
    report = tmp_path / "report.sarif"
    main(["check", str(repository), "--select", "SPK2", "--write-baseline", str(baseline), "--jobs", "1"])
    main(["check", str(repository), "--select", "SPK2", "--format", "sarif", "--output", str(report), "--jobs", "1"])
    capsys.readouterr()
    written = baseline.read_text() + report.read_text()
    assert all(secret.splitlines()[0] not in written or len(secret.splitlines()[0]) < 8 for secret in secrets
               if not secret.startswith("-----"))


# --------------------------------------------------------------------------- suppressions


def test_inline_disable_and_detect_secrets_pragmas() -> None:
    text = (f"a:\n  token: {FAKE.hf()}  # spikelint: disable=SPK201 reason=\"fixture\"\n"
            f"  api_key: {FAKE.wandb()}  # pragma: allowlist secret\n"
            f"  # pragma: allowlist nextline secret\n  password: {FAKE.password()}\n"
            f"  other: {FAKE.github()}\n")
    findings = lint_snippet("c.yaml", text, {"select": ["SPK2"]})
    assert [(finding.line, finding.rule) for finding in findings] == [(6, "SPK201")]


def test_pragma_on_a_shell_command_line_and_a_dockerfile_env() -> None:
    text = f"#!/bin/sh\nhuggingface-cli login --token {FAKE.hf()}  # pragma: allowlist secret\n"
    assert lint_snippet("a.sh", text, {"select": ["SPK2"]}) == []
    dockerfile = ("FROM harbor.example.org/b/p:1.0.0@sha256:" + "a" * 64 + "\n"
                  f"# spikelint: disable=SPK202\nENV HF_TOKEN={FAKE.hf()}\n")
    assert lint_snippet("Dockerfile", dockerfile, {"select": ["SPK2"]}) == []


# --------------------------------------------------------------------------- the shared corpus

CORPUS_EXPECTED = {
    "02-runai-cli-bad.sh": [(16, "SPK202"), (23, "SPK202"), (25, "SPK203")],
    "04-runai-interactiveworkload-bad.yaml": [(30, "SPK202"), (32, "SPK202")],
    "05-runai-distributedworkload.yaml": [(25, "SPK202")],
    "07-runai-rest-workspace-bad.json": [(13, "SPK202"), (14, "SPK202")],
    "09-k8s-pod-bad.yaml": [(19, "SPK203"), (27, "SPK203"), (31, "SPK202"), (33, "SPK202")],
    "12-helm-kustomize/overlay/kustomization.yaml": [(19, "SPK206")],
    "12-helm-kustomize/chart/values.yaml": [(16, "SPK201")],
    "15-notebook-leaky.ipynb": [(25, "SPK201"), (27, "SPK201"), (36, "SPK207"), (40, "SPK204"), (45, "SPK201"),
                                (46, "SPK203"), (59, "SPK204"), (88, "SPK204"),
                                (139, "SPK204"), (143, "SPK204"), (149, "SPK201")],
    "16-hydra-config.yaml": [(30, "SPK201")],
    "17-hf-training-args.yaml": [(28, "SPK201")],
}
CORPUS_GOOD = ("01-runai-cli-good.sh", "03-runai-trainingworkload-good.yaml", "06-runai-rest-training-good.json",
               "08-k8s-job-good.yaml", "13-Dockerfile.good", "18-lightning-cli.yaml", "10-kubeflow-pytorchjob.yaml",
               "11-jobset-and-volcano.yaml", "19-torchtitan.toml")


def corpus_findings(name: str) -> list[tuple[int, str]]:
    path = CORPUS / name
    findings = lint_snippet(name, path.read_text(encoding="utf-8"), {"select": ["SPK2"]})
    return [(finding.line, finding.rule) for finding in findings]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs the workload corpus of spikelint's development workspace, which a clone does not include")
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_secrets(name: str) -> None:
    assert corpus_findings(name) == CORPUS_EXPECTED[name]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs the workload corpus of spikelint's development workspace, which a clone does not include")
def test_corpus_dockerfile_secrets_as_dockerfile() -> None:
    text = (CORPUS / "14-Dockerfile.bad").read_text(encoding="utf-8")
    findings = lint_snippet("Dockerfile", text, {"select": ["SPK2"]})
    # 20 and 21: RUN lines using the build arguments GITHUB_TOKEN (the pip URL) and HF_TOKEN keep them in the history
    assert [(finding.line, finding.rule) for finding in findings] == [(14, "SPK202"), (16, "SPK202"), (17, "SPK202"),
                                                                      (20, "SPK205"), (21, "SPK205")]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs the workload corpus of spikelint's development workspace, which a clone does not include")
@pytest.mark.parametrize("name", CORPUS_GOOD)
def test_corpus_good_files_have_no_secret(name: str) -> None:
    assert corpus_findings(name) == []
