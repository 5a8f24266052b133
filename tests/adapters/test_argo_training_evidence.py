"""Argo Workflow steps are training workloads only on strong evidence (a training script, a launcher, trainer flags)."""

from __future__ import annotations

from spikelint.engine import lint_snippet

WORKFLOW = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {{generateName: step-}}
spec:
  entrypoint: main
  templates:
    - name: main
      container:
        image: harbor.example.org/ml/tools:1.2.3
        command: [python, {script}]
        args: [{args}]
"""


def rules(script: str, args: str) -> set[str]:
    findings = lint_snippet("wf.yaml", WORKFLOW.format(script=script, args=args))
    return {finding.rule for finding in findings}


def test_a_data_step_is_not_a_training_workload() -> None:
    assert rules("/scripts/shard.py", "--out, s3://acme/c4/shards") == set()


def test_a_training_step_is() -> None:
    assert {"SPK302", "SPK401"} <= rules("train.py", "--epochs, '3'")


def test_trainer_flags_make_a_generic_script_training() -> None:
    assert "SPK301" in rules("run.py", "--output_dir, /tmp/out, --save_steps, '100'")
