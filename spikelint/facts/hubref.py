"""What a hub reference is: an ``org/name`` id, a commit sha, and where ids are written.

Shared by the Python reader (:mod:`spikelint.checks.images.hubcalls`) and the config and command-line
checks (:mod:`spikelint.checks.images.hub`), so the three carriers agree on what is pinned.  Nothing
here contacts a hub: a reference is pinned only when the commit is written down.
"""

from __future__ import annotations

import re
from typing import Iterable
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located

SHA = lazy_regex(r"^[0-9a-f]{40}$")
# a hub id as the hub spells it: one ``org/name``, letters, digits, ``-``, ``_``, ``.``
HUB_ID = lazy_regex(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}$")
# a last part that names a file, not a repository (``data/train.jsonl``, ``ckpt/model.pt``)
FILE_SUFFIX = lazy_regex(r"\.(json|jsonl|ya?ml|toml|txt|csv|tsv|parquet|arrow|bin|pt|pth|ckpt|safetensors|"
                         r"pkl|pickle|npz|npy|h5|py|sh|gz|zip|tar|md|model|spm|tiktoken|vocab)$", re.IGNORECASE)
# another service's model names that happen to contain one slash: Bedrock's ``vendor.model-vN`` (with an
# optional cross-region prefix) and SageMaker JumpStart's ``huggingface-llm-…``/``meta-textgeneration-…``
BEDROCK_NAME = lazy_regex(r"^(?:(?:us|eu|apac|global)\.)?(?:amazon|anthropic|meta|mistral|cohere|ai21|stability|"
                          r"deepseek|writer|qwen|openai|twelvelabs|luma)\.[a-z0-9]", re.IGNORECASE)
JUMPSTART_NAME = lazy_regex(r"^(?:huggingface|meta|mistral|js)-(?:llm|textgeneration\d*|text2text|textembedding|tc|"
                            r"spc|eqa|ner|vlm|asr|txt2img|fillmask|summarization|translation|sentencesimilarity|"
                            r"zstc|imagegeneration)-", re.IGNORECASE)
# first parts that are folders of a checkout or a run, never hub organisations
LOCAL_ROOTS = frozenset((
    "data", "dataset", "datasets", "model", "models", "checkpoint", "checkpoints", "ckpt", "ckpts", "output",
    "outputs", "out", "runs", "run", "tmp", "temp", "cache", "path", "paths", "config", "configs", "conf",
    "results", "exp", "exps", "experiments", "local", "workspace", "mnt", "home", "save", "saved", "saved_models",
    "weights", "logs", "src", "tests", "test", "scripts", "examples", "assets", "resources", "fixtures", "your",
    "my", "username", "your_org", "your-org", "your_username", "your-username",
))


def is_sha(value: object) -> bool:
    """A full commit sha (the only revision the hub cannot move)."""
    return isinstance(value, str) and bool(SHA.match(value.strip().lower()))


def is_hub_id(text: object) -> bool:
    """A literal ``org/name`` that a hub client resolves online.

    Local paths (``./x``, ``/x``, ``~/x``, ``file://``), templates (``${…}``, ``{…}``, ``<…>``),
    file names and checkout folders (``data/train``, ``configs/x.yaml``) are not ids.
    """
    if not isinstance(text, str):
        return False
    value = text.strip()
    if not HUB_ID.match(value):
        return False
    org, name = value.split("/")
    if org.lower() in LOCAL_ROOTS or org.startswith(".") or name.startswith("."):
        return False
    if BEDROCK_NAME.match(name) or JUMPSTART_NAME.match(name):
        return False  # ``bedrock/meta.llama3-8b-instruct-v1``: another service's model name
    return not FILE_SUFFIX.search(name)


# keys that say which service a model comes from (``model_type: amazon.nova-lite-v1:0``, ``provider: bedrock``)
PROVIDER_KEYS = frozenset((
    "model_type", "provider", "platform", "model_provider", "llm_provider", "provider_name", "api_type",
    "api_provider", "vendor", "model_platform", "model_source", "model_hub", "hub",
))
# services other than the Hugging Face Hub: an ``org/name`` beside one of them is that service's model name
FOREIGN_VENDORS = frozenset((
    "amazon", "bedrock", "nova", "sagemaker", "jumpstart", "openai", "azure", "anthropic", "claude", "vertex",
    "vertexai", "gemini", "nim", "ngc", "cohere", "watsonx",
))
# Hugging Face model types that contain such a word (run_clm's ``--model_type openai-gpt``)
HF_MODEL_TYPES_NAMING_VENDORS = frozenset(("openai-gpt", "openai_gpt"))
WORD_BREAK = lazy_regex(r"[^a-z0-9]+")


def mentions_foreign_vendor(text: str) -> bool:
    """A cheap test on a whole file before its keys are read: does it name a model service at all?
    (``in`` on the lowered text: a case-blind alternation of 15 words was 20x slower in ``re``.)"""
    lowered = text.lower()
    return any(word in lowered for word in FOREIGN_VENDORS)


