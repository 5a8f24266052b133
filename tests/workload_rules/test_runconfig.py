"""Run-config reading: key classification, flags, env names, config trees, interpolation, facts."""

from __future__ import annotations

from spikelint.documents.jsondoc import parse_json
from spikelint.documents.tomldoc import parse_toml
from spikelint.documents.yamldoc import parse_yaml
from spikelint.model import Located
from spikelint.facts.runconfig import CKPT_INTERVAL
from spikelint.facts.runconfig import CKPT_LOCATION
from spikelint.facts.runconfig import CONFIG_REF
from spikelint.facts.runconfig import LOG
from spikelint.facts.runconfig import LOG_HOLDER
from spikelint.facts.config_tree import MAX_RESOLVED_CHARS
from spikelint.facts.config_tree import MAX_SOURCES
from spikelint.facts.runconfig import MODEL_ONLY
from spikelint.facts.runconfig import OUTPUT
from spikelint.facts.runconfig import RESUME
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.config_tree import config_settings
from spikelint.facts.runconfig import env_roles
from spikelint.facts.config_tree import facts_of
from spikelint.facts.flags import flag_settings
from spikelint.facts.runconfig import is_path_like
from spikelint.facts.runconfig import normalise_key
from spikelint.facts.flags import positional_configs
from spikelint.facts.runconfig import roles_of
from spikelint.facts.runconfig import summarise


def words(*texts: str) -> list[Located]:
    found, column = [], 1
    for text in texts:
        found.append(Located(text, 1, column, 1, column + len(text)))
        column += len(text) + 1
    return found


def by_key(settings):  # type: ignore[no-untyped-def]
    return {setting.key: setting for setting in settings}


# --------------------------------------------------------------------------- keys


def test_keys_are_normalised() -> None:
    assert normalise_key("--Trainer.Default-Root-Dir") == ("trainer", "default_root_dir")
    assert normalise_key("+checkpoint.interval") == ("checkpoint", "interval")


def test_output_checkpoint_and_log_keys() -> None:
    assert {OUTPUT, LOG_HOLDER, CKPT_LOCATION} <= roles_of(("output_dir",))  # HF Trainer checkpoints there
    assert CKPT_LOCATION not in roles_of(("work_dir",))
    assert {OUTPUT, CKPT_LOCATION} <= roles_of(("ckpt_dir",))
    assert {OUTPUT, LOG} <= roles_of(("logging_dir",))
    assert OUTPUT in roles_of(("hydra", "run", "dir"))
    assert {OUTPUT, CKPT_LOCATION} <= roles_of(("checkpoint", "folder"))
    assert CKPT_INTERVAL in roles_of(("save_steps",))
    assert CKPT_INTERVAL in roles_of(("save_period",)) and CKPT_INTERVAL in roles_of(("save_every_n_epochs",))
    assert RESUME in roles_of(("resume_from_checkpoint",))
    assert MODEL_ONLY in roles_of(("save_only_model",))


def test_caches_and_unrelated_keys_mean_nothing() -> None:
    for key in (("hf_home",), ("cache_dir",), ("data_dir",), ("learning_rate",), ("gradient_checkpointing",),
                ("activation_checkpoint", "mode"), ("folder",)):
        assert roles_of(key) == frozenset(), key


def test_activation_checkpointing_section_is_not_checkpointing() -> None:
    assert roles_of(("activation_checkpoint", "mode")) == frozenset()
    assert roles_of(("model", "gradient_checkpointing")) == frozenset()


def test_megatron_save_and_load_need_a_path() -> None:
    assert CKPT_LOCATION in roles_of(("save",), "/ckpt/gpt")
    assert roles_of(("save",), "true") == frozenset()
    assert RESUME in roles_of(("load",), "/ckpt/gpt")


def test_path_like_values() -> None:
    assert is_path_like("/ckpt/run") and is_path_like("outputs")
    assert not any(is_path_like(value) for value in ("", "no", "true", "500", None, 3, "a b"))


# --------------------------------------------------------------------------- flags


