"""SPK604's name matching, and the capacity rules end to end through the engine."""

from __future__ import annotations

import pytest

from spikelint.checks.contract.identity import config_references
from spikelint.checks.contract.identity import records
from spikelint.engine import lint_snippet

from adapter_support import one


@pytest.mark.parametrize(("name", "field"), [
    ("seed", "seed"), ("SEED", "seed"), ("random-seed", "seed"),
    ("PL_SEED_EVERYTHING", "seed"), ("trainer.seed", "seed"), ("ml.example.org/code-revision", "code_revision"),
    ("GIT_SHA", "code_revision"), ("git.commit", "code_revision"), ("MODEL_REVISION", "code_revision"),
    ("DATASET_VERSION", "dataset_version"), ("data-version", "dataset_version"), ("train.dataset_revision",
                                                                                  "dataset_version"),
])
def test_names_that_record_a_field(name: str, field: str) -> None:
    assert records(name, field)


@pytest.mark.parametrize(("name", "field"), [
    ("seeds", "seed"), ("seedling", "seed"), ("myseed", "seed"), ("revisions", "code_revision"),
    ("commit_message", "code_revision"), ("dataset", "dataset_version"), ("version", "dataset_version"),
    ("sha", "code_revision"),
])
def test_names_that_do_not(name: str, field: str) -> None:
    assert not records(name, field)


def test_config_references_in_commands() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
        - name: c
          image: c:1.0.0
          command: ["bash", "-c", "python train.py --config=/cfg/a.yaml --deepspeed ds.json"]
          args: ["--config-path", "/workspace/conf", "--config-name", "sft"]
          env: [{name: CONFIG, value: /cfg/env.toml}]
"""
    assert config_references(one("job.yaml", text)) == ["/cfg/a.yaml", "ds.json", "/cfg/env.toml",
                                                       "/workspace/conf/sft.yaml"]


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: j
spec:
  template:
    spec:
      terminationGracePeriodSeconds: {grace}
      restartPolicy: Never
      containers:
        - name: c
          image: c:1.0.0
          command: ["python", "train.py", "--config", "/workspace/configs/run.yaml"]
          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def test_capacity_rules_end_to_end() -> None:
    findings = lint_snippet("job.yaml", JOB.format(grace=5, gpus=2), {"select": ["SPK7"], "max_gpus": 1})
    assert [(f.rule, f.line, f.column, f.severity) for f in findings] == [
        ("SPK702", 2, 1, "info"), ("SPK704", 2, 1, "info"), ("SPK703", 8, 38, "warning"),
        ("SPK701", 14, 48, "warning")]
    assert lint_snippet("job.yaml", JOB.format(grace=30, gpus=1), {"select": ["SPK701", "SPK703"],
                                                                  "max_gpus": 1}) == []


def test_policy_rules_are_opt_in() -> None:
    """SPK701 and SPK604 are a team's policy: silent until max_gpus / required_run_identity are set."""
    text = JOB.format(grace=30, gpus=8)
    assert lint_snippet("job.yaml", text, {"select": ["SPK701", "SPK604"]}) == []
    found = lint_snippet("job.yaml", text, {"select": ["SPK701", "SPK604"], "max_gpus": 1,
                                            "required_run_identity": ["seed"]})
    assert sorted(f.rule for f in found) == ["SPK604", "SPK701"]


def test_identity_found_in_the_referenced_config_only() -> None:
    text = JOB.format(grace=30, gpus=1)
    config = "seed: 1\ngit_commit: abc\ndata:\n  version: v3\n"
    policy = {"select": ["SPK604"], "required_run_identity": ["seed", "code_revision", "dataset_version"]}
    assert lint_snippet("k8s/job.yaml", text, policy, extra_files={"configs/run.yaml": config}) == []
    [finding] = lint_snippet("k8s/job.yaml", text, policy, extra_files={"configs/run.yaml": "seed: 1\n"})
    assert finding.line == 2 and "code_revision, dataset_version" in finding.message
