"""Which files are unrendered templates (skipped, SPK003) and which only look like one.

A Helm chart's ``templates/`` are Go templates, not YAML, and are never parsed.  Elsewhere a
file holding ``{{`` (or a whole line that Terraform's ``templatefile()`` fills in, ``${…}``) is
parsed first: GitHub Actions ``${{ … }}`` expressions and most Jinja values are valid YAML, so
such a file is checked like any other, and a syntax error is a template's only when template
markup caused it (SPK003); otherwise it is a real error (SPK001).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable

from spikelint.util.lazyre import lazy_regex
from spikelint.model import FileKind

HELM_TEXT_TEMPLATES = lazy_regex(r"(?:\.tpl|^NOTES\.txt)$")
# Go/Jinja markup: ``{{ }}`` that is not a GitHub Actions ``${{ }}`` expression, ``{% %}``, ``{# #}``
TEMPLATE_MARKUP = lazy_regex(r"(?<!\$)\{\{|\{%|\{#")
MARKUP_SPAN = lazy_regex(r"(?<!\$)\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")
# a line that renders to nothing: a block tag, a variable (``{{ $config := .Values.x }}``), a comment
BLOCK_TAG_LINE = lazy_regex(r"^[ \t]*(?:\{\{-?\s*(?:(?:if|else|end|range|with|define|block|template)\b|\$\w*\s*:?=|/\*)"
                            r".*?\}\}|"
                            r"\{%-?.*?-?%\})[ \t]*$")
HELM_UNITTEST_SUITE = lazy_regex(r"^suite:", re.MULTILINE)
# a whole line that a Terraform ``templatefile()`` (or envsubst) fills in: ``${indent(4, yamlencode(x))}``,
# ``%{ if gpu ~}``; not a GitHub Actions ``${{ }}`` expression
FILLED_LINE = lazy_regex(r"^[ \t]*(?:\$\{(?!\{)|%\{).*\}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class UnrenderedTemplate:
    """``Document.parsed`` of a template skipped unrendered; its text is still scanned for secrets."""

    chart_template: bool  # under a Helm chart's templates/ (else: a templated file elsewhere that did not parse)


def is_helm_template(path: str, text: str, kind: str = FileKind.YAML) -> bool:
    """A chart template under ``templates/``: its YAML, ``_helpers.tpl`` and ``NOTES.txt``.

    Other text files in a ``templates/`` folder (a web app's Jinja HTML) are ordinary text:
    they are scanned for secrets, not skipped.
    """
    if "{{" not in text or "templates/" not in path:
        return False
    pure = PurePosixPath(path)
    if "templates" not in pure.parts[:-1]:
        return False
    return kind == FileKind.YAML or bool(HELM_TEXT_TEMPLATES.search(pure.name))


def is_helm_unittest_suite(path: str, text: str) -> bool:
    """A helm-unittest suite (``tests/*_test.yaml`` with a top-level ``suite:``): test input, not a manifest."""
    if not path.endswith(("_test.yaml", "_test.yml")):
        return False
    pure = PurePosixPath(path)
    return (pure.name.endswith(("_test.yaml", "_test.yml")) and "tests" in pure.parts[:-1]
            and HELM_UNITTEST_SUITE.search(text) is not None)


def has_template_markup(text: str) -> bool:
    return TEMPLATE_MARKUP.search(text) is not None or FILLED_LINE.search(text) is not None


def markup_caused(text: str, line: int, parses: Callable[[str], bool]) -> bool:
    """Whether template markup, not a real mistake, made ``text`` unparseable at ``line`` (1-based).

    True when markup sits on the failing line or the one above it (libyaml often reports the
    token after the culprit), or when the text parses once the markup is blanked out.
    """
    if not has_template_markup(text):
        return False
    lines = text.split("\n")
    near = lines[max(line - 2, 0):line]
    if any(TEMPLATE_MARKUP.search(candidate) or FILLED_LINE.match(candidate) for candidate in near):
        return True
    return parses(neutralised(text))


def neutralised(text: str) -> str:
    """``text`` with template markup blanked: block tags become empty lines, inline values a plain word."""
    out = []
    for line in text.split("\n"):
        if BLOCK_TAG_LINE.match(line) or FILLED_LINE.match(line):
            out.append("")
        else:
            out.append(MARKUP_SPAN.sub(lambda match: "x" * len(match.group()), line))
    return "\n".join(out)
