"""SPK406 on Hydra/OmegaConf-style ``key=value`` overrides whose key names the run's folder."""

from __future__ import annotations

import pytest

from spikelint.checks.checkpoint.resume import names_run_folder
from spikelint.engine import lint_snippet

SELECT = {"select": ["SPK406"]}


def _lines(text: str, path: str = "launch.sh") -> list[tuple[int, int]]:
    return [(f.line, f.column) for f in lint_snippet(path, text, SELECT)]


@pytest.mark.parametrize("key, names", [
    (("trainer", "default_local_dir"), True), (("actor", "checkpoint", "ckpt_namespace"), True),
    (("checkpoint", "dir"), True), (("run_dir",), True), (("exp_dir",), True), (("work_dir",), True),
    (("logger", "wandb", "name"), False), (("trainer", "log_dir"), False), (("data", "path"), False),
    (("unscanned_ckpt_path",), False), (("trainer", "experiment_name"), False),
])
def test_names_run_folder(key: tuple[str, ...], names: bool) -> None:
    assert names_run_folder(key) is names


def test_overrides_with_the_launch_time() -> None:
    text = ("python3 -m trainer.main \\\n    trainer.default_local_dir=/ckpt/run-$(date +%s) \\\n"
            "    trainer.total_epochs=3\n"
            "python3 -m rl.run actor.checkpoint.ckpt_namespace=grpo-$(date +%s)\n")
    assert _lines(text) == [(2, 31), (4, 51)]


def test_override_through_a_variable_is_reported_at_the_assignment() -> None:
    text = "NS=grpo-$(date +%Y%m%d)\npython3 -m rl.run checkpoint.ckpt_namespace=$NS\n"
    assert _lines(text) == [(1, 4)]


def test_near_misses() -> None:
    text = ("python3 -m rl.run logger.wandb.name=grpo-$(date +%s) trainer.log_dir=/logs/$(date +%F)\n"
            "export UNSCANNED_CKPT_PATH=gs://bucket/$(date +%Y-%m-%d)/items\n"
            "python3 -m rl.run trainer.default_local_dir=/ckpt/${JOB_NAME}\n")
    assert _lines(text) == []


def test_workload_args() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: grpo
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: t
          image: registry.example.org/rl:1.2.3@sha256:0000000000000000000000000000000000000000000000000000000000000000
          command: ["bash", "-c"]
          args: ["python3 -m rl.train trainer.default_local_dir=/ckpt/run-$(date +%s)"]
"""
    assert [line for line, _ in _lines(text, "job.yaml")] == [13]
