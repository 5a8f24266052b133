"""SPK105–SPK107: models, tokenizers and datasets fetched from a hub by a reference that moves,
remote code run from such a reference, and checkpoints loaded through pickle.

Five carriers say the same thing: Python calls (read by :mod:`spikelint.checks.images.hubcalls`), the same
calls in notebook code cells, run-config keys (``model_name_or_path: org/x`` beside a
``model_revision``), trainer flags in launch scripts and in workload commands.  A value is a hub id
only for a program that reads one: a config or command that names another model service
(``model_type: amazon.nova-lite-v1:0``, ``provider: bedrock``) holds that service's model names.
Each carrier yields :class:`~spikelint.facts.hubref.HubUse` values and
:func:`~spikelint.facts.hubref.first_per_id` keeps one finding per id per file (per workload for
workload commands), SPK106 replacing SPK105 for the reference it covers.
"""

from __future__ import annotations

from functools import lru_cache

import ast
from typing import Iterable
from typing import Iterator
from typing import Sequence

from spikelint.checks.checkpoint.resume import is_run_config
from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.checks.images.hubcalls import hub_uses
from spikelint.checks.images.hubcalls import unsafe_loads
from spikelint.facts.hubref import HubUse
from spikelint.facts.hubref import first_per_id
from spikelint.facts.hubref import in_tree
from spikelint.facts.hubref import is_hub_id
from spikelint.facts.hubref import is_sha
from spikelint.facts.hubref import names_foreign_vendor
from spikelint.facts.hubref import PROVIDER_KEYS
from spikelint.facts.hubref import REVISION_IN_VALUE_KEYS
from spikelint.facts.hubref import mentions_foreign_vendor
from spikelint.facts.hubref import remote_code_message
from spikelint.facts.hubref import unpinned_message
from spikelint.checks.secrets.notebooks import PYTHON_CELL_MAGICS
from spikelint.documents.notebook import Cell
from spikelint.documents.notebook import Notebook
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
from spikelint.secrets.python import magic_free_source

HUB_RULES = ("SPK105", "SPK106")
CONFIG_KINDS = (FileKind.YAML, FileKind.JSON, FileKind.TOML)
MODEL_KEYS = frozenset(("model_name_or_path", "pretrained_model_name_or_path", "base_model", "tokenizer_name",
                        "tokenizer_name_or_path", "tokenizer", "initialize_from_hf"))
DATASET_KEYS = frozenset(("dataset_name", "hf_path", "hf_dataset_name"))
HUB_KEYS = MODEL_KEYS | DATASET_KEYS
AT_REVISION_KEYS = REVISION_IN_VALUE_KEYS
# ``model: {name: org/x}``, ``model: {name_or_path: org/x}``
MODEL_NAME_KEYS = frozenset(("name", "name_or_path"))
DATASET_SECTIONS = frozenset(("dataset", "datasets"))
# ``dataset: {name: org/x, split: train}``: what makes a dataset section a ``load_dataset`` call's arguments
LOAD_DATASET_KEYS = frozenset(("split", "splits", "subset", "config_name", "data_files", "data_dir", "streaming",
                               "revision", "dataset_revision"))
TRUE_WORDS = frozenset(("true", "1", "yes", "on"))


def _is_revision_key(key: str) -> bool:
    """``revision``, ``model_revision``, ``dataset_revision``, axolotl's ``revision_of_model``; not
    ``hub_model_revision``, the branch that results are pushed to."""
    return key == "revision" or key.startswith("revision_of_") or (
        key.endswith("_revision") and not key.startswith(("hub_", "push_")))


ID_SUFFIXES = ("_name_or_path", "_name", "_path")


def revision_for(key: str, revisions: dict[str, str]) -> str | None:
    """The revision that decides whether the id under ``key`` is pinned: its own when written
    (``tokenizer_revision`` for ``tokenizer_name``, ``dataset_revision`` for ``dataset_name``, ``model_revision`` or
    ``revision_of_model`` for a model); else any sibling sha (rules.md: an id is pinned by a sibling ``*_revision``
    sha); else, for the message, a tokenizer's model's revision or a plain ``revision`` (never a model's branch
    for a dataset)."""
    stem = key
    for suffix in ID_SUFFIXES:
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    own = [f"{stem}_revision"]
    if key not in DATASET_KEYS and not stem.startswith("tokenizer"):
        own += ["model_revision", "revision_of_model"]
    written = next((revisions[name] for name in own if name in revisions), None)
    if written is not None:
        return written
    sha = next((value for value in revisions.values() if is_sha(value) or UNRESOLVED in value), None)
    if sha is not None:
        return sha  # a sha, or a variable that may hold one
    fallback = ["revision"] if key in DATASET_KEYS else ["model_revision", "revision_of_model", "revision"]
    return next((revisions[name] for name in fallback if name in revisions), None)


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


def _mentions_hub_call(text: str) -> bool:
    return "/" in text and any(word in text for word in ("pretrained", "pipeline", "load_dataset", "download",
                                                          "SentenceTransformer", "CrossEncoder", "hub", "timm"))


