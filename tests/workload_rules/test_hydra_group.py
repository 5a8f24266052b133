"""A file of Hydra's ``hydra`` config group configures ``hydra.*``: its run/sweep folders are output folders."""

from __future__ import annotations

import pytest

from spikelint.engine import lint_snippet
from spikelint.facts.config_tree import config_package

HYDRA_DEFAULT = """\
defaults:
  - override hydra_logging: colorlog
run:
  dir: ${paths.log_dir}/${task_name}/runs/${now:%Y-%m-%d}_${now:%H-%M-%S}
sweep:
  dir: ${paths.log_dir}/${task_name}/multiruns/${now:%Y-%m-%d}_${now:%H-%M-%S}
  subdir: ${hydra.job.num}
"""


@pytest.mark.parametrize(("path", "package"), [
    ("configs/hydra/default.yaml", ("hydra",)),
    ("hydra/default.yml", ("hydra",)),
    ("configs/config.yaml", ()),
    ("configs/hydra/README.md", ()),
    (None, ()),
])
def test_config_package(path: str | None, package: tuple[str, ...]) -> None:
    assert config_package(path) == package


def test_timestamped_run_and_sweep_folders_in_the_hydra_group() -> None:
    findings = lint_snippet("configs/hydra/default.yaml", HYDRA_DEFAULT)
    assert [(finding.line, finding.rule) for finding in findings] == [(4, "SPK406"), (6, "SPK406")]


def test_the_same_keys_elsewhere_are_not_hydra_settings() -> None:
    assert lint_snippet("configs/trainer/default.yaml", HYDRA_DEFAULT) == []


RUN_DIR_BESIDE = """\
trainer:
  output_dir: {output_dir}
  save_steps: 500
hydra:
  run:
    dir: outputs/${{now:%Y-%m-%d}}/${{now:%H-%M-%S}}
"""


@pytest.mark.parametrize(("output_dir", "fires"), [
    ("/mnt/pvc/ckpt/bert", False),  # checkpoints on a stable absolute path: the run dir holds Hydra's logs only
    ("s3://bucket/ckpt/bert", False),
    ("ckpt/bert", True),  # relative: inside the run dir where Hydra changes into it
    ("${hydra:run.dir}/ckpt", True),  # under the timestamped folder itself
])
def test_hydra_default_run_dir_is_reported_only_where_the_checkpoints_depend_on_it(output_dir: str, fires: bool) -> None:
    """A new user's Hydra config with its checkpoints on a PVC was an SPK406 error: a restart finds them."""
    findings = lint_snippet("configs/train.yaml", RUN_DIR_BESIDE.format(output_dir=output_dir))
    assert [(finding.line, finding.rule) for finding in findings if finding.rule == "SPK406"] == ([(6, "SPK406")] if fires else [])

