"""Secrets in a read image tarball (SPK205): config ``Env``/``Labels``/``Cmd``/``history`` and
credential files in layers, including files a later layer deleted (a whiteout hides a file,
it does not remove it: the lower layer still ships it)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from typing import Iterator

from spikelint.documents.image import ImageContents
from spikelint.documents.image import ImageManifest
from spikelint.documents.image import Layer
from spikelint.documents.image import LayerFile
from spikelint.secrets.cmdline import ArgWord
from spikelint.secrets.cmdline import command_secrets
from spikelint.secrets.context import is_not_a_credential_literal
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.context import is_secret_env_name
from spikelint.secrets.context import looks_like_secret_name
from spikelint.secrets.credentials import credential_file_kind
from spikelint.secrets.credentials import credential_file_secrets
from spikelint.secrets.credentials import is_vendored
from spikelint.secrets.credentials import json_credential_secrets
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import type_for_key
from spikelint.secrets.text import find_in_text

SHELL_PREFIXES = ("/bin/sh -c #(nop) ", "/bin/sh -c ", "/bin/bash -c ", "RUN /bin/sh -c ", "RUN ")


def _name(image: ImageManifest) -> str:
    return image.tags[0] if image.tags else "image"


def env_secrets(entries: Any) -> Iterator[tuple[Secret, str]]:
    """``Env: ["HF_TOKEN=hf_…"]``: secret-named variables with literals, and token shapes in any value."""
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, str) or "=" not in entry:
            continue
        name, _, value = entry.partition("=")
        tokens = find_in_text(value, name)
        if tokens:
            yield from ((secret, f"config Env {name}") for secret in tokens)
        elif is_secret_env_name(name) and value and not (is_reference(value) or is_placeholder(value) or
                                                          is_not_a_credential_literal(value) or
                                                          looks_like_secret_name(value)):
            yield Secret(value, type_for_key(name, value), 0, len(value)), f"config Env {name}"


def label_secrets(labels: Any) -> Iterator[tuple[Secret, str]]:
    for key, value in labels.items() if isinstance(labels, dict) else []:
        if isinstance(value, str):
            yield from ((secret, f"config label {key}") for secret in find_in_text(value, str(key)))


def history_secrets(history: Any) -> Iterator[tuple[Secret, str]]:
    """``created_by`` keeps build args (``|1 HF_TOKEN=…``) and every ``RUN`` command line."""
    for index, step in enumerate(history if isinstance(history, list) else []):
        created = step.get("created_by") if isinstance(step, dict) else None
        if not isinstance(created, str) or not created:
            continue
        where = f"config history[{index}].created_by"
        seen: set[str] = set()
        for secret in find_in_text(created):
            seen.add(secret.value)
            yield secret, where
        for secret in _command_line_secrets(created):
            if secret.value not in seen:
                seen.add(secret.value)
                yield secret, where


def _command_line_secrets(created: str) -> Iterator[Secret]:
    from spikelint.documents.shell import parse_shell

    text = created
    for prefix in SHELL_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    if text.startswith("|"):  # ``|2 A=1 B=2 /bin/sh -c …``: build args, then the command
        parts = text.split(" /bin/sh -c ", 1)
        text = parts[1] if len(parts) == 2 else text
    script = parse_shell(text)
    for nested in script.scripts():
        for command in nested.commands():
            argv = [ArgWord(word.text, 1, 1, 1, word.raw) for word in command.words]
            for found in command_secrets(argv):
                yield found.secret


def config_secrets(config: dict[str, Any]) -> Iterator[tuple[Secret, str]]:
    inner = config.get("config") or config.get("container_config") or {}
    if isinstance(inner, dict):
        yield from env_secrets(inner.get("Env"))
        yield from label_secrets(inner.get("Labels"))
        for key in ("Cmd", "Entrypoint"):
            words = inner.get(key)
            text = " ".join(word for word in words if isinstance(word, str)) if isinstance(words, list) else ""
            yield from ((secret, f"config {key}") for secret in find_in_text(text))
    yield from history_secrets(config.get("history"))


def layer_file_secrets(file: LayerFile) -> list[Secret]:
    """Credentials in one file of a layer (whiteouts and empty placeholders hold none)."""
    if file.size == 0 or not file.content.strip():
        return []
    kind = credential_file_kind(file.path)
    if kind == "private-key" and is_vendored(file.path):
        return []
    found = credential_file_secrets(file.path, file.content)
    if not found and file.path.endswith(".json"):
        found = json_credential_secrets(file.path, file.content)
    if not found and kind != "private-key":
        found = find_in_text(file.content)
    return found


def deleted_later(path: str, layers: list[Layer], position: int) -> int | None:
    """1-based index of the first layer above ``position`` that whites out ``path`` (or a folder of it)."""
    parents = [str(parent) for parent in PurePosixPath(path).parents if str(parent) != "."]
    for index in range(position + 1, len(layers)):
        layer = layers[index]
        if path in layer.whiteouts or any(parent in layer.whiteouts for parent in parents):
            return index + 1
        if any(folder in parents or folder == "" for folder in layer.opaque):
            return index + 1
    return None


def layer_secrets(image: ImageManifest) -> Iterator[tuple[Secret, str]]:
    for position, layer in enumerate(image.layers):
        digest = image.layer_digests[position] if position < len(image.layer_digests) else layer.member
        label = f"layer {position + 1} ({digest[:19]}…)"
        for file in layer.files:
            secrets = layer_file_secrets(file)
            if not secrets:
                continue
            deleted = deleted_later(file.path, image.layers, position)
            note = (f"; deleted in layer {deleted} by a whiteout, but layer {position + 1} still ships it"
                    if deleted else "")
            for secret in secrets:
                yield secret, f"{label} file /{file.path}{note}"


def image_secrets(contents: ImageContents) -> Iterator[tuple[Secret, str]]:
    """Every secret of every image in the tarball, with where it is (config field or layer file)."""
    seen: set[tuple[str, str]] = set()
    for image in contents.images:
        name = _name(image)
        for secret, where in [*config_secrets(image.config), *layer_secrets(image)]:
            identity = (secret.value, where)
            if identity in seen:
                continue
            seen.add(identity)
            yield secret, f"{name} {where}"

