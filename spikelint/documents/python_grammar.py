"""Which newer Python a file is written for, when the interpreter spikelint runs on cannot parse it.

``ast`` parses with the grammar of the running interpreter, so a valid Python 3.12 file (``type``
aliases, ``def f[T]``, nested quotes in f-strings) is a syntax error on 3.11.  Reporting it as an
unparseable file (SPK001, error) would fail a gate on correct code.  libcst's parser reads every
grammar up to the newest, so a file it accepts is newer Python, not broken Python.

libcst's parser is native code that overflows its stack on hostile nesting (where CPython's own
parser stops with a clean error), so it is asked only where the syntax error sits on a construct
a newer Python introduced, and in a child process: a crash there is a ``None``, never a crash of
the run.
"""

from __future__ import annotations

import subprocess
import sys

from spikelint.util.lazyre import lazy_regex

# what a syntax error of this interpreter looks like on a construct a newer Python accepts
NEWER_LINE = lazy_regex(
    r"^\s*(?:type\s+[A-Za-z_]\w*\s*(?:\[|=)|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[|except\*?\s+[^(:]+,)|"
    r"(?:^|[^\w])[tTfF][rR]?['\"]")
NEWER_MESSAGES = ("f-string", "multiple exception types must be parenthesized")
CHILD_SECONDS = 10

# the child: parse with libcst, print the oldest version that has every newer construct it finds
_CHILD = r"""
import sys
import libcst

source = sys.stdin.read()
try:
    module = libcst.parse_module(source)
except Exception:
    sys.exit(3)
found = set()
introduced = {"TypeAlias": (3, 12), "TypeParameters": (3, 12), "TemplatedString": (3, 14)}
empty = libcst.Module(body=[])


class Visitor(libcst.CSTVisitor):
    def on_visit(self, node):
        name = type(node).__name__
        if name in introduced:
            found.add(introduced[name])
        elif name == "ExceptHandler" and type(node.type).__name__ == "Tuple" and not node.type.lpar:
            found.add((3, 14))
        elif name == "FormattedString":
            quote = node.start[-1:]
            for part in node.parts:
                if isinstance(part, libcst.FormattedStringExpression):
                    text = empty.code_for_node(part.expression)
                    if (quote and quote in text) or "\\" in text:
                        found.add((3, 12))
        return True


module.visit(Visitor())
print("%d.%d" % max(found or {(0, 0)}))
"""


def newer_python_needed(source: str, error: SyntaxError) -> str | None:
    """``"3.12"`` when ``source`` is valid for a Python newer than this one (and which), else ``None``."""
    line = error.text or ""
    if not (NEWER_LINE.search(line) or any(text in (error.msg or "") for text in NEWER_MESSAGES)):
        return None
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], input=source, capture_output=True, text=True,
                              timeout=CHILD_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:  # not valid on any grammar libcst knows, libcst missing, or a crash
        return None
    major, _, minor = done.stdout.strip().partition(".")
    found = (int(major), int(minor)) if major.isdigit() and minor.isdigit() else (0, 0)
    running = sys.version_info[:2]
    version = found if found > running else (running[0], running[1] + 1)
    return f"{version[0]}.{version[1]}"
