"""Fixes that edit one word where the finding points, in any kind of file: ``python`` ->
``python -u`` (SPK502) and an image reference -> the reference with the team's pinned digest
(SPK101/SPK102).  The word is read back from the text at the finding's position and must be
exactly what the finding names, so an escaped or computed value is never guessed at."""

from __future__ import annotations

import ast
import re
from typing import Iterator
from typing import Sequence

from spikelint.fix.context import FixContext
from spikelint.fix.context import Outcome
from spikelint.fix.context import refuse
from spikelint.fix.edits import Edit
from spikelint.fix.edits import Fix
from spikelint.fix.edits import offset
from spikelint.model import Finding

BUFFERED_WORD = re.compile(r"^`([^`\s]+)` writes its output")
WORD_END = frozenset(" \t\r\n\"';,)]}")
TOKEN_END = frozenset(" \t\r\n\"',]}")
NAMED_IMAGE = re.compile(r"""^image ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def unbuffered_python(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    """SPK502: ``-u`` right after the interpreter's word."""
    for finding in findings:
        named = BUFFERED_WORD.match(finding.message)
        if named is None:
            yield refuse(finding, "the finding does not name the interpreter")
            continue
        word = named.group(1)
        try:
            start = offset(context.text, finding.line, finding.column)
        except ValueError:
            yield refuse(finding, "the finding's position is outside the file")
            continue
        end = start + len(word)
        following = context.text[end:end + 1]
        if context.text[start:end] != word or (following and following not in WORD_END):
            yield refuse(finding, f"`{word}` is not written literally at line {finding.line} (escaped or "
                                  f"computed): add -u or PYTHONUNBUFFERED=1 by hand")
            continue
        yield Fix(finding.rule, (finding.fingerprint,), (Edit(end, end, " -u"),),
                  f"line {finding.line}: `{word}` -> `{word} -u`")


def _token_end(text: str, start: int) -> int:
    """Where the word at ``start`` ends; a ``${VAR}`` inside it is read whole (``}`` ends a flow
    mapping, not a variable)."""
    end = start
    while end < len(text) and text[end] not in TOKEN_END:
        if text.startswith("${", end) and "}" in text[end:]:
            end = text.index("}", end)
        end += 1
    return end


def _named_reference(message: str) -> str | None:
    """The image reference the finding names (``image 'nvcr.io/nvidia/pytorch:24.01-py3' …``): the
    pins file is keyed on whole references, also where the tag is written apart from the name
    (a kustomize ``newTag:``)."""
    named = NAMED_IMAGE.match(message)
    if named is None:
        return None
    try:
        value = ast.literal_eval(named.group(1))
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def pinned_image(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    """SPK101/SPK102: ``reference`` -> ``reference@sha256:…`` from the pins file (unsafe: the digest
    is the team's claim about what the tag means today)."""
    for finding in findings:
        try:
            start = offset(context.text, finding.line, finding.column)
        except ValueError:
            yield refuse(finding, "the finding's position is outside the file")
            continue
        while context.text[start:start + 1] in ("&", "!"):  # a YAML anchor or tag before the value
            while start < len(context.text) and context.text[start] not in " \t\r\n":
                start += 1
            while context.text[start:start + 1] in (" ", "\t"):
                start += 1
        if context.text[start:start + 1] in ("'", '"'):
            start += 1
        end = _token_end(context.text, start)
        token = context.text[start:end]
        if token.startswith("-") and "=" in token:  # --image=REF
            start += token.index("=") + 1
            token = context.text[start:end]
        if not token or "$" in token or "{" in token:
            yield refuse(finding, f"the image at line {finding.line} is computed ({token or 'empty'}): pin its "
                                  f"parts by hand")
            continue
        if "@" in token:
            yield refuse(finding, f"{token} already names a digest")
            continue
        reference = _named_reference(finding.message) or token
        digest = context.pins.images.get(reference) or context.pins.images.get(token)
        if digest is None:
            yield refuse(finding, f"{reference} is not in the pins file (add '{reference}: sha256:…' from your "
                                  f"registry)")
            continue
        yield Fix(finding.rule, (finding.fingerprint,), (Edit(end, end, "@" + digest),),
                  f"line {finding.line}: {reference} pinned to {digest[:19]}…",
                  f"check that {digest[:19]}… is the build you tested, and refresh the pins file when you "
                  f"move to a new one")
