"""What a run is configured with: checkpoint, resume, output, log and seed settings.

The same table classifies a key whether it comes from a run config file (Hugging Face
``TrainingArguments`` YAML/JSON, LightningCLI, Hydra/OmegaConf, torchtitan TOML, generic),
from a command-line flag (``--output_dir x``, ``--checkpoint.interval=500``), from a Hydra
override (``trainer.default_root_dir=/ckpt``) or from an environment variable
(``CHECKPOINT_DIR``).  Checks then ask :class:`RunFacts` questions ("is any checkpoint
setting visible?") instead of knowing every framework's spelling.  Reading the settings out
of a command line is :mod:`spikelint.facts.flags`, out of a config tree
:mod:`spikelint.facts.config_tree`.
"""

from __future__ import annotations

import re
from typing import Any
from typing import Iterable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located

# --------------------------------------------------------------------------- roles

OUTPUT = "output"  # a path the run writes to (SPK301, SPK603, SPK406)
LOG = "log"  # a log destination (SPK504)
LOG_HOLDER = "log-holder"  # a trainer output folder that also holds the logs (SPK504)
CKPT_LOCATION = "checkpoint-location"  # where checkpoints go (SPK401)
CKPT_INTERVAL = "checkpoint-interval"  # how often / whether checkpoints are saved (SPK401)
CKPT_TOGGLE = "checkpoint-toggle"  # switches checkpointing on or off
RESUME = "resume"  # a way to resume (SPK402, SPK405, SPK404)
MODEL_ONLY = "model-only"  # checkpoints hold weights only (SPK407)
SEED = "seed"
IDENTITY = "run-identity"  # run name / id
CONFIG_REF = "config-ref"  # a run config file the command passes

UNRESOLVED = "\x00"  # stands for a part of a value that cannot be known statically

# an output folder holds logs and outputs; a trainer's (HF output_dir, Lightning default_root_dir)
# also holds the checkpoints those trainers save by default
_DIR_OUT = frozenset((OUTPUT, LOG_HOLDER))
_TRAINER_DIR = frozenset((OUTPUT, LOG_HOLDER, CKPT_LOCATION))
_CKPT_DIR = frozenset((OUTPUT, CKPT_LOCATION))
_LOG_DIR = frozenset((OUTPUT, LOG))
_AMBIGUOUS = frozenset((CKPT_LOCATION, RESUME))  # `ckpt_path`: Lightning resumes from it, others save to it

