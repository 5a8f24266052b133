"""Secret collectors of text-like files: plain text, launch scripts, Python sources and Dockerfiles.

Each reads its kind of document as its parser left it (a script's commands, a module's string
literals, a Dockerfile's instructions) and falls back to the raw text where nothing was parsed.
"""

from __future__ import annotations

import ast
from typing import Iterator

from spikelint.documents.dockerfile import Dockerfile
from spikelint.model import Document
from spikelint.secrets.credentials import credential_file_secrets
from spikelint.secrets.detectors import Secret
from spikelint.secrets.python import python_secrets
from spikelint.secrets.carriers import text_mode
from spikelint.secrets.text import CONFIG
from spikelint.secrets.text import DATA
from spikelint.secrets.text import LineIndex
from spikelint.secrets.text import find_in_text
from spikelint.checks.secrets.commands import command_found
from spikelint.checks.secrets.dockerfile import credential_copy_findings
from spikelint.checks.secrets.dockerfile import image_leak_findings
from spikelint.checks.secrets.commands import script_secrets
from spikelint.checks.secrets.commands import shell_document_secrets
from spikelint.checks.secrets.env import env_literal
from spikelint.checks.secrets.env import env_type
from spikelint.checks.secrets.found import Found
from spikelint.checks.secrets.found import found_at
from spikelint.checks.secrets.found import quoted_key


# --------------------------------------------------------------------------- text-like files


def text_general(document: Document, text: str | None = None, first_line: int = 1, mode: str = CONFIG) -> Iterator[Found]:
    """SPK201 candidates in raw text, with key context from the lines themselves (as ``mode`` allows)."""
    lines = document.lines
    body = document.text if text is None else text
    index: LineIndex | None = None  # not text.count() per secret: quadratic in a file of many tokens
    for secret in find_in_text(body, mode=mode):
        index = index or LineIndex(body, first_line)
        start_line = index.position(secret.start)[0]
        yield found_at("SPK201", lines, secret, start_line, start_line + secret.value.count("\n"), (start_line, 1))


def file_credentials(document: Document) -> Iterator[Found]:
    lines = document.lines
    index: LineIndex | None = None
    for secret in credential_file_secrets(document.path, document.text):
        index = index or LineIndex(document.text)
        line = index.position(secret.start)[0]
        yield found_at("SPK206", lines, secret, line, line, (line, 1), " (credential file)")


def text_findings(document: Document) -> Iterator[Found]:
    yield from file_credentials(document)
    yield from text_general(document, mode=text_mode(document.path, document.text))


def shell_findings(document: Document) -> Iterator[Found]:
    lines = document.lines
    if document.parsed is not None:
        yield from command_found(lines, shell_document_secrets(document.parsed))
    yield from file_credentials(document)
    yield from text_general(document)


def python_findings(document: Document) -> Iterator[Found]:
    tree = document.parsed
    if not isinstance(tree, ast.AST):
        yield from text_general(document)
        return
    lines = document.lines
    in_literals: set[str] = set()
    for literal, secret in python_secrets(tree):
        first = min(literal.line + literal.value.count("\n", 0, secret.start), literal.end_line)
        in_literals.add(secret.value)
        yield found_at("SPK201", lines, secret, first, literal.end_line, (literal.line, literal.column),
                     quoted_key(literal.key, secret.value))
    # ``ast`` drops comments, and a token pasted as a bare name is no string: their shapes count too
    yield from _shapes_outside_literals(document, in_literals)


def _shapes_outside_literals(document: Document, in_literals: set[str]) -> Iterator[Found]:
    for found in text_general(document, mode=DATA):  # DATA: token shapes only
        if not any(found.value in value or value in found.value for value in in_literals):
            yield found


# --------------------------------------------------------------------------- Dockerfiles


def _env_pairs(keyword: str, value: str) -> list[tuple[str, str]]:
    """``ENV A=1 B="x y"`` / legacy ``ENV A some value`` / ``ARG A=1`` -> ``[(name, value)]``."""
    from spikelint.adapters.common import split_words

    words = [span.text for span in split_words(value) if not span.text.startswith("--")]
    if not words:
        return []
    if keyword == "ENV" and "=" not in words[0]:
        parts = value.strip().split(None, 1)
        return [(parts[0], parts[1].strip().strip("\"'"))] if len(parts) == 2 else []
    return [(word.partition("=")[0], word.partition("=")[2]) for word in words if "=" in word]


def dockerfile_findings(document: Document) -> Iterator[Found]:
    lines = document.lines
    dockerfile = document.parsed
    for instruction in getattr(dockerfile, "instructions", []):
        keyword = instruction.keyword
        if keyword in ("ENV", "ARG"):
            for name, value in _env_pairs(keyword, instruction.value):
                if env_literal(name, value):
                    yield found_at("SPK202", lines, Secret(value, env_type(name, value), 0, len(value)),
                                 instruction.line, instruction.end_line, (instruction.line, instruction.column),
                                 f" {name} ({keyword})")
        elif keyword == "RUN":
            if instruction.script is not None:
                items = shell_document_secrets(instruction.script)
            else:
                items = script_secrets(instruction.value, instruction.line, instruction.end_line)
            yield from command_found(lines, items)
            for secret in find_in_text(instruction.value):  # the whole RUN line is kept in the image history
                yield found_at("SPK203", lines, secret, instruction.line, instruction.end_line,
                             (instruction.line, instruction.column), "in a RUN instruction (kept in the image history)")
    yield from image_leak_findings(dockerfile)
    yield from text_general(document)



def dockerfile_copies(document: Document) -> Iterator[Found]:
    """What is left to read in a Dockerfile without a secret-ish word: ``COPY .netrc``, ``COPY id_rsa``."""
    if isinstance(document.parsed, Dockerfile):
        yield from credential_copy_findings(document.parsed)
