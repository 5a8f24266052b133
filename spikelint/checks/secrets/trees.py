"""Secret collectors of YAML, JSON and TOML trees: every string scalar judged with its key.

A scalar's key says what it is (``password``, ``HF_TOKEN``, the ``name`` beside a ``value``);
credential objects and command keys of the same tree are read here too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator

from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Node
from spikelint.model import walk
from spikelint.secrets.credentials import credential_file_kind
from spikelint.secrets.credentials import credential_object_secrets
from spikelint.secrets.text import CONFIG
from spikelint.secrets.text import DATA
from spikelint.secrets.text import find_in_text
from spikelint.secrets.detectors import Secret
from spikelint.checks.secrets.commands import tree_commands
from spikelint.checks.secrets.env import HARBOR_ROBOT
from spikelint.checks.secrets.env import KEYED_TYPES
from spikelint.checks.secrets.env import is_robot_account
from spikelint.checks.secrets.files import file_credentials
from spikelint.checks.secrets.files import text_general
from spikelint.checks.secrets.found import Found
from spikelint.checks.secrets.found import found_at
from spikelint.checks.secrets.found import quoted_key


VALUE_KEYS = frozenset(("value", "default", "defaultValue", "val"))
NAME_KEYS = ("name", "key", "variable", "env", "envName")


# --------------------------------------------------------------------------- YAML / JSON / TOML


def effective_key(root: Node, path: tuple[str | int, ...]) -> str:
    """The name a scalar is written under: its map key, the ``name`` beside a ``value``, the
    key above a Run:ai ``{value: …}`` wrapper, the key of the list it is an item of."""
    keys = _last_keys(path)  # called for every scalar of a tree: only the last two keys are needed
    if not keys:
        return ""
    key = keys[-1]
    if key.lower() == "key" and len(keys) >= 2:
        return f"{keys[-2]}_key"  # ``wandb: {key: …}`` is a W&B key, ``secretKeyRef: {key: …}`` names one
    if key in VALUE_KEYS and path and path[-1] == key:
        parent = root.get(*path[:-1])
        if parent is not None and parent.kind == "map":
            for name_key in NAME_KEYS:
                name = parent.scalar(name_key)
                if isinstance(name, str) and name:
                    return name
        return keys[-2] if len(keys) >= 2 else key
    return key


def _last_keys(path: tuple[str | int, ...]) -> list[str]:
    """The last two map keys of ``path`` (sequence indexes skipped), outermost first."""
    found: list[str] = []
    for step in reversed(path):
        if isinstance(step, str):
            found.append(step)
            if len(found) == 2:
                break
    found.reverse()
    return found


def tree_general(document: Document, root: Node, lines: list[str]) -> Iterator[Found]:
    """SPK201 candidates: every string scalar, judged with the key it is written under (in a dataset,
    only by its shape: ``{"password": "a9B7$#fG3&Z1"}`` in a tool-call demo is a sample, not a leak)."""
    mode = DATA if is_json_dataset(document, root) else CONFIG
    robots = RobotMaps(root)
    for path, node in walk(root):
        if node.kind != "scalar" or not isinstance(node.value, str) or len(node.value) < MIN_SECRET:
            continue
        key = "" if is_reference_tag(node.tag) else effective_key(root, path)
        # ``!Ref LdapPassword``, ``!GetAtt X.Arn``, ``!Sub …``: an expression, not a literal
        found = scalar_secrets(node.value, key, mode)
        if found and key and any(isinstance(step, str) and "encrypted" in step.lower() for step in path):
            key = ""  # SealedSecret ``encryptedData`` is ciphertext, not a secret
            found = scalar_secrets(node.value, key, mode)
        for secret in found:
            if secret.type in KEYED_TYPES and robots.beside(path):
                secret = secret._replace(type=HARBOR_ROBOT)
            first = min(node.line + node.value.count("\n", 0, secret.start), node.end_line)
            yield found_at("SPK201", lines, secret, first, node.end_line, (node.line, node.column),
                         quoted_key(key, secret.value))


MIN_SECRET = 6  # characters: nothing shorter is reported (the shortest passwords counted)
DATASET_RECORDS = 16  # a JSON array of at least this many objects is a dataset (records), not a configuration
SAMPLED_RECORDS = 64


def is_json_dataset(document: Document, root: Node) -> bool:
    """A JSON file whose top level is a list of records (``[{"instruction": …, "output": …}, …]``): data a
    trainer reads, like a JSONL file (rules.md: only token-shaped detectors run in datasets)."""
    if document.kind != FileKind.JSON or root.kind != "seq" or len(root.value) < DATASET_RECORDS:
        return False
    return all(item.kind == "map" for item in root.value[:SAMPLED_RECORDS])


@lru_cache(maxsize=4096)
def scalar_secrets(value: str, key: str, mode: str = CONFIG) -> tuple[Secret, ...]:
    """:func:`find_in_text` of one scalar under its key, remembered: a repository repeats most values
    (images, names, paths, flags) under the same keys, and three scans in four were of a pair already
    judged in another file (500 generated files: 2,268 scans, 644 pairs; kubeflow/trainer: 16,150, 3,837)."""
    return tuple(find_in_text(value, key, mode))


def is_reference_tag(tag: str | None) -> bool:
    """A local YAML tag (``!Ref``, ``!GetAtt``, ``!Sub``, ``!vault``): the scalar is an expression."""
    return tag is not None and tag.startswith("!") and not tag.startswith("!!")


class RobotMaps:
    """Which maps of a tree hold a robot account name, each map looked at once (not once per secret)."""

    def __init__(self, root: Node) -> None:
        self.root = root
        self.known: dict[tuple[str | int, ...], bool] = {}

    def beside(self, path: tuple[str | int, ...]) -> bool:
        """The secret sits in the same map as a robot account name (``{username: robot$…, password: …}``)."""
        if not path:
            return False
        parent_path = path[:-1]
        if parent_path not in self.known:
            parent = self.root.get(*parent_path)
            self.known[parent_path] = parent is not None and parent.kind == "map" and any(
                child.kind == "scalar" and is_robot_account(child.value) for child in parent.value.values())
        return self.known[parent_path]


def tree_credentials(root: Node, lines: list[str]) -> Iterator[Found]:
    for item in credential_object_secrets(root):
        node = item.node
        yield found_at("SPK206", lines, item.secret, node.line, node.end_line, (node.line, node.column), f" ({item.what})")


def tree_findings(document: Document) -> Iterator[Found]:
    lines = document.lines
    if credential_file_kind(document.path) is not None:  # kaggle.json, .docker/config.json, kubeconfig …
        yield from file_credentials(document)
    for root in document.trees:
        yield from tree_credentials(root, lines)
        yield from tree_commands(root, lines)
        yield from tree_general(document, root, lines)
    if document.kind in (FileKind.YAML, FileKind.TOML):
        yield from shapes_outside_values(document)


def shapes_outside_values(document: Document) -> Iterator[Found]:
    """Token shapes no string value of the trees holds: a comment (``# deploy token: ghp_…``) or a key,
    which a tree does not keep as a value, so only the text shows them.  A shape inside a value is the
    tree's to judge with its key (a sample under ``example:`` stays a sample)."""
    candidates = list(text_general(document, mode=DATA))  # DATA: token shapes only, as in Python comments
    if not candidates:
        return
    strings = [node for root in document.trees for _, node in walk(root)
               if node.kind == "scalar" and isinstance(node.value, str)]
    for found in candidates:
        if document.kind == FileKind.YAML:  # a YAML value's span is exact
            start = (found.line, found.column)
            inside = any((node.line, node.column) <= start < (node.end_line, node.end_column) for node in strings)
        else:  # a TOML value sits at its key's line: whether one holds the shape
            inside = any(found.value in node.value for node in strings)
        if not inside:
            yield found


