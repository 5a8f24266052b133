"""Kind detection and template skipping on names found in real repositories."""

from __future__ import annotations

import pytest

from spikelint.documents import is_helm_template
from spikelint.engine import lint_snippet
from spikelint.files import detect_kind
from spikelint.model import FileKind

GITHUB_TOKEN = "ghp_" + "sp8ysdo8uZ1lJgCLENkFyfhRjx3XTQhgq1W3"


@pytest.mark.parametrize("name", ["Dockerfile", "dockerfile", "Dockerfile.gpu", "Dockerfile.bak", "train.Dockerfile",
                                  "Dockerfile-cuda12", "14-Dockerfile.bad", "Containerfile", "Dockerfile.template"])
def test_dockerfiles(name: str) -> None:
    assert detect_kind(name) == FileKind.DOCKERFILE


@pytest.mark.parametrize("name", ["Dockerfile.dockerignore", "dockerfile_parser.go", "dockerfile.test.ts",
                                  "Dockerfile.patch", "dockerfile.vim", "Dockerfile.html", "Dockerfile.j2"])
def test_names_that_only_mention_a_dockerfile(name: str) -> None:
    assert detect_kind(name) != FileKind.DOCKERFILE


@pytest.mark.parametrize("name", ["guides/custom-dockerfile.mdx", "writing-a-dockerfile.markdown"])
def test_a_page_about_dockerfiles_with_front_matter_is_no_manifest(name: str) -> None:
    assert detect_kind(name, "---") == FileKind.TEXT


def test_a_dockerfile_that_a_program_fills_in_is_a_template() -> None:
    from spikelint.engine import lint_snippet

    text = "FROM python:3.11.4\n{extra_steps}\nRUN pip install -r requirements.txt\n"
    assert [(f.rule, f.line) for f in lint_snippet("tests/Dockerfile.notebook", text)] == [("SPK003", 2)]
    # the rest is still read: a floating base image is reported
    floating = text.replace("3.11.4", "3.11")
    assert [(f.rule, f.line) for f in lint_snippet("tests/Dockerfile.notebook", floating)] == [
        ("SPK102", 1), ("SPK003", 2)]
    broken = "FROM python:3.11.4\nRUNN pip install -r requirements.txt\n"
    assert [(f.rule, f.line) for f in lint_snippet("tests/Dockerfile.notebook", broken)] == [("SPK001", 2)]


def test_dockerignore_beside_a_dockerfile_is_not_unparseable() -> None:
    findings = lint_snippet("docker/Dockerfile.dockerignore", "**/__pycache__\n*.ckpt\n!configs/\n")
    assert findings == []


@pytest.mark.parametrize(("path", "kind", "skipped"), [
    ("chart/templates/job.yaml", FileKind.YAML, True),
    ("chart/templates/_helpers.tpl", FileKind.TEXT, True),
    ("chart/templates/NOTES.txt", FileKind.TEXT, True),
    ("app/templates/index.html", FileKind.TEXT, False),
    ("app/templates/email.txt", FileKind.TEXT, False),
    ("chart/values.yaml", FileKind.YAML, False),
])
def test_helm_templates(path: str, kind: str, skipped: bool) -> None:
    assert is_helm_template(path, "{{ .Values.x }}\n", kind) is skipped


def test_web_templates_are_scanned_for_secrets() -> None:
    findings = lint_snippet("app/templates/index.html", f"<p>{{{{ user }}}}</p>\n<!-- {GITHUB_TOKEN} -->\n")
    assert [(finding.line, finding.rule) for finding in findings] == [(2, "SPK201")]


def test_helm_chart_templates_stay_skipped() -> None:
    findings = lint_snippet("chart/templates/_helpers.tpl", '{{- define "trainer.name" -}}\n{{- end }}\n')
    assert [(finding.line, finding.rule) for finding in findings] == [(1, "SPK003")]


def test_a_directive_above_a_continued_command_covers_all_its_lines() -> None:
    from spikelint.documents.suppressions import parse_suppressions

    lines = ["# spikelint: disable=SPK202", "runai submit x \\", "  -e A=1 \\", "  -e TOKEN=abc", "echo next"]
    (suppression,) = parse_suppressions(lines)
    assert suppression.applies_to == (1, 2, 3, 4)


def test_suppressing_one_env_literal_of_a_continued_dockerfile_instruction() -> None:
    text = ("FROM alpine:3.20.1\n# spikelint: disable=SPK202\nENV A=1 \\\n    HF_TOKEN=hf_eyjcnUuFzFt44ekXQzQPepyVSaid8m1iQR \\\n"
            "    B=2\nENV WANDB_API_KEY=df6c097c4489c5226cf9a9dba1abbabf2374fdfa\n")
    assert [(finding.line, finding.rule) for finding in lint_snippet("Dockerfile", text)] == [(6, "SPK202")]


def test_a_manifest_saved_as_a_dockerfile_name_is_yaml() -> None:
    """``Dockerfile.job`` holding a Job is read as YAML (its workload rules run), not as 'unknown instruction'."""
    from spikelint.engine import lint_snippet
    from spikelint.files import detect_kind

    assert detect_kind("Dockerfile.job", "apiVersion: batch/v1") == "yaml"
    assert detect_kind("Dockerfile.k8s", "---") == "yaml"
    assert detect_kind("Dockerfile.cuda", "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04") == "dockerfile"
    assert detect_kind("Dockerfile.cuda", "# syntax=docker/dockerfile:1") == "dockerfile"
    manifest = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                "  - {name: c, image: 'busybox:latest', command: [sleep, '1']}\n")
    findings = lint_snippet("Dockerfile.pod", manifest, {})
    assert [(f.rule, f.line) for f in findings] == [("SPK101", 6)]


@pytest.mark.parametrize(("name", "head"), [("pretrain.sbatch", ""), ("job.slurm", ""), ("run", "#SBATCH -N 2")])
def test_slurm_batch_scripts_are_shell(name: str, head: str) -> None:
    from spikelint.files import detect_kind

    assert detect_kind(name, head) == "shell"
