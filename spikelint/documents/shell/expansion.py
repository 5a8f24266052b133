"""Shell variable expansion of a word's text: ``$NAME``, ``${NAME}``, ``${NAME:-default}``…

Static: values come from the script's own assignments (or a Dockerfile's ``ARG``/``ENV``);
anything that needs the running shell (``$(…)``, ``$1``, an unknown name) makes the result None.
"""

from __future__ import annotations

import re
from typing import Callable

from spikelint.util.lazyre import lazy_regex
from spikelint.documents.shell.lexer import _scan_nested

_NAME = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*")


def _expand(text: str, lookup: Callable[[str], str | None], use_defaults: bool, depth: int,
            escape: str = "\\") -> str | None:
    """Substitute ``$NAME``, ``${NAME}``, ``${NAME:-word}``…; None when something is unknown."""
    if depth > 10:
        return None
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == escape and i + 1 < n and escape != "\\":
            out.append(text[i + 1])
            i += 2
            continue
        if c == "\\" and escape == "\\" and i + 1 < n and text[i + 1] == "$":
            out.append("$")
            i += 2
            continue
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        following = text[i + 1]
        if following == "{":
            end = _scan_nested(text, i + 2, "}", n)
            if end < 0:
                return None
            value = _expand_braced(text[i + 2:end - 1], lookup, use_defaults, depth, escape)
            if value is None:
                return None
            out.append(value)
            i = end
            continue
        name = _NAME.match(text, i + 1)
        if name is None:
            if following in "(`" or following.isdigit() or following in "@*#?$!-":
                return None
            out.append(c)
            i += 1
            continue
        value = lookup(name.group())
        if value is None:
            return None
        out.append(value)
        i = name.end()
    return "".join(out)


_BRACED = lazy_regex(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?", re.S)


def _expand_braced(inner: str, lookup: Callable[[str], str | None], use_defaults: bool, depth: int,
                   escape: str) -> str | None:
    match = _BRACED.fullmatch(inner)
    if match is None:
        return None
    name, operator, word = match.group(1), match.group(2), match.group(3) or ""
    value = lookup(name)
    if operator is None:
        return value
    empty_counts = operator.startswith(":")
    is_set = value is not None and (value != "" or not empty_counts)
    if operator.endswith(("-", "=")):
        if is_set:
            return value
        return _expand(word, lookup, use_defaults, depth + 1, escape) if use_defaults else None
    if operator.endswith("+"):
        if value is None and not use_defaults:
            return None
        return _expand(word, lookup, use_defaults, depth + 1, escape) if is_set else ""
    return value if is_set else None  # ${NAME:?message}


def expand(word_text: str, assignments: dict[str, str], *, use_defaults: bool = True) -> str | None:
    """Expand ``$VAR``/``${VAR}``/``${VAR:-default}`` from ``assignments``; None when unresolvable.

    Values may refer to other assigned names (expanded in turn, cycles give None).  With
    ``use_defaults=False`` a ``${VAR:-x}`` whose VAR is not assigned is unresolvable too (the
    environment may set it).
    """
    if not isinstance(word_text, str):
        return None
    resolving: set[str] = set()

    def lookup(name: str) -> str | None:
        if name not in assignments or name in resolving:
            return None
        resolving.add(name)
        try:
            return _expand(assignments[name], lookup, use_defaults, len(resolving))
        finally:
            resolving.discard(name)

    return _expand(word_text, lookup, use_defaults, 0)