def names_foreign_vendor(value: object) -> bool:
    """``amazon.nova-lite-v1:0``, ``bedrock``, ``nvidia-nim``: a model service that is not the Hugging Face Hub."""
    if not isinstance(value, str):
        return False
    lowered = value.strip().lower()
    if not lowered or lowered in HF_MODEL_TYPES_NAMING_VENDORS:
        return False
    return any(word in FOREIGN_VENDORS for word in WORD_BREAK.split(lowered))


def in_tree(hub_id: str, paths: Iterable[str]) -> bool:
    """``hub_id`` is also a folder of the scanned tree (a local model folder that shadows the hub)."""
    inner = f"/{hub_id}/"
    head = f"{hub_id}/"
    return any(path.startswith(head) or inner in path for path in paths)


class HubUse(NamedTuple):
    """One place a hub id is fetched, with what pins it (or not)."""

    hub_id: str
    where: Located  # the id as written (or the name/flag that carries it)
    pinned: bool  # a 40-hex sha revision is written for it
    revision: str | None  # the revision as written, when it is a literal that is not a sha
    trust: Located | None  # the ``trust_remote_code`` argument, key or flag that applies to it
    how: str  # how messages name the use: "AutoModel.from_pretrained()", "model_name_or_path", "--base_model"
    dataset: bool = False  # a dataset rather than a model or tokenizer


PIN_PYTHON = 'revision="<40-hex sha>"'
# Levanter's ``initialize_from_hf: org/x@<revision>`` carries its revision in the value
REVISION_IN_VALUE_KEYS = frozenset(("initialize_from_hf",))
# a bare ``tokenizer: org/x`` (Levanter's data config) is handed to the loader with no revision
NO_REVISION_KEYS = frozenset(("tokenizer",))
PINNED_COPY = ('point it at a copy downloaded at a pinned commit (huggingface_hub.snapshot_download(repo_id, '
               'revision="<40-hex sha>", local_dir=…)), as its key takes no revision')


def how_to_pin(use: HubUse) -> str:
    """The fix, in the carrier's own words."""
    if use.how.startswith("torch.hub.load"):
        return "pin it as \"owner/repo:<40-hex commit sha>\""
    if use.how.startswith("timm."):
        return "download it pinned (snapshot_download(repo_id, revision=\"<40-hex sha>\")) and load the local folder"
    if use.how.endswith(")"):
        return f"pass {PIN_PYTHON}"
    leaf = use.how.rsplit(".", 1)[-1].lstrip("-").replace("-", "_")
    if leaf in REVISION_IN_VALUE_KEYS:
        return f"write it as {use.hub_id}@<40-hex sha>"
    if leaf in NO_REVISION_KEYS:
        return PINNED_COPY
    if use.how.startswith("--"):
        flag = "--dataset_revision" if use.dataset else "--model_revision"
        return f"add {flag} <40-hex sha> (or --revision) to the same command"
    key = "dataset_revision" if use.dataset else "model_revision"
    return f"set {key}: <40-hex sha> (or revision:) beside it"


def find_the_sha(hub_id: str, dataset: bool = False) -> str:
    info = "dataset_info" if dataset else "model_info"
    return (f"the sha is in the hub's commit history of {hub_id}, or "
            f"huggingface_hub.HfApi().{info}({hub_id!r}).sha")


SHORT_SHA = lazy_regex(r"^[0-9a-f]{7,39}$")


def _revision_problem(revision: str) -> str:
    if SHORT_SHA.match(revision.lower()):
        return f"revision {revision!r} is an abbreviated sha, not the full 40-hex commit"
    return f"revision {revision!r} is a branch or tag, which moves"


def unpinned_message(use: HubUse) -> str:
    what = "dataset" if use.dataset else "model"
    why = _revision_problem(use.revision) if use.revision else "no commit is pinned"
    moved = "different data" if use.dataset else "different weights, config or tokenizer"
    return (f"{use.how} fetches the {what} {use.hub_id!r} from the hub and {why}: a retried or resumed run can "
            f"load {moved} than the run that started — {how_to_pin(use)}; "
            f"{find_the_sha(use.hub_id, use.dataset)}")


def remote_code_message(use: HubUse) -> str:
    why = f"at {_revision_problem(use.revision)}" if use.revision else "with no commit pinned"
    return (f"trust_remote_code runs Python code from {use.hub_id!r} ({use.how}) {why}: the next push to that "
            f"repository changes the code the job runs — {how_to_pin(use)}, or vendor the code; "
            f"{find_the_sha(use.hub_id, use.dataset)}")


def first_per_id(uses: Iterable[HubUse], local: Iterable[str] = ()) -> list[tuple[str, HubUse]]:
    """One (rule, use) per hub id: SPK106 at the first ``trust_remote_code`` of an unpinned id,
    else SPK105 at its first unpinned use; pinned uses and local ids give nothing."""
    skipped = set(local)
    by_id: dict[str, list[HubUse]] = {}
    for use in uses:
        if use.hub_id not in skipped and not use.pinned:
            by_id.setdefault(use.hub_id, []).append(use)
    found: list[tuple[str, HubUse]] = []
    for hub_id, group in by_id.items():
        ordered = sorted(group, key=lambda use: (use.where.line, use.where.column))
        trusted = [use for use in ordered if use.trust is not None]
        if trusted:
            found.append(("SPK106", trusted[0]))
        else:
            found.append(("SPK105", ordered[0]))
    return found
