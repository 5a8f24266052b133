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