@check("SPK105", "SPK106", "SPK107", scope="document", kinds=(FileKind.PYTHON,))
def python_hub_references(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``from_pretrained("org/x")`` without a sha revision; pickle loads of checkpoint-like files."""
    module = document.parsed
    if not isinstance(module, ast.Module):
        return
    text = document.text
    if _mentions_hub_call(text):
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


# --------------------------------------------------------------------------- notebooks


def _cell_python(cell: Cell) -> list[str] | None:
    """A code cell's lines with ``!``/``%`` lines blanked (and a ``%%time``-like first line); ``None`` for a
    ``%%bash``-like cell or a markdown one."""
    if cell.cell_type != "code" or not cell.source:
        return None
    texts = [str(line.value).rstrip("\n") for line in cell.source]
    first = texts[0].lstrip()
    if first.startswith("%%"):
        if not first.startswith(PYTHON_CELL_MAGICS):
            return None
        texts[0] = ""
    return magic_free_source(texts).split("\n")


def _parse(lines: list[str]) -> ast.Module | None:
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def notebook_modules(notebook: Notebook) -> Iterator[tuple[ast.Module, list[Located]]]:
    """The code cells as one module (names bound in one cell are read in the next), each module line with
    the notebook line it came from; cell by cell when together they do not parse."""
    cells = [(lines, cell.source) for cell in notebook.cells if (lines := _cell_python(cell)) is not None]
    whole = _parse([line for lines, _ in cells for line in lines])
    if whole is not None:
        yield whole, [at for _, source in cells for at in source]
        return
    for lines, source in cells:
        module = _parse(lines)
        if module is not None:
            yield module, source


def _in_notebook(where: Located, source: list[Located]) -> Located:
    """A module position moved to the notebook's line, and its column in the JSON string (exact when the
    line has no escapes before it)."""
    at = source[min(max(where.line, 1), len(source)) - 1]
    column = at.column + where.column - 1
    if where.end_line == where.line and where.end_column is not None:
        return Located(where.value, at.line, column, at.line, at.column + where.end_column - 1)
    return Located(where.value, at.line, column)


def _at_notebook_line(use: HubUse, source: list[Located]) -> HubUse:
    trust = _in_notebook(use.trust, source) if use.trust is not None else None
    return use._replace(where=_in_notebook(use.where, source), trust=trust)


@check(*HUB_RULES, scope="document", kinds=(FileKind.NOTEBOOK,))
def notebook_hub_references(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``from_pretrained("org/x")`` in a notebook's code cells, reported at the notebook's line."""
    notebook = document.parsed
    if notebook is None or not hasattr(notebook, "cells") or not _mentions_hub_call(document.text):
        return
    uses = [_at_notebook_line(use, source) for module, source in notebook_modules(notebook)
            for use in hub_uses(module)]
    yield from _problems(uses, ctx)


# --------------------------------------------------------------------------- run configs


def _section(path: tuple[str | int, ...]) -> str:
    """The key a map sits under: ``model`` for ``model: {…}``, ``datasets`` for ``datasets: [{…}]``."""
    for part in reversed(path[-2:]):
        if isinstance(part, str):
            return part.lower()
    return ""


def _is_foreign(node: Node, keys: dict[str, str], path: tuple[str | int, ...]) -> bool:
    """A map that configures another model service: a ``model_type``/``provider``/``platform`` naming one
    (``amazon.nova-lite-v1:0``, ``bedrock``), or a section named after one (``bedrock: {…}``)."""
    if path and isinstance(path[-1], str) and names_foreign_vendor(path[-1]):
        return True
    return any(name in PROVIDER_KEYS and node.value[raw].kind == "scalar" and names_foreign_vendor(node.value[raw].value)
               for name, raw in keys.items())


def _candidates(keys: dict[str, str], path: tuple[str | int, ...]) -> list[tuple[str, str]]:
    """The keys of this map that hold a hub id: SPK105's keys, ``model.name``, a ``load_dataset``-shaped
    ``dataset.name``."""
    section = _section(path)
    in_model = bool(path) and isinstance(path[-1], str) and section == "model"
    in_dataset = section in DATASET_SECTIONS and not LOAD_DATASET_KEYS.isdisjoint(keys)
    return [(name, raw) for name, raw in keys.items()
            if name in HUB_KEYS or (in_model and name in MODEL_NAME_KEYS) or (in_dataset and name == "name")]


