"""Run settings read from a config tree (YAML/JSON/TOML), with OmegaConf ``${a.b}`` interpolation resolved.

Sections change what a key means (``dirpath`` under a ``ModelCheckpoint`` is where checkpoints
go), so the walk marks checkpoint and logger sections before classifying their leaves.
"""

from __future__ import annotations

import re
from typing import Any

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.model import Node
from spikelint.facts.runconfig import CHECKPOINT_SECTIONS
from spikelint.facts.runconfig import CKPT_INTERVAL
from spikelint.facts.runconfig import LOGGER_SECTIONS
from spikelint.facts.runconfig import RESUME
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.runconfig import RunFacts
from spikelint.facts.runconfig import Setting
from spikelint.facts.runconfig import is_path_like
from spikelint.facts.runconfig import roles_of
from spikelint.facts.runconfig import summarise


_INTERPOLATION = lazy_regex(r"\$\{([^{}]*)\}")
MAX_INTERPOLATION_DEPTH = 12
# A chain of values each built from the one before (k2: ${k1}/x, k3: ${k2}/x …) grows with its
# length: past these a value is no path or name anyone configures, and keeping every expansion in
# full would be quadratic in the chain (8,000 links: 5 s and 360 MB).
MAX_RESOLVED_CHARS = 2048
MAX_SOURCES = 64


class _Tree:
    """A config tree with OmegaConf-style ``${a.b}`` interpolation (and ``oc.env`` defaults).

    Each referenced node is resolved once (memoised); a reference cycle resolves to UNRESOLVED.
    """

    def __init__(self, root: Node, env: dict[str, str] | None) -> None:
        self.root = root
        self.env = env or {}
        self.done: dict[int, tuple[str, tuple[tuple[Located, str], ...]]] = {}
        self.active: set[int] = set()

    def lookup(self, path: str, here: tuple[str | int, ...]) -> tuple[Node | None, tuple[str | int, ...]]:
        """The node ``path`` names (``here`` is the referring node's parent) and its absolute path."""
        if path.startswith("."):
            depth = len(path) - len(path.lstrip("."))
            base = list(here[:len(here) - depth + 1]) if depth - 1 <= len(here) else []
            parts: list[str | int] = [*base, *[p for p in path.lstrip(".").split(".") if p]]
        else:
            parts = [p for p in path.split(".") if p]
        node: Node | None = self.root
        for part in parts:
            if node is None:
                return None, ()
            if node.kind == "seq" and isinstance(part, str) and part.isdigit():
                node = node.get(int(part))
            elif isinstance(part, int):
                node = node.get(part)
            else:
                node = node.get(str(part))
        return node, tuple(parts)

    def resolve_node(self, node: Node, here: tuple[str | int, ...]) -> tuple[str, tuple[tuple[Located, str], ...]]:
        """A string scalar's value with its interpolations expanded (memoised, cycle-safe)."""
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.active or len(self.active) > MAX_INTERPOLATION_DEPTH:
            return UNRESOLVED, ()
        self.active.add(key)
        try:
            result = self.resolve(str(node.value), node.located(), here)
        finally:
            self.active.discard(key)
        self.done[key] = result
        return result

    def resolve(self, text: str, where: Located,
                here: tuple[str | int, ...]) -> tuple[str, tuple[tuple[Located, str], ...]]:
        """Interpolations expanded; the written texts that took part, for tracing timestamps."""
        sources: list[tuple[Located, str]] = [(where, text)]
        if "${" not in text:
            return text, tuple(sources)

        def substitute(match: re.Match[str]) -> str:
            body = match.group(1).strip()
            if body.startswith(("oc.env:", "env:")):
                name, _, default = body.split(":", 1)[1].partition(",")
                name = name.strip()
                if name in self.env:
                    return self.env[name]
                return default.strip().strip("'\"") if default else UNRESOLVED
            if ":" in body:
                return UNRESOLVED  # ${now:…}, ${hydra:…}, other resolvers
            node, absolute = self.lookup(body, here)
            if node is None or node.kind != "scalar" or node.value is None:
                return UNRESOLVED
            if not isinstance(node.value, str):
                return str(node.value)
            resolved, inner = self.resolve_node(node, absolute[:-1])
            sources.extend(inner[:max(0, MAX_SOURCES - len(sources))])
            return resolved

        resolved = text
        for _ in range(3):  # nested ${a.${b}} forms resolve from the inside out
            updated = _INTERPOLATION.sub(substitute, resolved)
            if updated == resolved:
                break
            resolved = updated
        if len(resolved) > MAX_RESOLVED_CHARS:
            resolved = UNRESOLVED
        return resolved, tuple(dict.fromkeys(sources))


def _section(path: tuple[str | int, ...],
             parents: dict[tuple[str | int, ...], str]) -> tuple[str, tuple[str | int, ...]]:
    """The innermost marked section (``checkpoint``/``logger``) holding ``path``, and its path."""
    for length in range(len(path) - 1, -1, -1):
        marked = parents.get(path[:length])
        if marked:
            return marked, path[:length]
    return "", ()


