"""SPK105–SPK107: models, tokenizers and datasets fetched from a hub by a reference that moves,
remote code run from such a reference, and checkpoints loaded through pickle.

Four carriers say the same thing: Python calls (read by :mod:`spikelint.checks.hubcalls`), run-config
keys (``model_name_or_path: org/x`` beside a ``model_revision``), trainer flags in launch scripts
and in workload commands.  Each yields :class:`~spikelint.facts.hubref.HubUse` values and
:func:`~spikelint.facts.hubref.first_per_id` keeps one finding per id per file (per workload for
workload commands), SPK106 replacing SPK105 for the reference it covers.
"""

from __future__ import annotations

import ast
from typing import Iterable
from typing import Iterator
from typing import Sequence

from spikelint.checks.checkpoint import is_run_config
from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.checks.hubcalls import hub_uses
from spikelint.checks.hubcalls import unsafe_loads
from spikelint.facts.hubref import HubUse
from spikelint.facts.hubref import first_per_id
from spikelint.facts.hubref import in_tree
from spikelint.facts.hubref import is_hub_id
from spikelint.facts.hubref import is_sha
from spikelint.facts.hubref import remote_code_message
from spikelint.facts.hubref import unpinned_message
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Node
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.model import walk
from spikelint.facts.expansion import Lookup
from spikelint.facts.invocations import container_invocations
from spikelint.facts.expansion import expand
from spikelint.facts.invocations import script_invocations
from spikelint.facts.expansion import script_lookup
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.runconfig import Setting
from spikelint.facts.flags import flag_settings
from spikelint.facts.runconfig import normalise_key

HUB_RULES = ("SPK105", "SPK106")
CONFIG_KINDS = (FileKind.YAML, FileKind.JSON, FileKind.TOML)
MODEL_KEYS = frozenset(("model_name_or_path", "pretrained_model_name_or_path", "base_model", "tokenizer_name",
                        "tokenizer_name_or_path"))
DATASET_KEYS = frozenset(("dataset_name", "hf_path"))
HUB_KEYS = MODEL_KEYS | DATASET_KEYS
TRUE_WORDS = frozenset(("true", "1", "yes", "on"))


def _is_revision_key(key: str) -> bool:
    """``revision``, ``model_revision``, ``dataset_revision``, axolotl's ``revision_of_model``; not
    ``hub_model_revision``, the branch that results are pushed to."""
    return key == "revision" or key.startswith("revision_of_") or (
        key.endswith("_revision") and not key.startswith(("hub_", "push_")))


def _is_true(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in TRUE_WORDS)


def _problems(uses: Iterable[HubUse], ctx: CheckContext) -> Iterator[Problem]:
    """One finding per id: SPK106 at the trust setting, else SPK105 at the first use."""
    uses = list(uses)
    if not uses:
        return
    paths = [source.path for source in ctx.project.sources]
    local = {use.hub_id for use in uses if in_tree(use.hub_id, paths)}
    for rule, use in first_per_id(uses, local):
        if rule == "SPK106" and use.trust is not None:
            yield Problem.at("SPK106", use.trust, remote_code_message(use), key=use.hub_id)
        else:
            yield Problem.at("SPK105", use.where, unpinned_message(use), key=use.hub_id)


# --------------------------------------------------------------------------- Python


