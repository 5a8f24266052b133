"""The document-level secret check reads the document's workloads from its context.

SPK202 reports a secret-named env literal through the workload model; the general detector
(SPK201) steps aside for that value only when the workloads the engine built say so, so the
check never runs the adapters a second time.
"""

from __future__ import annotations

from datetime import date

import pytest

from spikelint.adapters import workloads_in
from spikelint.checks.registry import CheckContext
from spikelint.checks.secrets.checks import secrets_in_document
from spikelint.config import Config
from spikelint.discovery.project import Project
from spikelint.documents import parse_text
from spikelint.engine import lint_snippet
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import SourceFile

TOKEN = "hf_" + "Qm7xT2pLk9VbN4wRz8YcJ3sDfG6hU1eAkP"
POD = f"""apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
    - name: train
      image: ghcr.io/acme/train@sha256:{"a" * 64}
      env:
        - name: HF_TOKEN
          value: {TOKEN}
"""


def _document() -> Document:
    return parse_text(SourceFile("k8s/pod.yaml", "k8s/pod.yaml", FileKind.YAML), POD)


def test_general_finding_steps_aside_for_the_workloads_in_the_context() -> None:
    document = _document()
    config = Config()
    workloads = tuple(workloads_in(document, config))
    assert len(workloads) == 1
    with_workloads = CheckContext(config, Project(), date(2026, 1, 1), workloads)
    assert [problem.rule for problem in secrets_in_document(document, with_workloads)] == []


def test_without_workloads_in_the_context_the_general_detector_reports_the_value() -> None:
    document = _document()
    bare = CheckContext(Config(), Project(), date(2026, 1, 1))
    assert [(problem.rule, problem.line) for problem in secrets_in_document(document, bare)] == [("SPK201", 11)]


def test_the_engine_fills_the_context_one_finding_for_the_value() -> None:
    findings = lint_snippet("k8s/pod.yaml", POD)
    assert [(finding.rule, finding.line) for finding in findings if finding.rule.startswith("SPK20")] == [("SPK202", 11)]


@pytest.mark.parametrize(("name", "value", "secret"), [
    ("AUTH_PROXY_IMAGE", "gcr.io/example-releases/auth-proxy@sha256:" + "0a1b2c3d" * 8, False),  # a pinned image
    ("AUTH_PROXY_IMAGE", "registry.example.io/team/proxy:1.4.2@sha256:" + "9f8e7d6c" * 8, False),
    ("AUTH_TOKEN", "q8Zr3Lk2Vm9Xw4Pt7Nc1Hb6Yd5Gf0Ja2", True),  # a random literal under a secret name still is one
])
def test_an_image_pinned_by_digest_is_no_credential(name: str, value: str, secret: bool) -> None:
    from spikelint.checks.secrets.env import env_literal

    assert env_literal(name, value) is secret
