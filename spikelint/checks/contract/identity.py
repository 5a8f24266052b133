"""SPK604: a training workload that cannot be identified afterwards (seed, code revision,
dataset version), looked up in its labels, annotations, env names, command-line flags and the
keys of the config file its command references."""

from __future__ import annotations

from typing import Iterable
from typing import Iterator

from spikelint.checks.capacity.workload import workload_label
from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import Node
from spikelint.model import Problem
from spikelint.model import Workload

ALIASES: dict[str, tuple[str, ...]] = {
    "seed": ("random_seed", "seed_everything"),
    "code_revision": ("git_sha", "git_commit", "revision", "commit"),
    "dataset_version": ("data_version", "dataset_revision"),
}
FLAG = lazy_regex(r"(?:^|[\s;&|(])-{1,2}([A-Za-z][\w.\-]*)")
OVERRIDE = lazy_regex(r"(?:^|[\s;&|(])(?:export\s+)?\+{0,2}([A-Za-z_][\w.\-]*)=")
# starts only where a path word starts (the look-behind), so a long argument is scanned once, not
# once per character (a 100 KB word took minutes with an unanchored start)
CONFIG_FILE = lazy_regex(r"(?<![\w./~${}@+-])[\w./~${}@+-]*[\w}]\.(?:ya?ml|json|toml)\b")
CONFIG_NAME_FLAGS = ("--config-name", "--config_name", "-cn")
CONFIG_PATH_FLAGS = ("--config-path", "--config_path", "-cp")


def normalise(name: str) -> str:
    """Lowercased, prefix up to ``/`` dropped, ``-`` and ``.`` read as ``_``."""
    return name.strip().lower().rsplit("/", 1)[-1].replace("-", "_").replace(".", "_")


def field_names(field: str) -> tuple[str, ...]:
    base = normalise(field)
    return (base, *ALIASES.get(base, ()))


def records(name: str, field: str) -> bool:
    """Whether a label/annotation/env/flag/config key ``name`` records ``field``."""
    normal = normalise(name)
    return any(normal == candidate or normal.endswith("_" + candidate) for candidate in field_names(field))


def command_texts(workload: Workload) -> list[str]:
    return [str(word.value) for container in workload.containers for word in container.command + container.args]


def workload_names(workload: Workload) -> set[str]:
    """Every name the workload itself carries: label and annotation keys, env names, flags."""
    names: set[str] = set(workload.labels) | set(workload.annotations)
    for container in workload.containers:
        names.update(str(variable.name.value) for variable in container.env)
    for text in command_texts(workload):
        names.update(FLAG.findall(text))
        names.update(OVERRIDE.findall(text))
    return names


def config_references(workload: Workload) -> list[str]:
    """Config files the command (or an env value) names: any ``*.yaml|yml|json|toml`` word,
    and Hydra's ``--config-path P --config-name N``."""
    texts = command_texts(workload)
    texts.extend(str(variable.value.value) for container in workload.containers for variable in container.env
                 if variable.value is not None)
    found: list[str] = []
    for text in texts:
        found.extend(match.group() for match in CONFIG_FILE.finditer(text))
    words = [word.split("=", 1) if word.startswith("--") and "=" in word else [word] for word in command_texts(workload)]
    flat = [part for pieces in words for part in pieces]
    hydra_name = _value_after(flat, CONFIG_NAME_FLAGS)
    if hydra_name and not CONFIG_FILE.fullmatch(hydra_name):
        folder = _value_after(flat, CONFIG_PATH_FLAGS)
        found.append(f"{folder.rstrip('/')}/{hydra_name}.yaml" if folder else f"{hydra_name}.yaml")
    return list(dict.fromkeys(found))


def _value_after(words: list[str], flags: tuple[str, ...]) -> str | None:
    for index, word in enumerate(words[:-1]):
        if word in flags:
            return words[index + 1]
    return None


def config_keys(trees: Iterable[Node]) -> set[str]:
    """Keys of a config (and ``parent_key`` pairs, so ``git: {sha: …}`` reads as ``git_sha``);
    a key whose value is null records nothing."""
    keys: set[str] = set()
    for root in trees:
        stack: list[tuple[str, Node]] = [("", root)]
        seen: set[int] = set()
        while stack:
            parent, node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.kind == "map":
                for key, value in node.value.items():
                    if not (value.kind == "scalar" and (value.value is None or value.value == "")):
                        keys.add(key)
                        if parent:
                            keys.add(f"{parent}_{key}")
                    stack.append((key, value))
            elif node.kind == "seq":
                stack.extend((parent, item) for item in node.value)
    return keys


def referenced_config_keys(workload: Workload, document: Document, ctx: CheckContext) -> set[str]:
    keys: set[str] = set()
    for reference in config_references(workload):
        if "$" in reference.rsplit("/", 1)[-1]:
            continue  # the file name itself is a variable: nothing to match
        found = ctx.project.find_config(reference, near=document)
        if found is not None and found.trees:
            keys |= config_keys(found.trees)
    return keys


def missing_fields(names: set[str], fields: Iterable[str]) -> list[str]:
    return [field for field in fields if not any(records(name, field) for name in names)]


@check("SPK604", scope="workload")
def missing_run_identity(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Training workloads must record every field of ``required_run_identity``."""
    if not workload.is_training:
        return
    fields = [field for field in ctx.config.required_run_identity if field.strip()]
    missing = missing_fields(workload_names(workload), fields)
    if missing:
        missing = missing_fields(referenced_config_keys(workload, document, ctx), missing)
    if not missing:
        return
    listed = ", ".join(missing)
    label = workload_label(workload)  # ``Run:ai training workload 'sft'`` says it already
    named = label if "training workload" in label else f"training workload {label}"
    yield Problem.at("SPK604", workload.anchor,
                     f"{named} does not record its {listed} (looked in labels, annotations, env, flags and the referenced "
                     f"config) — add e.g. a label, env var or flag named {missing[0]} so the run can be identified "
                     f"afterwards", key=f"identity:{workload.kind}:{workload.name.value if workload.name else ''}:{listed}")
