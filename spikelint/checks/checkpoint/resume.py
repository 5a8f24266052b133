"""SPK401, SPK402, SPK404–SPK407: checkpoints that are missing, never resumed, or cannot resume.

Workload checks look at the command, env and referenced run configs together
(:func:`spikelint.facts.paths.run_view`); SPK404/SPK406/SPK407 also run on standalone run configs
and launch scripts as document checks.  Values that come from a referenced config or script
are reported in that file by the document checks, never twice.
"""

from __future__ import annotations


from typing import Iterable
from typing import Iterator

from spikelint.adapters import tree_format
from spikelint.adapters.common import UNBOUNDED_RETRIES
from spikelint.adapters.purpose import invocation_trains
from spikelint.adapters.entry_points import target_purpose
from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.facts.invocations import container_invocations
from spikelint.facts.paths import describe
from spikelint.facts.expansion import expand
from spikelint.facts.run_identity import names_run
from spikelint.facts.paths import run_view
from spikelint.facts.invocations import script_invocations
from spikelint.facts.expansion import script_lookup
from spikelint.facts.run_identity import timestamp_sources
from spikelint.facts.runconfig import CKPT_LOCATION
from spikelint.facts.runconfig import LOG
from spikelint.facts.runconfig import OUTPUT
from spikelint.facts.runconfig import RunFacts
from spikelint.facts.runconfig import Setting
from spikelint.facts.config_tree import config_package
from spikelint.facts.config_tree import config_settings
from spikelint.facts.flags import flag_settings
from spikelint.facts.runconfig import summarise

CONFIG_KINDS = (FileKind.YAML, FileKind.JSON, FileKind.TOML)


# --------------------------------------------------------------------------- SPK401, SPK402, SPK405


def retry_count(workload: Workload) -> int:
    """Retries the platform will make: as written, else the platform's default."""
    if workload.retries is not None:
        value = workload.retries.value
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, (int, float)):
            return int(value)
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("onfailure", "always", "exitcode"):
                return UNBOUNDED_RETRIES
            try:
                return int(float(lowered))
            except ValueError:
                return workload.default_retries
    return workload.default_retries


def _retries_text(workload: Workload) -> str:
    count = retry_count(workload)
    if workload.platform.retried:
        return workload.platform.retried
    if workload.retries is None:
        return f"retries {_times(count)} by default"
    if count >= UNBOUNDED_RETRIES:
        return "restarts failed pods"
    return f"retries {_times(count)}"


def _subject(workload: Workload) -> str:
    """What the object is, for messages: ``job`` (Slurm), its kind (Kubernetes), ``workload`` (Run:ai)."""
    return workload.platform.subject


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _severity(workload: Workload) -> str:
    return "error" if workload.preemptible else "warning"


def _preempt_words(workload: Workload) -> str:
    return "is preempted" if workload.preemptible else "fails or is restarted"