LEAF_ROLES: dict[str, frozenset[str]] = {
    # HF Trainer checkpoints into output_dir and Lightning into default_root_dir unless told not to
    **{key: _TRAINER_DIR for key in ("output_dir", "default_root_dir")},
    # T5X/TF Estimator ``--model_dir`` and MaxText ``base_output_directory=``: checkpoints, logs and summaries
    **{key: _TRAINER_DIR for key in ("model_dir", "base_output_directory")},
    # PaxML/Praxis ``--job_log_dir``: the run's root, its checkpoints under ``checkpoints/``
    "job_log_dir": _TRAINER_DIR,
    **{key: _DIR_OUT for key in ("work_dir", "exp_dir", "experiment_dir", "run_dir", "dump_folder")},
    **{key: frozenset((OUTPUT,)) for key in ("out_dir", "outdir", "output_folder", "results_dir", "result_dir",
                                             "project_dir", "output_root")},
    **{key: _CKPT_DIR for key in ("save_dir", "save_path", "save_folder", "checkpoint_dir", "checkpoints_dir",
                                  "ckpt_dir", "ckpts_dir", "checkpoint_folder", "ckpt_folder", "checkpoint_root",
                                  "ckpt_root", "checkpoint_save_dir", "save_checkpoint_dir", "checkpoint_output_dir",
                                  "checkpoints_path", "default_local_dir")},  # verl's trainer.default_local_dir
    **{key: _AMBIGUOUS for key in ("checkpoint_path", "ckpt_path", "checkpoint", "ckpt", "checkpoint_file",
                                   "ckpt_file")},
    **{key: _LOG_DIR for key in ("log_dir", "logging_dir", "logdir", "logs_dir", "log_root", "tensorboard_dir",
                                 "tensorboard_log_dir", "tensorboard_logging_dir", "tb_dir", "tb_log_dir",
                                 "log_file", "logfile", "log_path")},
    **{key: frozenset((CKPT_INTERVAL,)) for key in (
        "save_steps", "save_strategy", "save_interval", "save_freq", "save_frequency", "save_every",
        "save_every_n_steps", "save_every_n_epochs", "save_every_n_iters", "save_epochs", "save_total_limit",
        "save_on_each_node", "checkpointing_steps", "checkpoint_interval", "checkpoint_every", "checkpoint_steps",
        "checkpoint_freq", "checkpoint_frequency", "checkpoint_every_n_steps", "ckpt_interval", "ckpt_every",
        "ckpt_freq", "ckpt_steps", "enable_jit_checkpoint", "save_model_every", "checkpoint_every_n_epochs")},
    **{key: frozenset((CKPT_INTERVAL, CKPT_TOGGLE)) for key in ("enable_checkpointing", "enable_checkpoint")},
    **{key: frozenset((RESUME,)) for key in (
        "resume", "resume_from", "resume_from_checkpoint", "resume_path", "resume_dir", "resume_checkpoint",
        "resume_ckpt", "auto_resume", "autoresume", "resume_if_exists", "load_checkpoint", "load_ckpt",
        "load_from_checkpoint", "restore_from", "restore_checkpoint", "resume_training", "resume_step")},
    "save_only_model": frozenset((MODEL_ONLY,)),
    "save_weights_only": frozenset((MODEL_ONLY,)),
    **{key: frozenset((SEED,)) for key in ("seed", "random_seed", "seed_everything", "data_seed")},
    **{key: frozenset((IDENTITY,)) for key in ("run_name", "run_id", "experiment_name", "exp_name", "job_name")},
}
# leaves whose meaning needs a path-like value (Megatron `--save /ckpt/x`, `--load /ckpt/x`)
PATH_ONLY_LEAVES: dict[str, frozenset[str]] = {
    "save": _CKPT_DIR,
    "load": frozenset((RESUME,)),
    "out": frozenset((OUTPUT,)),
}
CHECKPOINT_SECTIONS = frozenset((
    "checkpoint", "checkpoints", "checkpointing", "ckpt", "model_checkpoint", "checkpoint_callback",
    "checkpoint_callback_params", "checkpoint_config", "modelcheckpoint", "checkpointer"))
SECTION_ROLES: dict[str, frozenset[str]] = {
    **{key: _CKPT_DIR for key in ("dirpath", "dir", "folder", "path", "save_dir", "root", "directory",
                                  "dir_path", "output_dir")},
    **{key: frozenset((RESUME,)) for key in ("load_step", "resume", "resume_from", "restore", "load",
                                             "load_path", "resume_path")},
    **{key: frozenset((CKPT_INTERVAL, CKPT_TOGGLE)) for key in ("enable", "enabled", "enable_checkpoint")},
    "save_weights_only": frozenset((MODEL_ONLY,)),
}
NOT_CHECKPOINT_SECTION_KEYS = frozenset(("initial_load_path", "initial_load_model_only", "exclude_from_loading",
                                         "last_save_model_only", "model_weights_only", "async_mode",
                                         "initial_load_in_hf"))
LOGGER_SECTIONS = frozenset(("logger", "loggers"))
LOGGER_LEAVES = frozenset(("save_dir", "dir", "log_dir", "root_dir", "logdir"))
# activation/gradient checkpointing is about memory, not about saving the run
NOT_CHECKPOINT = lazy_regex(r"activation|gradient|grad_ckpt|recompute|(^|_)ac(_|$)|init|pretrain|teacher|reference|"
                            r"reward|base_model|(^|_)ref(_|$)|hub|export|tokenizer")
