"""SPK404: only a training program's resume keys and flags resume implicitly; keys that merely contain
the word (``resume_past_end``) or name a checkpoint for another step (``checkpoint_name``) do not."""

from __future__ import annotations

import pytest

from spikelint.facts.runconfig import RESUME
from spikelint.facts.runconfig import Setting
from spikelint.facts.runconfig import is_implicit_resume
from spikelint.model import Located
from tests.workload_rules.conftest import lint
from tests.workload_rules.conftest import pairs


def spk404(filename: str, text: str) -> set[tuple[int, str]]:
    return {pair for pair in pairs(lint(filename, text)) if pair[1] == "SPK404"}


@pytest.mark.parametrize("filename, text, line", [
    ("configs/sft.yaml", "output_dir: /ckpt/sft\nresume_from_checkpoint: true\n", 2),
    ("configs/fit.yaml", "trainer:\n  default_root_dir: /ckpt/vit\nckpt_path: last\n", 3),
    ("configs/exp.yaml", "exp_manager:\n  exp_dir: /results\n  resume_if_exists: true\n", 3),
    ("configs/ppo.yaml", "trainer:\n  default_local_dir: /ckpt/ppo\n  resume_mode: auto\n", 3),
    ("scripts/train.sh", "#!/bin/bash\npython train.py --output_dir /ckpt/x --resume auto\n", 2),
    ("scripts/train.sh", "#!/bin/bash\npython pretrain_gpt.py --save /ckpt/gpt --load /ckpt/gpt --auto-resume\n", 2),
])
def test_resume_keys_of_training_programs_fire(filename: str, text: str, line: int) -> None:
    assert spk404(filename, text) == {(line, "SPK404")}


@pytest.mark.parametrize("filename, text", [
    # a boolean about running past the end of the data, not a resume
    ("configs/sft.yaml", "output_dir: /ckpt/sft\nresume_past_end: true\n"),
    ("scripts/train.sh", "#!/bin/bash\npython train.py --output_dir /ckpt/x --resume_past_end true\n"),
    # a conversion step names the checkpoint it converts
    ("configs/train.yaml", "output_dir: /ckpt/run\nconvert:\n  checkpoint_name: latest\n  format: hf\n"),
    ("configs/train.yaml", "output_dir: /ckpt/run\ncheckpoint_name: last\n"),
    # the resume names a specific checkpoint
    ("configs/sft.yaml", "output_dir: /ckpt/sft\nresume_from_checkpoint: /ckpt/sft/checkpoint-1500\n"),
])
def test_keys_that_do_not_resume_a_run(filename: str, text: str) -> None:
    assert spk404(filename, text) == set()


def _setting(key: tuple[str, ...], value: object, origin: str) -> Setting:
    return Setting(key, value, Located(value, 1, 1), frozenset((RESUME,)), value, origin)


@pytest.mark.parametrize("key, origin, expected", [
    (("resume_from_checkpoint",), "resume_from_checkpoint", True),
    (("trainer", "resume_mode"), "trainer.resume_mode", True),
    (("auto_resume",), "--auto-resume", True),
    (("checkpoint", "load_step"), "checkpoint.load_step", True),
    (("hf_resume_from_checkpoint",), "env HF_RESUME_FROM_CHECKPOINT", True),
    (("resume_past_end",), "resume_past_end", False),
    (("checkpoint_name",), "checkpoint_name", False),
    (("env_resume_past_end",), "env ENV_RESUME_PAST_END", False),
    (("hf_resume_from_checkpoint",), "hf_resume_from_checkpoint", False),  # a prefix only for env names
])
def test_resume_keys_are_matched_whole(key: tuple[str, ...], origin: str, expected: bool) -> None:
    assert is_implicit_resume(_setting(key, "latest", origin)) is expected


def test_a_json_schema_that_admits_a_resume_key_sets_nothing() -> None:
    from spikelint.engine import lint_snippet

    schema = ('{\n  "$schema": "http://json-schema.org/draft-07/schema#",\n  "type": "object",\n'
              '  "properties": {\n    "resume_from_checkpoint": true,\n    "ckpt_path": {"type": "string"}\n  }\n}\n')
    assert [f.rule for f in lint_snippet("schemas/train_config.json", schema) if f.rule == "SPK404"] == []
    config = '{\n  "resume_from_checkpoint": true\n}\n'
    assert [f.line for f in lint_snippet("configs/train_config.json", config) if f.rule == "SPK404"] == [2]