@check("SPK105", "SPK106", "SPK107", scope="document", kinds=(FileKind.PYTHON,))
def python_hub_references(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``from_pretrained("org/x")`` without a sha revision; pickle loads of checkpoint-like files."""
    module = document.parsed
    if not isinstance(module, ast.Module):
        return
    text = document.text
    if "/" in text and any(word in text for word in ("pretrained", "pipeline", "load_dataset", "download",
                                                      "SentenceTransformer", "CrossEncoder", "hub", "timm")):
        yield from _problems(hub_uses(module), ctx)
    if "load" in text or "read_pickle" in text:
        for load in unsafe_loads(module):
            how = {"weights_only=False": "torch.load(…, weights_only=False) unpickles",
                   "allow_pickle=True": "numpy.load(…, allow_pickle=True) unpickles"}.get(
                load.reason, f"{load.function}() unpickles")
            fix = ("load with weights_only=True (the default from torch 2.6), or save and load safetensors"
                   if load.function == "torch.load" else
                   "store the checkpoint as safetensors (or weights_only torch.load / plain arrays) instead")
            yield Problem.at("SPK107", load.where,
                             f"{how} {load.path_text!r}, a downloaded or checkpoint file: loading it runs "
                             f"whatever code the file carries — {fix}", key=f"{load.function}:{load.path_text}")


# --------------------------------------------------------------------------- run configs


def _config_uses(root: Node) -> Iterator[HubUse]:
    """Hub ids under the keys of SPK105, with their sibling revisions and ``trust_remote_code``."""
    root_trust = _trust_in(root)
    for path, node in walk(root):
        if node.kind != "map":
            continue
        keys = {normalise_key(key)[-1] if normalise_key(key) else key: key for key in node.value}
        in_model = bool(path) and isinstance(path[-1], str) and path[-1].lower() == "model"
        candidates = [(name, raw) for name, raw in keys.items()
                      if name in HUB_KEYS or (in_model and name == "name")]
        if not candidates:
            continue
        revisions = [node.value[raw] for name, raw in keys.items() if _is_revision_key(name)]
        pinned = any(child.kind == "scalar" and is_sha(child.value) for child in revisions)
        written = next((str(child.value) for child in revisions if child.kind == "scalar" and child.value), None)
        trust = _trust_in(node) or root_trust
        for name, raw in candidates:
            child = node.value[raw]
            if child.kind != "scalar" or not is_hub_id(child.value):
                continue
            dataset = name in DATASET_KEYS
            how = ".".join([*(str(part) for part in path[-1:]), raw]) if name == "name" else raw
            yield HubUse(str(child.value).strip(), child.located(), pinned, None if pinned else written,
                         None if dataset else trust, how, dataset)


def _trust_in(node: Node) -> Located | None:
    for key, child in node.items():
        if normalise_key(key)[-1:] == ("trust_remote_code",) and child.kind == "scalar" and _is_true(child.value):
            return child.located()
    return None


@check(*HUB_RULES, scope="document", kinds=CONFIG_KINDS)
def config_hub_references(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``model_name_or_path: org/x`` in a run config with no sibling ``*_revision`` sha."""
    if not any(key in document.text for key in ("model", "tokenizer_name", "dataset_name", "hf_path")):
        return
    uses: list[HubUse] = []
    for root in document.trees:
        if is_run_config(root):
            uses.extend(_config_uses(root))
    yield from _problems(uses, ctx)


# --------------------------------------------------------------------------- command lines


def flag_uses(settings: Sequence[Setting]) -> Iterator[HubUse]:
    """``--model_name_or_path org/x`` on one command, pinned by a ``--*revision`` sha on the same command."""
    pinned = False
    written: str | None = None
    trust: Located | None = None
    for setting in settings:
        leaf = setting.key[-1] if setting.key else ""
        if _is_revision_key(leaf) and isinstance(setting.value, str):
            pinned = pinned or is_sha(setting.value)
            written = written or setting.value
        elif leaf == "trust_remote_code" and (setting.bare or _is_true(setting.value)):
            trust = trust or setting.where
    for setting in settings:
        key = setting.key
        if not (key and (key[-1] in HUB_KEYS and len(key) == 1 or key == ("model", "name"))):
            continue
        value = setting.value
        if not isinstance(value, str) or UNRESOLVED in value or not is_hub_id(value):
            continue
        dataset = key[-1] in DATASET_KEYS
        revision = None if pinned or written is None or UNRESOLVED in written else written
        if written is not None and UNRESOLVED in written:
            continue  # the revision comes from a variable: it may well be a sha
        yield HubUse(value.strip(), setting.where, pinned, revision, None if dataset else trust,
                     setting.origin or "--" + "_".join(key), dataset)


def _expanded(settings: list[Setting], lookup: Lookup | None) -> list[Setting]:
    """Values with ``$NAME`` read through the variables in effect (unknown parts stay UNRESOLVED)."""
    found = []
    for setting in settings:
        if isinstance(setting.value, str) and "$" in setting.value and lookup is not None:
            setting = setting._replace(value=expand(setting.value, setting.where, lookup).text)
        found.append(setting)
    return found


def _mentions_hub_flag(text: str) -> bool:
    return any(key in text for key in ("model_name", "model-name", "base_model", "base-model", "tokenizer_name",
                                       "tokenizer-name", "dataset_name", "dataset-name", "hf_path", "hf-path",
                                       "model.name", "trust_remote_code", "trust-remote-code"))


@check(*HUB_RULES, scope="document", kinds=(FileKind.SHELL,))
def script_hub_references(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Trainer flags in a launch script (``runai … -- torchrun train.py --model_name_or_path …`` included)."""
    script = document.parsed
    if script is None or not hasattr(script, "pipelines") or not _mentions_hub_flag(document.text):
        return
    lookup = script_lookup(script)
    uses: list[HubUse] = []
    for invocation in script_invocations(script, None, lookup):
        settings = _expanded(flag_settings(invocation.words), invocation.lookup or lookup)
        uses.extend(flag_uses(settings))
    yield from _problems(uses, ctx)


@check(*HUB_RULES, scope="workload")
def workload_hub_references(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Trainer flags in a workload's command and args (Kubernetes, Run:ai CRD and REST)."""
    if document.kind == FileKind.SHELL or not _mentions_hub_flag(document.text):
        return  # a launch script is read as a whole by script_hub_references
    uses: list[HubUse] = []
    for container in workload.main_containers():
        for invocation in container_invocations(container, document):
            uses.extend(flag_uses(_expanded(flag_settings(invocation.words), invocation.lookup)))
    yield from _problems(uses, ctx)