def test_flags_in_both_forms_with_positions() -> None:
    found = by_key(flag_settings(words("python", "train.py", "--output_dir", "/ckpt/a", "--save_steps=500",
                                       "--resume")))
    output = found[("output_dir",)]
    assert output.value == "/ckpt/a" and output.where.column == len("python train.py --output_dir ") + 1
    interval = found[("save_steps",)]
    assert interval.value == "500" and interval.where.column == len("python train.py --output_dir /ckpt/a --save_steps=") + 1
    assert found[("resume",)].bare and found[("resume",)].value is True


def test_equals_form_points_at_the_value() -> None:
    setting = flag_settings(words("--output_dir=/tmp/x"))[0]
    assert setting.where.column == len("--output_dir=") + 1
    assert setting.value == "/tmp/x"


def test_negative_numbers_are_values() -> None:
    found = by_key(flag_settings(words("--save_top_k", "-1", "--checkpoint.load_step", "-1")))
    assert found[("save_top_k",)].value == "-1"
    assert found[("checkpoint", "load_step")].value == "-1"


def test_hydra_overrides_and_config_references() -> None:
    found = by_key(flag_settings(words("train.py", "trainer.default_root_dir=/ckpt/x", "+resume=true",
                                       "--config", "a.yaml", "-c", "b.yaml", "--config-name", "sft")))
    assert found[("trainer", "default_root_dir")].value == "/ckpt/x"
    assert found[("trainer", "default_root_dir")].where.column == len("train.py ") + len("trainer.default_root_dir=") + 1
    assert RESUME in found[("resume",)].roles
    assert CONFIG_REF in found[("config",)].roles
    assert CONFIG_REF in found[("c",)].roles
    assert CONFIG_REF in found[("config_name",)].roles


def test_positional_configs() -> None:
    found = positional_configs(words("python", "run_sft.py", "recipes/sft.yaml", "--deepspeed", "ds.json"))
    assert [str(word.value) for word in found] == ["recipes/sft.yaml"]


def test_model_checkpoint_callback_flag_is_a_checkpoint_setting() -> None:
    setting = flag_settings(words("--trainer.callbacks+=ModelCheckpoint"))[0]
    assert CKPT_INTERVAL in setting.roles


# --------------------------------------------------------------------------- env


def test_env_names() -> None:
    assert {OUTPUT, CKPT_LOCATION} <= env_roles("CHECKPOINT_DIR")
    assert OUTPUT in env_roles("HF_OUTPUT_DIR")
    assert LOG in env_roles("TRAIN_LOG_DIR")
    assert RESUME in env_roles("RESUME_FROM")
    for name in ("HF_HOME", "TRANSFORMERS_CACHE", "TRITON_CACHE_DIR", "TMPDIR", "NCCL_DEBUG", "PYTHONUNBUFFERED"):
        assert env_roles(name) == frozenset(), name


# --------------------------------------------------------------------------- config trees


HYDRA = """\
seed: 1
run_name: gpt-${now:%Y%m%d}
paths:
  root: ${oc.env:CKPT_ROOT,/ckpt}
  output_dir: ${paths.root}/${run_name}
checkpoint:
  dirpath: ${paths.output_dir}/checkpoints
  every_n_train_steps: 1000
hydra:
  run:
    dir: ${paths.output_dir}/hydra
"""


def test_hydra_interpolation_resolves_and_traces_sources() -> None:
    settings = by_key(config_settings(parse_yaml(HYDRA)[0], "conf/config.yaml"))
    dirpath = settings[("checkpoint", "dirpath")]
    assert dirpath.value == f"/ckpt/gpt-{UNRESOLVED}/checkpoints"
    assert [where.line for where, _ in dirpath.sources] == [7, 5, 4, 2]
    assert OUTPUT in settings[("hydra", "run", "dir")].roles
    assert settings[("checkpoint", "dirpath")].config == "conf/config.yaml"


def test_oc_env_prefers_the_workload_env() -> None:
    settings = by_key(config_settings(parse_yaml(HYDRA)[0], None, {"CKPT_ROOT": "/mnt/pvc"}))
    assert str(settings[("paths", "output_dir")].value).startswith("/mnt/pvc/")