@check("SPK401", "SPK402", "SPK405", scope="workload")
def checkpoint_and_resume(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """No checkpoint setting (SPK401); checkpoints but no resume (SPK405 when it retries, else SPK402)."""
    if not workload.is_training:
        return
    view = run_view(workload, document, ctx.project)
    facts = view.facts
    if facts is None:
        return
    configs = ", ".join(sorted({path for _, path in view.configs}))
    looked = f" (its config {configs} read too)" if configs else ""
    unseen = bool(view.missing_configs or view.opaque)
    if not facts.checkpoints and not facts.resumes:
        off = facts.disabled[0] if facts.disabled else None
        if off is None and unseen:
            return  # the settings may live in the config or script it names, which is not here to read
        reason = (f"checkpointing is switched off ({describe(off)} = {off.raw})" if off is not None
                  else f"no checkpoint location or interval is set in its command or env{looked}")
        yield Problem.at("SPK401", workload.anchor,
                         f"{reason}: when the run {_preempt_words(workload)}, all training so far is lost and it "
                         f"starts again from step 0 — save checkpoints periodically to "
                         f"{workload.platform.durable_storage} "
                         f"(e.g. --output_dir /ckpt/<run> --save_steps 500, ModelCheckpoint, "
                         f"[checkpoint] enable_checkpoint = true)",
                         severity=_severity(workload), key="missing-checkpoint-config")
        return
    if facts.resumes or unseen:
        return
    retries = retry_count(workload)
    if retries > 0:
        yield Problem.at("SPK405", workload.anchor,
                         f"the {_subject(workload)} {_retries_text(workload)} but nothing tells the program to resume from its "
                         f"checkpoints{looked}: every retry starts again from step 0 and pays for the same work "
                         f"again — add a resume setting (--resume_from_checkpoint <run dir>/checkpoint-N, "
                         f"ckpt_path, --resume) or "
                         f"{workload.platform.no_retries}",
                         key="retries-without-resume")
        return
    yield Problem.at("SPK402", workload.anchor,
                     f"checkpoints are written but no setting resumes from them{looked}: a relaunch after "
                     f"preemption or a crash starts from step 0 and may overwrite them — add an explicit resume "
                     f"setting (--resume_from_checkpoint, ckpt_path, --resume, checkpoint.load_step)",
                     severity=_severity(workload), key="missing-resume-setting")


# --------------------------------------------------------------------------- SPK404, SPK406, SPK407 (shared logic)


def _identity_names(workload: Workload | None) -> list[str]:
    if workload is None or workload.name is None:
        return []
    return [str(workload.name.value)]


def implicit_resumes(settings: list[Setting], facts: RunFacts, names: Iterable[str] = ()) -> Iterator[Problem]:
    """``ckpt_path: last``, ``--resume auto``, ``resume_from_checkpoint: true`` with no per-run folder."""
    known = list(names) + [str(s.value) for s in facts.identities if isinstance(s.value, str)]
    folders = [s for s in settings if s.roles & {OUTPUT, CKPT_LOCATION} and isinstance(s.value, str)]
    if any(names_run(str(s.value), known) or any(names_run(text) for _, text in s.sources) for s in folders):
        return
    for setting in facts.implicit_resume:
        value = "a bare flag" if setting.bare else repr(setting.raw if setting.raw is not None else setting.value)
        yield Problem.at("SPK404", setting.where,
                         f"{setting.origin} = {value} resumes from whatever checkpoint happens to be in the output "
                         f"folder: relaunching a changed config into the same folder silently continues the old "
                         f"run — resume by naming the checkpoint (…/checkpoint-1500, step=…ckpt) or keep each run "
                         f"in a folder named after a stable run id",
                         key=f"{setting.origin}={setting.value}")


# Hydra/OmegaConf override keys that name the run's folder even where the key tables give them no
# output role: trainer.default_local_dir, checkpoint.ckpt_namespace, run_dir, exp_dir … (not `*_path`:
# those are mostly files to load)
RUN_FOLDER_LEAF = lazy_regex(r"(?:^|_)(?:ckpt|checkpoint|checkpointing|save|output|out|run|exp|experiment|local|"
                             r"work|root)_?(?:dir|dirpath|folder|root|namespace)$|^(?:ckpt_|checkpoint_)?namespace$")
RUN_FOLDER_PARENTS = frozenset({"checkpoint", "checkpointing", "ckpt", "output", "run", "save", "saver"})


def names_run_folder(key: tuple[str, ...]) -> bool:
    """``trainer.default_local_dir``, ``actor.checkpoint.ckpt_namespace``, ``checkpoint.dir``: a key for the
    folder (or namespace) a run keeps its checkpoints or outputs in."""
    if not key:
        return False
    leaf = key[-1]
    if RUN_FOLDER_LEAF.search(leaf):
        return True
    return leaf in ("dir", "folder", "root", "namespace") and bool(set(key[:-1]) & RUN_FOLDER_PARENTS)


def _is_override(setting: Setting) -> bool:
    """A Hydra-style ``a.b=value`` word (not ``--flag``, not an ``EXPORTED_NAME=value`` variable)."""
    origin = setting.origin
    return bool(origin) and not origin.startswith("-") and not origin.isupper() and isinstance(setting.value, str)


HYDRA_FOLDERS = (("hydra", "run", "dir"), ("hydra", "sweep", "dir"))


def _checkpoints_kept_elsewhere(settings: list[Setting]) -> bool:
    """A checkpoint folder given as an absolute path (or a URI) that the launch time does not build: Hydra's
    ``hydra.run.dir`` then holds only its logs and ``.hydra/``, and a restart finds its checkpoints."""
    return any(CKPT_LOCATION in setting.roles and setting.key not in HYDRA_FOLDERS and isinstance(setting.value, str)
               and (setting.value.startswith("/") or "://" in setting.value) and "${hydra:" not in setting.value
               and not any(True for _ in timestamp_sources(setting.sources)) for setting in settings)


def timestamped_dirs(settings: Iterable[Setting]) -> Iterator[Problem]:
    """Output/checkpoint folders built from the launch time, reported where the time is written."""
    settings = list(settings)
    hydra_only_logs = _checkpoints_kept_elsewhere(settings)
    seen: set[tuple[int, int]] = set()
    for setting in settings:
        folder = OUTPUT in setting.roles and not (LOG in setting.roles and CKPT_LOCATION not in setting.roles)
        if not folder and not (_is_override(setting) and names_run_folder(setting.key)):
            continue
        if setting.key == ("redirect",) or hydra_only_logs and setting.key in HYDRA_FOLDERS:
            continue
        for where, text in timestamp_sources(setting.sources):
            if (where.line, where.column) in seen:
                continue
            seen.add((where.line, where.column))
            via = "" if (where.line, where.column) == (setting.where.line, setting.where.column) else \
                f", used by {setting.origin}"
            yield Problem.at("SPK406", where,
                             f"{text.strip()!r} builds the output folder from the launch time{via}: a restarted pod "
                             f"computes a new folder, finds no checkpoint and starts from step 0 — derive it from "
                             f"a stable run id ($JOB_NAME, $JOB_UUID, a run name in the config)",
                             key=text.strip())


def model_only_checkpoints(facts: RunFacts, must_resume: bool) -> Iterator[Problem]:
    if not must_resume:
        return
    for setting in facts.model_only:
        value = "" if setting.bare else f" = {setting.raw!r}"
        yield Problem.at("SPK407", setting.where,
                         f"{setting.origin}{value} keeps model weights only, but this run resumes from "
                         f"its checkpoints: optimizer moments, LR schedule, step and RNG state are not saved, so "
                         f"a resume fails or restarts the optimizer from scratch — keep full checkpoints "
                         f"(save_only_model: false, or a second ModelCheckpoint without save_weights_only)",
                         key=f"{setting.origin}={setting.value}")


# --------------------------------------------------------------------------- workloads


@check("SPK404", "SPK406", "SPK407", scope="workload")
def workload_resume_hygiene(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Implicit resume, timestamped folders and weights-only checkpoints in a workload's own command/env."""
    if document.kind == FileKind.SHELL:
        return  # the launch script is checked as a whole by script_resume_hygiene
    view = run_view(workload, document, ctx.project)
    own = [setting for setting in view.settings if setting.config is None]
    facts = summarise(own)
    if workload.is_training:
        others = _other_programs(workload, document)
        trained = [setting for setting in own if not _in_any(setting.where, others)]
        yield from implicit_resumes(trained, summarise(trained), _identity_names(workload))
    yield from timestamped_dirs(own)
    must_resume = bool(view.facts and view.facts.resumes) or workload.preemptible or retry_count(workload) > 0
    yield from model_only_checkpoints(facts, must_resume)


def _other_programs(workload: Workload, document: Document) -> list[Located]:
    """Words of the commands in a workload that run no training program (``dcgmi profile --resume``,
    ``rsync --resume``): their flags are not the run's resume settings."""
    words: list[Located] = []
    for container in workload.main_containers():
        for invocation in container_invocations(container, document):
            if not invocation_trains([str(word.value) for word in invocation.words]):
                words.extend(invocation.words)
    return words


def _in_any(where: Located, words: list[Located]) -> bool:
    for word in words:
        end = word.end_column if word.end_line == word.line and word.end_column is not None else word.column + 1
        if word.line == where.line and word.column <= where.column < max(end, word.column + 1):
            return True
    return False


def trains_by_name(path: str) -> bool:
    """A config or launch script whose name says it evaluates, serves or converts, or that sits in a
    test folder (a CI run that exercises resume on purpose), configures no training run."""
    return target_purpose(path, "").training


# --------------------------------------------------------------------------- standalone run configs


def is_run_config(root: Node) -> bool:
    """A mapping that is not a workload, another Kubernetes object or a JSON Schema (whose
    ``"checkpoint_path": true`` under ``properties`` admits any value; it sets nothing)."""
    if root.kind != "map":
        return False
    if is_json_schema(root):
        return False
    return tree_format(root) is None and not (root.get("apiVersion") is not None and root.get("kind") is not None)


def is_json_schema(root: Node) -> bool:
    """``{"$schema": "…json-schema…", …}`` or an object schema (``type: object`` with ``properties``)."""
    schema = root.scalar("$schema")
    if isinstance(schema, str) and "json-schema" in schema:
        return True
    return root.scalar("type") == "object" and root.get("properties") is not None


@check("SPK404", "SPK406", "SPK407", scope="document", kinds=CONFIG_KINDS)
def config_resume_hygiene(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """The same three rules on a run config file (HF, Lightning, Hydra, torchtitan, generic)."""
    for root in document.trees:
        if not is_run_config(root):
            continue
        settings = config_settings(root, None, package=config_package(document.path))
        facts = summarise(settings)
        if trains_by_name(document.path):
            yield from implicit_resumes(settings, facts)
        yield from timestamped_dirs(settings)
        yield from model_only_checkpoints(facts, facts.resumes)


# --------------------------------------------------------------------------- launch scripts


@check("SPK404", "SPK406", "SPK407", scope="document", kinds=(FileKind.SHELL,))
def script_resume_hygiene(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """The same three rules on every command of a launch script (``runai … -- cmd`` included)."""
    script = document.parsed
    if script is None or not hasattr(script, "pipelines"):
        return
    lookup = script_lookup(script)
    every: list[Setting] = []
    trains_here = trains_by_name(document.path)
    for invocation in script_invocations(script, None, lookup):
        settings = []
        for setting in flag_settings(invocation.words):
            if isinstance(setting.value, str):
                expanded = expand(setting.value, setting.where, invocation.lookup or lookup)
                setting = setting._replace(value=expanded.text, sources=expanded.sources)
            settings.append(setting)
        if not settings:
            continue
        every.extend(settings)
        facts = summarise(settings)
        if trains_here and invocation_trains([str(word.value) for word in invocation.words]):
            yield from implicit_resumes(settings, facts)  # not ``dcgmi profile --resume``, ``rsync --resume``
        runs_on_runai = bool(invocation.words) and str(invocation.words[0].value).endswith("runai")
        yield from model_only_checkpoints(facts, facts.resumes or runs_on_runai)
    yield from timestamped_dirs(every)
