"""Hand-built findings and sources for the reporter tests (imported by conftest and tests)."""

from __future__ import annotations

from pathlib import Path

from spikelint.pipeline.fingerprint import assign_fingerprints
from spikelint.pipeline.fingerprint import fingerprint
from spikelint.model import Finding
from spikelint.model import Rule

REPO = Path(__file__).resolve().parents[2]
SECRET = "hf_abcdEFGHijklMNOPqrstUVWXyz0123456789"
SPACED = "deploy/train job.yaml"
UNICODE = "données/作业.yaml"


def shared_folder() -> Path | None:
    """The read-only ``shared/`` folder next to the checkout (or inside it), if present."""
    for candidate in (REPO.parent / "shared", REPO / "shared"):
        if (candidate / "reference").is_dir():
            return candidate
    return None


def rule(rule_id: str, name: str, severity: str, concern: str) -> Rule:
    return Rule(
        id=rule_id,
        name=name,
        severity=severity,
        summary=f"summary of {name}",
        rationale=f"why {name} matters",
        remediation=f"how to fix {name}",
        concern=concern,
    )


RULES = (
    rule("SPK101", "mutable-image-tag", "error", "images"),
    rule("SPK102", "unpinned-image", "warning", "images"),
    rule("SPK202", "secret-env-literal", "error", "secrets"),
    rule("SPK303", "emptydir-for-durable-data", "warning", "storage"),
    rule("SPK501", "pipe-without-pipefail", "error", "logs"),
    rule("SPK702", "no-cleanup-ttl", "info", "capacity"),
    rule("SPK703", "short-grace-period", "warning", "capacity"),  # selected, never fires
)

SOURCES = {
    SPACED: [
        "apiVersion: batch/v1",
        "kind: Job",
        "      image: nvcr.io/nvidia/pytorch:24.05-py3",
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
        "        - name: train",
        "          image: pytorch/pytorch:latest",
        "          env:",
        "            - name: HF_TOKEN",
        f"              value: {SECRET}",
        "      volumes:",
        "        - name: ckpt",
        "          emptyDir: {}",
        "        - name: ckpt2",
        "          emptyDir: {}",
    ],
    "scripts/launch.sh": [
        "#!/bin/bash",
        "\tpython train.py | tee train.log",
    ],
    UNICODE: [
        "kind: Job  # 训练作业",
    ],
    "clean/ok.yaml": ["kind: ConfigMap"],
}


def build_findings() -> list[Finding]:
    """A handful of findings, deliberately out of order, including a secret and a repeat."""
    specs = [
        # rule, name, severity, path, line, column, end_line, end_column, message, key
        ("SPK501", "pipe-without-pipefail", "error", "scripts/launch.sh", 2, 2, 2, 33,
         "'python train.py | tee train.log' hides a failure of python: set -o pipefail first", "python train.py | tee train.log"),
        ("SPK101", "mutable-image-tag", "error", SPACED, 9, 18, 9, 40,
         "image 'pytorch/pytorch:latest' uses the mutable tag 'latest'", "pytorch/pytorch:latest"),
        ("SPK202", "secret-env-literal", "error", SPACED, 12, 22, 12, 61,
         "env var HF_TOKEN holds a literal secret 'hf_a…' (Hugging Face token); use a secretKeyRef", "sha256:deadbeef"),
        ("SPK102", "unpinned-image", "warning", SPACED, 3, 14, 3, 46,
         "image 'nvcr.io/nvidia/pytorch:24.05-py3' has a floating tag", "nvcr.io/nvidia/pytorch:24.05-py3"),
        ("SPK303", "emptydir-for-durable-data", "warning", SPACED, 17, 11, None, None,
         "emptyDir volume mounted at a durable path", "emptyDir ckpt"),
        ("SPK303", "emptydir-for-durable-data", "warning", SPACED, 15, 11, None, None,
         "emptyDir volume mounted at a durable path", "emptyDir ckpt"),
        ("SPK702", "no-cleanup-ttl", "info", UNICODE, 1, 1, None, None,
         "Job has no ttlSecondsAfterFinished", "Job"),
    ]
    in_file_order = sorted(specs, key=lambda spec: (spec[3], spec[4], spec[5]))
    prints = dict(zip(
        [id(spec) for spec in in_file_order],
        assign_fingerprints((spec[0], spec[3], spec[9]) for spec in in_file_order),
    ))
    return [
        Finding(rule=spec[0], name=spec[1], severity=spec[2], path=spec[3], line=spec[4],
                column=spec[5], end_line=spec[6], end_column=spec[7], message=spec[8],
                fingerprint=prints[id(spec)])
        for spec in specs
    ]


def make_finding(rule_id: str = "SPK101", path: str = "a.yaml", line: int = 1, column: int = 1,
                 message: str = "message", severity: str = "error", name: str = "mutable-image-tag",
                 end_line: int | None = None, end_column: int | None = None, key: str = "") -> Finding:
    return Finding(rule=rule_id, name=name, severity=severity, path=path, line=line, column=column,
                   message=message, fingerprint=fingerprint(rule_id, path, key or message),
                   end_line=end_line, end_column=end_column)