def test_lightning_callbacks_and_weights_only() -> None:
    text = """\
ckpt_path: last
trainer:
  default_root_dir: /ckpt/vit
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {dirpath: /ckpt/vit/best, save_weights_only: true, monitor: val_loss}
"""
    facts = facts_of(parse_yaml(text)[0])
    assert facts.checkpoints and facts.resumes
    assert [s.key for s in facts.implicit_resume] == [("ckpt_path",)]
    assert [s.key[-1] for s in facts.model_only] == ["save_weights_only"]
    full = text + """\
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args: {dirpath: /ckpt/vit/full, every_n_train_steps: 1000}
"""
    assert facts_of(parse_yaml(full)[0]).model_only == []


def test_hf_json_config() -> None:
    facts = facts_of(parse_json('{"output_dir": "/ckpt/r1", "save_strategy": "no", "resume_from_checkpoint": null}'))
    assert not facts.checkpoints and facts.disabled and not facts.resumes


def test_torchtitan_disabled_checkpointing_makes_its_section_moot() -> None:
    text = '[job]\ndump_folder = "./out"\n[checkpoint]\nenable_checkpoint = false\nfolder = "ckpt"\nload_step = -1\n'
    facts = facts_of(parse_toml(text))
    assert not facts.checkpoints and not facts.resumes
    assert [s.key for s in facts.disabled] == [("checkpoint", "enable_checkpoint")]


def test_torchtitan_enabled_checkpointing_resumes_by_itself() -> None:
    text = '[job]\ndump_folder = "/ckpt/titan"\n[checkpoint]\nenable_checkpoint = true\nfolder = "checkpoint"\n'
    settings = config_settings(parse_toml(text))
    facts = summarise(settings)
    assert facts.checkpoints and facts.resumes
    folder = by_key(settings)[("checkpoint", "folder")]
    assert folder.value == "/ckpt/titan/checkpoint"


def test_wrong_shapes_give_nothing() -> None:
    for text in ("- a\n- b\n", "42\n", "output_dir:\n  - 1\n  - 2\n", "checkpoint: null\n", "resume: {a: 1}\n"):
        tree = parse_yaml(text)[0]
        facts = facts_of(tree)
        assert not facts.outputs and not facts.implicit_resume


def test_interpolation_cycles_terminate() -> None:
    settings = config_settings(parse_yaml("a: ${b}\nb: ${a}\noutput_dir: ${a}/x\n")[0])
    assert by_key(settings)[("output_dir",)].value.endswith("/x")


def test_relative_interpolation_and_wide_reference_chains_are_fast() -> None:
    import time

    text = "paths:\n  root: /ckpt\n  out: ${.root}/run\n  logs: ${..paths.out}/logs\n"
    settings = by_key(config_settings(parse_yaml(text + "output_dir: ${paths.out}\n")[0]))
    assert settings[("output_dir",)].value == "/ckpt/run"
    chain = "".join(f"k{i}: ${{k{i + 1}}}${{k{i + 1}}}${{k{i + 1}}}\n" for i in range(40)) + "k40: x\noutput_dir: ${k0}\n"
    started = time.perf_counter()
    config_settings(parse_yaml(chain)[0])
    assert time.perf_counter() - started < 10  # unbounded: 3**40 expansions


def test_a_long_chain_of_values_built_from_each_other_stays_bounded() -> None:
    links = "".join(f"k{i}: ${{{f'k{i - 1}' if i else 'root'}}}/x\n" for i in range(3000))
    text = "root: /ckpt\n" + links + "output_dir: ${k10}\ncheckpoint_dir: ${k2999}\n"
    settings = by_key(config_settings(parse_yaml(text)[0]))
    assert settings[("output_dir",)].value == "/ckpt" + "/x" * 11
    longest = settings[("checkpoint_dir",)]
    assert len(str(longest.value)) <= MAX_RESOLVED_CHARS and len(longest.sources) <= MAX_SOURCES + 1