def _config_uses(root: Node, vendors: bool) -> Iterator[HubUse]:
    """Hub ids under the keys of SPK105, with their sibling revisions and ``trust_remote_code``; maps that
    configure another model service, and everything under them, are skipped (``vendors``: the file
    mentions one)."""
    root_trust = _trust_in(root)
    foreign: set[tuple[str | int, ...]] = set()
    for path, node in walk(root):
        if node.kind != "map":
            continue
        keys = {_leaf(key): key for key in node.value}
        if vendors and _is_foreign(node, keys, path):
            foreign.add(path)
        candidates = _candidates(keys, path)
        if not candidates or (foreign and any(path[:size] in foreign for size in range(len(path) + 1))):
            continue
        revisions = {name: str(node.value[raw].value) for name, raw in keys.items()
                     if _is_revision_key(name) and node.value[raw].kind == "scalar" and node.value[raw].value}
        trust = _trust_in(node) or root_trust
        for name, raw in candidates:
            child = node.value[raw]
            if child.kind != "scalar" or not isinstance(child.value, str):
                continue
            written = revision_for(name, revisions)
            pinned = written is not None and is_sha(written)
            hub_id, id_pinned, id_revision = _with_revision(name, child.value, pinned, None if pinned else written)
            if not is_hub_id(hub_id):
                continue
            dataset = name in DATASET_KEYS or name == "name" and _section(path) in DATASET_SECTIONS
            how = ".".join([_section(path), raw]) if name in MODEL_NAME_KEYS else raw
            yield HubUse(hub_id, child.located(), id_pinned, id_revision, None if dataset else trust, how, dataset)


@lru_cache(maxsize=4096)
def _leaf(key: str) -> str:
    """A map key as the rule compares it: ``model.name_or_path`` -> ``name_or_path``, lower-cased."""
    normalised = normalise_key(key)
    return normalised[-1] if normalised else key


def _with_revision(key: str, value: str, pinned: bool, revision: str | None) -> tuple[str, bool, str | None]:
    """(id, pinned, revision): ``org/x@<ref>`` under a key that takes the revision in its value
    (Levanter's ``initialize_from_hf``), else the value with the revision its siblings give."""
    hub_id = value.strip()
    if key in AT_REVISION_KEYS and "@" in hub_id:
        hub_id, _, ref = hub_id.partition("@")
        return hub_id, is_sha(ref), None if is_sha(ref) else ref
    return hub_id, pinned, revision


def _trust_in(node: Node) -> Located | None:
    for key, child in node.items():
        if normalise_key(key)[-1:] == ("trust_remote_code",) and child.kind == "scalar" and _is_true(child.value):
            return child.located()
    return None


@check(*HUB_RULES, scope="document", kinds=CONFIG_KINDS)
def config_hub_references(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``model_name_or_path: org/x`` in a run config with no sibling ``*_revision`` sha."""
    text = document.text
    if not any(key in text for key in ("model", "tokenizer", "dataset", "hf_path", "initialize_from_hf")):
        return
    configs = [root for root in document.trees if is_run_config(root)]
    vendors = bool(configs) and mentions_foreign_vendor(text)
    uses: list[HubUse] = []
    for root in configs:
        uses.extend(_config_uses(root, vendors))
    yield from _problems(uses, ctx)


# --------------------------------------------------------------------------- command lines


def flag_uses(settings: Sequence[Setting]) -> Iterator[HubUse]:
    """``--model_name_or_path org/x`` on one command, pinned by a ``--*revision`` sha on the same command;
    nothing when the command names another model service (``--model_type amazon.nova-lite-v1:0``)."""
    if any(setting.key and setting.key[-1] in PROVIDER_KEYS and names_foreign_vendor(setting.value)
           for setting in settings):
        return
    revisions: dict[str, str] = {}
    trust: Located | None = None
    for setting in settings:
        leaf = setting.key[-1] if setting.key else ""
        if _is_revision_key(leaf) and isinstance(setting.value, str):
            revisions.setdefault(leaf, setting.value)
        elif leaf == "trust_remote_code" and (setting.bare or _is_true(setting.value)):
            trust = trust or setting.where
    for setting in settings:
        key = setting.key
        if not (key and (key[-1] in HUB_KEYS and len(key) == 1 or key in (("model", "name"), ("model", "name_or_path")))):
            continue
        value = setting.value
        if not isinstance(value, str) or UNRESOLVED in value:
            continue
        written = revision_for(key[-1] if len(key) == 1 else "model_name_or_path", revisions)
        if written is not None and UNRESOLVED in written:
            continue  # the revision comes from a variable: it may well be a sha
        pinned = written is not None and is_sha(written)
        revision = None if pinned or written is None else written
        hub_id, id_pinned, revision = _with_revision(key[-1], value, pinned, revision)
        if not is_hub_id(hub_id):
            continue
        dataset = key[-1] in DATASET_KEYS
        yield HubUse(hub_id, setting.where, id_pinned, revision, None if dataset else trust,
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
    return any(key in text for key in ("model_name", "model-name", "base_model", "base-model", "tokenizer",
                                       "dataset_name", "dataset-name", "hf_path", "hf-path", "model.name",
                                       "trust_remote_code", "trust-remote-code", "initialize_from_hf",
                                       "initialize-from-hf"))


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
    if document.kind == FileKind.SHELL or not document.fact("mentions-hub-flag", _mentions_hub_flag):
        return  # a launch script is read as a whole by script_hub_references
    uses: list[HubUse] = []
    for container in workload.main_containers():
        for invocation in container_invocations(container, document):
            uses.extend(flag_uses(_expanded(flag_settings(invocation.words), invocation.lookup)))
    yield from _problems(uses, ctx)