CLASS_KEYS = ("class_path", "_target_", "class", "type")


def _class_name(node: Node) -> str:
    for key in CLASS_KEYS:
        value = node.scalar(key)
        if isinstance(value, str):
            return value
    return ""


def _string_key(path: tuple[str | int, ...]) -> tuple[str, ...]:
    return tuple(str(part).lower().replace("-", "_") for part in path if not isinstance(part, int)
                 and part not in ("init_args", "dict_kwargs"))


def config_package(path: str | None) -> tuple[str, ...]:
    """The keys a config file's content sits under: a file of Hydra's ``hydra`` config group
    (``configs/hydra/default.yaml``) configures ``hydra.run.dir``, ``hydra.sweep.dir`` …"""
    if not path:
        return ()
    parts = path.replace("\\", "/").split("/")
    return ("hydra",) if len(parts) >= 2 and parts[-2] == "hydra" and parts[-1].endswith((".yaml", ".yml")) else ()


def config_settings(root: Node, config: str | None = None, env: dict[str, str] | None = None,
                    package: tuple[str, ...] = ()) -> list[Setting]:
    """Every classified setting of a run config tree, interpolations resolved; ``package`` prefixes its keys."""
    from spikelint.model import walk

    if root.kind != "map":
        return []
    tree = _Tree(root, env)
    marks: dict[tuple[str | int, ...], str] = {}
    found: list[Setting] = []
    for path, node in walk(root):
        if node.kind == "map":
            name = _class_name(node)
            key_name = str(path[-1]).lower() if path and not isinstance(path[-1], int) else ""
            if name.endswith("ModelCheckpoint") or key_name in CHECKPOINT_SECTIONS:
                marks[path] = "checkpoint"
                if name.endswith("ModelCheckpoint"):
                    where = node.get(next(k for k in CLASS_KEYS if isinstance(node.scalar(k), str)))
                    assert where is not None
                    found.append(Setting(_string_key(path) + ("modelcheckpoint",), name, where.located(),
                                         frozenset((CKPT_INTERVAL,)), name, "ModelCheckpoint", config=config,
                                         scope=path))
            elif name.endswith("Logger") or key_name in LOGGER_SECTIONS:
                marks[path] = "logger"
            continue
        if node.kind != "scalar" or not path or isinstance(path[-1], int):
            continue
        key = package + _string_key(path)
        if key and key[-1] in CLASS_KEYS:
            continue
        section, scope = _section(path, marks)
        value: Any = node.value
        sources: tuple[tuple[Located, str], ...] = ((node.located(), str(value)),) if value is not None else ()
        if isinstance(value, str) and "${" in value:
            value, sources = tree.resolve_node(node, path[:-1])
        roles = roles_of(key, value, section)
        if not roles:
            continue
        origin = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in package + path).lstrip(".")
        named = RESUME in roles and _checkpoint_beside(root.get(*path[:-1]), str(path[-1]))
        found.append(Setting(key, value, node.located(), roles, node.value, origin, sources, config=config,
                             scope=scope, names_checkpoint=named))
    return _torchtitan_folders(found)


# keys that name one checkpoint to load (not the folder the run saves to and may resume from)
_NAMES_CHECKPOINT = lazy_regex(r"^(init|load|restore|start)_?from|pretrained|^(ckpt|checkpoint)_(path|file)$|"
                               r"_(ckpt|checkpoint)_(path|file)$", re.IGNORECASE)


def _checkpoint_beside(parent: Node | None, own: str) -> bool:
    """``load_from_checkpoint: true`` next to ``init_from_ptl_ckpt: ${ckpt_path}``: the switch loads
    the checkpoint its sibling names, not whatever happens to be in the output folder."""
    if parent is None or parent.kind != "map":
        return False
    for key, child in parent.value.items():
        if key == own or child.kind != "scalar" or not isinstance(child.value, str):
            continue
        if _NAMES_CHECKPOINT.search(key) and "resume" not in key.lower() and is_path_like(child.value):
            return True
    return False


def _torchtitan_folders(settings: list[Setting]) -> list[Setting]:
    """torchtitan's ``[checkpoint] folder`` is relative to ``[job] dump_folder``."""
    dump = next((s for s in settings if s.key == ("job", "dump_folder") and isinstance(s.value, str)), None)
    if dump is None:
        return settings
    joined = []
    for setting in settings:
        if setting.key == ("checkpoint", "folder") and isinstance(setting.value, str) \
                and not setting.value.startswith("/"):
            value = f"{str(dump.value).rstrip('/')}/{setting.value}"
            setting = setting._replace(value=value, sources=setting.sources + dump.sources)
        joined.append(setting)
    return joined


def facts_of(tree: Node, config: str | None = None, env: dict[str, str] | None = None) -> RunFacts:
    """A config tree's run facts (standalone run configs and referenced ones)."""
    return summarise(config_settings(tree, config, env))