# save_period (YOLO), save_every_n_epochs, save_freq… : how often the run saves itself
SAVE_INTERVAL = lazy_regex(r"^save_(period|interval|freq|frequency|every(_\w+)?|steps|epochs?|iters?|"
                           r"n_steps|n_epochs|ckpt_\w+|checkpoint_\w+)$")
CONFIG_REF_KEYS = frozenset((("config",), ("config_file",), ("cfg",), ("configs",), ("job", "config_file"),
                             ("c",), ("config_path",), ("config_name",), ("cp",), ("cn",), ("args_file",)))
CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml")
CONFIG_REF_KEYS_LEAVES = frozenset(key[-1] for key in CONFIG_REF_KEYS)
HYDRA_OUTPUT_KEYS = {("hydra", "run", "dir"): frozenset((OUTPUT, LOG_HOLDER)),
                     ("hydra", "sweep", "dir"): frozenset((OUTPUT, LOG_HOLDER))}
REMOTE = lazy_regex(r"^[a-z][a-z0-9+.-]*://|^(s3|gs|gcs|az|abfs|abfss|hdfs|dbfs|wandb|hf|oci|r2):", re.IGNORECASE)

_NUMBER = lazy_regex(r"[-+]?\d+(\.\d+)?")
FALSE_WORDS = frozenset(("false", "no", "none", "null", "off", "0", "", "~"))
RESTORING_DIRS = frozenset(("job_log_dir", "model_dir", "base_output_directory"))
IMPLICIT_RESUME_WORDS = frozenset(("true", "auto", "last", "latest", "yes", "on"))
DISABLING = {"save_strategy": frozenset(("no",))}


def normalise_key(text: str) -> tuple[str, ...]:
    """``--Trainer.Default-Root-Dir`` -> ``("trainer", "default_root_dir")``."""
    cleaned = text.strip().lstrip("-+~").lower().replace("-", "_")
    return tuple(part for part in cleaned.split(".") if part)


