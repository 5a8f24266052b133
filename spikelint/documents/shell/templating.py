"""Text with a shell shebang that is a template to be rendered (Jinja/Ansible, ``%(name)s``), not shell yet,
and the fill-in blanks of a documented command (``--model <model name>``), which a shell reads as redirects."""

from __future__ import annotations

import re

from spikelint.documents.shell.nodes import SimpleCommand
from spikelint.util.lazyre import lazy_regex

_JINJA_STATEMENT = lazy_regex(r"\{%-?\s*(?:if|for|set|else|elif|end\w*|macro|include|import|block|raw|extends|call|filter|with)\b")
_PYTHON_FORMAT = lazy_regex(r"%\([A-Za-z_][A-Za-z0-9_]*\)[sdrfi]")
_BARE_EXPRESSION = lazy_regex(r"(?:^|[\s=])\{\{-?\s*[A-Za-z_][\w.]*\s*(?:\|[^}]*)?-?\}\}", re.M)


def is_template(text: str) -> bool:
    """A Jinja/Ansible or ``%(name)s`` template with a shell shebang: text to be rendered, not shell.

    ``{{ … }}`` inside quotes is common in real shell (``docker inspect -f '{{.Id}}'``,
    ``"{{ model }}"``); only Jinja statements, ``%(name)s`` fields and a ``{{ name }}`` written as
    a bare word make a template.
    """
    if not isinstance(text, str):
        return False
    return bool(_JINJA_STATEMENT.search(text) or _PYTHON_FORMAT.search(text) or _BARE_EXPRESSION.search(text))


_BLANK_FIRST = lazy_regex(r"[A-Za-z][\w.-]*")
_BLANK_WORD = lazy_regex(r"[A-Za-z0-9][\w.-]*")
MAX_BLANK_WORDS = 5


def fill_in_blanks(command: SimpleCommand) -> frozenset[int]:
    """Indexes (in ``command.redirects``) of the ``<`` and ``>`` that are the brackets of a fill-in
    blank: ``python run.py --model <model name> --epochs 3`` is, to a shell, input from ``model``
    and output to ``--epochs``; to its reader, a value to write in.

    A blank: ``<`` glued to a word that starts with a letter, at most five plain words, and ``>``
    glued to the last of them, all on one line, with the ``>``'s target (if any) apart from it.
    ``sort <in.txt >out.txt`` and ``cmd <a>b`` stay redirects.
    """
    redirects = command.redirects
    found: set[int] = set()
    for index in range(len(redirects) - 1):
        opening, closing = redirects[index], redirects[index + 1]
        first = opening.target
        if opening.operator != "<" or closing.operator != ">" or first is None or closing.line != opening.line:
            continue
        if first.line != opening.line or first.column != opening.column + 1 or not _BLANK_FIRST.fullmatch(first.raw):
            continue
        inside = [word for word in command.words
                  if word.line == opening.line and first.end_column <= word.column < closing.column]
        end = inside[-1].end_column if inside else first.end_column
        if end != closing.column or len(inside) >= MAX_BLANK_WORDS \
                or not all(_BLANK_WORD.fullmatch(word.raw) for word in inside):
            continue
        target = closing.target
        if target is not None and target.line == closing.line and target.column == closing.column + 1:
            continue  # ``cmd <a>b``: both are redirects
        found.update((index, index + 1))
    return frozenset(found)
