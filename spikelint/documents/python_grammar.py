"""Which newer Python a file is written for, when the interpreter spikelint runs on cannot parse it.

``ast`` parses with the grammar of the running interpreter, so a valid Python 3.12 file (``type``
aliases, ``def f[T]``, nested quotes in f-strings) is a syntax error on 3.11.  Reporting it as an
unparseable file (SPK001, error) would fail a gate on correct code; libcst's parser reads every
grammar up to the newest, so a file it accepts is newer Python, not broken Python.  The version
named is the oldest that has every newer construct found in the file.
"""

from __future__ import annotations

import sys

# the newer constructs libcst recognises, with the CPython version that introduced each
_INTRODUCED = {"TypeAlias": (3, 12), "TypeParameters": (3, 12), "TemplatedString": (3, 14)}


def newer_python_needed(source: str) -> str | None:
    """``"3.12"`` when ``source`` is valid for a Python newer than this one (and which), else ``None``."""
    try:
        import libcst
    except ImportError:  # an installation without it reports the syntax error as before
        return None
    try:
        module = libcst.parse_module(source)
    except Exception:  # noqa: BLE001 - libcst raises its own ParserSyntaxError and, on odd input, others
        return None
    needed = _features(module, source)
    version = max(needed, default=(sys.version_info.major, sys.version_info.minor + 1))
    if version <= sys.version_info[:2]:
        version = (sys.version_info.major, sys.version_info.minor + 1)
    return f"{version[0]}.{version[1]}"


def _features(module: object, source: str) -> set[tuple[int, int]]:
    """The versions the constructs found in ``module`` need (nested f-string quotes: 3.12)."""
    import libcst

    found: set[tuple[int, int]] = set()

    class Visitor(libcst.CSTVisitor):
        def on_visit(self, node: libcst.CSTNode) -> bool:
            name = type(node).__name__
            if name in _INTRODUCED:
                found.add(_INTRODUCED[name])
            elif name == "ExceptHandler" and _bare_tuple(node):
                found.add((3, 14))  # ``except A, B:`` without parentheses (PEP 758)
            elif name == "FormattedString" and _reuses_quote(node):
                found.add((3, 12))  # ``f"{x + "y"}"`` (PEP 701)
            return True

    module.visit(Visitor())  # type: ignore[attr-defined]
    return found


def _bare_tuple(node: object) -> bool:
    kind = getattr(node, "type", None)
    return type(kind).__name__ == "Tuple" and not getattr(kind, "lpar", ())


def _reuses_quote(node: object) -> bool:
    import libcst

    quote = getattr(node, "start", "")[-1:]
    for part in getattr(node, "parts", ()):
        if isinstance(part, libcst.FormattedStringExpression):
            text = libcst.Module(body=[]).code_for_node(part.expression)
            if quote and quote in text:
                return True
    return False