def is_path_like(value: Any) -> bool:
    """A value that names a file or folder (not a number, a boolean or a keyword)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if not text or text.lower() in FALSE_WORDS or text.lower() in IMPLICIT_RESUME_WORDS:
        return False
    if _NUMBER.fullmatch(text):
        return False
    return not any(char in text for char in "\n;|&<>") and " " not in text.strip()


def is_remote(value: str) -> bool:
    """Object stores and trackers (``s3://``, ``gs://``, ``hf://`` …) keep what is written there."""
    return bool(REMOTE.match(value.strip()))


# keys that qualify a resume setting instead of being one: NeMo's ``resume_ignore_no_checkpoint``
# (only says what happens when ``resume_if_exists`` finds nothing), ``resume_strict``
RESUME_MODIFIER = lazy_regex(r"ignore|strict|(^|_)no_|_if_missing|missing_ok|_optional$")
# trackers resume their own run records (``wandb_logger_kwargs.resume``), not training state
TRACKER_SECTION = lazy_regex(r"logger|wandb|mlflow|comet|neptune|tensorboard|clearml|aim_|tracker")


def _leaf_roles(leaf: str) -> frozenset[str]:
    roles = LEAF_ROLES.get(leaf)
    if roles is not None:
        return roles
    if "resume" in leaf and RESUME_MODIFIER.search(leaf):
        return frozenset()
    if SAVE_INTERVAL.match(leaf):
        return frozenset((CKPT_INTERVAL,))
    if ("checkpoint" in leaf or "ckpt" in leaf) and not NOT_CHECKPOINT.search(leaf):
        if "resume" in leaf or leaf.startswith(("load", "restore")):
            return frozenset((RESUME,))
        if leaf.endswith(("dir", "folder", "root", "dirpath")):
            return _CKPT_DIR
        if leaf.endswith(("path", "file", "name")):
            return _AMBIGUOUS
        return frozenset((CKPT_INTERVAL,))
    if "resume" in leaf:
        return frozenset((RESUME,))
    return frozenset()


def roles_of(key: Sequence[str], value: Any = None, section: str = "") -> frozenset[str]:
    """What a (normalised) key means; ``section`` is ``"checkpoint"``/``"logger"`` context."""
    if not key:
        return frozenset()
    if len(key) >= 3:
        hydra = HYDRA_OUTPUT_KEYS.get((key[-3], key[-2], key[-1]))
        if hydra is not None:
            return hydra
    leaf = key[-1]
    if leaf in CONFIG_REF_KEYS_LEAVES and tuple(key) in CONFIG_REF_KEYS:
        return frozenset((CONFIG_REF,))
    parents = set(key[:-1])
    if section == "logger" or parents & LOGGER_SECTIONS:
        if leaf in LOGGER_LEAVES:
            return _LOG_DIR
    if "resume" in leaf and any(TRACKER_SECTION.search(parent) for parent in parents):
        return frozenset()
    if section == "checkpoint" or (parents & CHECKPOINT_SECTIONS):
        if leaf in NOT_CHECKPOINT_SECTION_KEYS or NOT_CHECKPOINT.search(leaf):
            return frozenset()
        roles = SECTION_ROLES.get(leaf) or _leaf_roles(leaf)
        if roles & {SEED, IDENTITY}:
            return roles
        return roles or frozenset((CKPT_INTERVAL,))
    if leaf in PATH_ONLY_LEAVES:
        return PATH_ONLY_LEAVES[leaf] if is_path_like(value) else frozenset()
    return _leaf_roles(leaf)


# --------------------------------------------------------------------------- settings


class Setting(NamedTuple):
    """One key = value a run is launched with."""

    key: tuple[str, ...]  # normalised key path
    value: Any  # resolved value; unknown parts of strings are UNRESOLVED
    where: Located  # where the value (or a bare flag) is written
    roles: frozenset[str]
    raw: Any = None  # the value as written
    origin: str = ""  # how messages name it: "--output_dir", "output_dir", "env CHECKPOINT_DIR"
    sources: tuple[tuple[Located, str], ...] = ()  # written texts it was built from (interpolations, variables)
    bare: bool = False  # a flag given without a value
    config: str | None = None  # the config file it was read from
    scope: tuple[str | int, ...] = ()  # the checkpoint callback / section it belongs to
    names_checkpoint: bool = False  # a resume switch whose sibling key names the checkpoint it loads


def setting_text(setting: Setting) -> str:
    return "" if setting.value is None else str(setting.value)


def is_off(value: Any) -> bool:
    if value is None or value is False:
        return True
    return isinstance(value, str) and value.strip().lower() in FALSE_WORDS


def disables_checkpointing(setting: Setting) -> bool:
    """``save_strategy: no``, ``enable_checkpoint: false``, ``enable_checkpointing: false``."""
    leaf = setting.key[-1] if setting.key else ""
    words = DISABLING.get(leaf)
    if words is not None:
        return isinstance(setting.value, str) and setting.value.strip().lower() in words or setting.value is False
    return CKPT_TOGGLE in setting.roles and is_off(setting.value)


# the keys of training programs that resume a run, matched whole: ``resume_from_checkpoint`` (HF),
# ``ckpt_path`` (Lightning), ``--resume``/``--auto-resume`` (timm, Megatron), ``resume_if_exists`` (NeMo),
# ``resume_mode`` (verl); not every key that contains the word (``resume_past_end`` is about the data,
# a conversion step's ``checkpoint_name`` names what it converts)
IMPLICIT_RESUME_KEY = lazy_regex(
    r"^(?:auto_?)?resume(?:_(?:from(?:_(?:checkpoint|ckpt|latest|last))?|checkpoint|ckpt|mode|type|training|"
    r"if_exists|path|dir|step|latest|last))?$|^(?:load|restore)(?:_(?:from_)?(?:checkpoint|ckpt))?$|"
    r"^(?:load_step|load_path|restore_from|ckpt_path|checkpoint_path|ckpt|checkpoint|ckpt_file|checkpoint_file)$")


def resumes_by_key(setting: Setting) -> bool:
    """The setting's key is a training program's resume key (an environment variable may prefix it:
    ``HF_RESUME_FROM_CHECKPOINT``)."""
    leaf = setting.key[-1] if setting.key else ""
    if IMPLICIT_RESUME_KEY.match(leaf):
        return True
    if not setting.origin.startswith("env "):
        return False
    parts = leaf.split("_")
    return any(IMPLICIT_RESUME_KEY.match("_".join(parts[start:])) for start in range(1, len(parts)))


def is_implicit_resume(setting: Setting) -> bool:
    """A resume that loads whatever exists: ``true``, ``auto``, ``last``, ``latest``, a bare ``--resume``,
    under a training program's resume key."""
    if RESUME not in setting.roles or setting.names_checkpoint or not resumes_by_key(setting):
        return False
    if setting.bare or setting.value is True:
        return True
    return isinstance(setting.value, str) and setting.value.strip().lower() in IMPLICIT_RESUME_WORDS


# --------------------------------------------------------------------------- environment variables

ENV_SUFFIXES: tuple[tuple[str, frozenset[str]], ...] = tuple(sorted(
    ((leaf, roles) for leaf, roles in LEAF_ROLES.items()
     if roles & {OUTPUT, RESUME, CKPT_LOCATION, CKPT_INTERVAL} and leaf not in ("checkpoint", "ckpt")),
    key=lambda item: -len(item[0])))
NOT_OUTPUT_ENV = lazy_regex(r"CACHE|HOME|TMP|TEMP", re.IGNORECASE)


def env_roles(name: str, value: Any = None) -> frozenset[str]:
    """``CHECKPOINT_DIR``, ``HF_OUTPUT_DIR``, ``RESUME_FROM`` … (caches such as ``HF_HOME`` mean nothing)."""
    lowered = name.lower()
    if NOT_OUTPUT_ENV.search(name):
        return frozenset()
    if lowered in ("resume", "auto_resume"):
        return frozenset((RESUME,))
    for leaf, roles in ENV_SUFFIXES:
        if lowered == leaf or lowered.endswith("_" + leaf):
            return roles
    if lowered.startswith("resume") or "_resume" in lowered:
        return frozenset((RESUME,))
    return frozenset()


def env_setting(name: Located, value: Located | None) -> Setting | None:
    if value is None:
        return None
    roles = env_roles(str(name.value), value.value)
    if not roles:
        return None
    key = (str(name.value).lower(),)
    return Setting(key, value.value, value, roles, value.value, f"env {name.value}")


# --------------------------------------------------------------------------- what the settings add up to


class RunFacts(NamedTuple):
    """The checkpoint/resume/output picture of a run, from all its settings."""

    checkpoint: list[Setting]  # settings that save checkpoints (enabled)
    disabled: list[Setting]  # settings that switch checkpointing off
    resume: list[Setting]  # settings that resume (not switched off)
    implicit_resume: list[Setting]  # resumes that load whatever is there
    model_only: list[Setting]  # weights-only saving with no full checkpoint beside it
    outputs: list[Setting]  # output/checkpoint/log paths
    logs: list[Setting]  # log destinations (log dirs and trainer folders that hold logs)
    seeds: list[Setting]
    identities: list[Setting]

    @property
    def checkpoints(self) -> bool:
        return bool(self.checkpoint) and not self.disabled

    @property
    def resumes(self) -> bool:
        return bool(self.resume)


def _switched_off_sections(disabled: list[Setting]) -> set[tuple[str | None, tuple[str, ...]]]:
    """Sections whose checkpointing is off (``[checkpoint] enable_checkpoint = false``): their settings are moot."""
    return {(s.config, s.key[:-1]) for s in disabled if len(s.key) > 1}


def _from_environment(setting: Setting) -> bool:
    """Set by an environment variable (a container's ``env``, ``MODEL_DIR=… srun …``), not by the program's flags."""
    return setting.origin.startswith("env ") or ENV_NAME.fullmatch(setting.origin) is not None


ENV_NAME = lazy_regex(r"[A-Z][A-Z0-9_]*")


def is_moot(setting: Setting, disabled: list[Setting]) -> bool:
    """A setting inside a section whose checkpointing is switched off."""
    return setting not in disabled and _in_section(setting, _switched_off_sections(disabled))


def _in_section(setting: Setting, sections: set[tuple[str | None, tuple[str, ...]]]) -> bool:
    return any(setting.config == config and setting.key[:len(prefix)] == prefix and len(setting.key) > len(prefix)
               for config, prefix in sections)


def summarise(settings: Iterable[Setting]) -> RunFacts:
    items = list(settings)
    disabled = [s for s in items if disables_checkpointing(s)]
    off = _switched_off_sections(disabled)
    if off:
        items = [s for s in items if s in disabled or not _in_section(s, off)]
    checkpoint = [s for s in items if s.roles & {CKPT_LOCATION, CKPT_INTERVAL} and not disables_checkpointing(s)
                  and not (CKPT_LOCATION not in s.roles and is_off(s.value))
                  and not (s.roles == _AMBIGUOUS and is_off(s.value))]
    resume = [s for s in items if RESUME in s.roles and not is_off(s.value)]
    if any(s.key[-2:] == ("checkpoint", "enable_checkpoint") and s.value is True for s in items):
        # torchtitan resumes by itself from {dump_folder}/{folder} when checkpointing is on
        resume.extend(s for s in items if s.key[-2:] == ("checkpoint", "enable_checkpoint"))
    # PaxML (job_log_dir), T5X and TF Estimator (model_dir) and MaxText (base_output_directory) restore the latest
    # checkpoint of the run's folder by themselves; an environment variable of that name may be an input model
    resume.extend(s for s in checkpoint if s.key and s.key[-1] in RESTORING_DIRS and not _from_environment(s))
    implicit = [s for s in resume if is_implicit_resume(s)]
    outputs = [s for s in items if OUTPUT in s.roles and is_path_like(s.value)
               and not is_remote(str(s.value))]
    logs = [s for s in items if s.roles & {LOG, LOG_HOLDER} and is_path_like(s.value)]
    return RunFacts(checkpoint, disabled, resume, implicit, _model_only(items), outputs, logs,
                    [s for s in items if SEED in s.roles], [s for s in items if IDENTITY in s.roles])


def _model_only(settings: list[Setting]) -> list[Setting]:
    """Weights-only saving, unless another ModelCheckpoint keeps full checkpoints."""
    flagged = [s for s in settings if MODEL_ONLY in s.roles and not is_off(s.value)]
    if not flagged:
        return []
    callbacks = {s.scope for s in settings if s.key and s.key[-1] == "modelcheckpoint"}
    weights_only = {s.scope for s in flagged}
    if any(callback not in weights_only for callback in callbacks):
        return []  # a full ModelCheckpoint is kept as well
    if any(s.key[-1] == "save_only_model" and is_off(s.value) for s in settings):
        return []
    return flagged


def unique(settings: Iterable[Setting]) -> Iterator[Setting]:
    """Each written value once (YAML aliases and shared containers repeat them)."""
    seen: set[tuple[int, int, tuple[str, ...], str | None]] = set()
    for setting in settings:
        identity = (setting.where.line, setting.where.column, setting.key, setting.config)
        if identity not in seen:
            seen.add(identity)
            yield setting
