"""The entry points: a script's text (or a Dockerfile instruction's segments) -> :class:`Script`.

Never raises: the options already in effect are merged with the shebang's, and a recursion
overflow becomes one error in ``Script.errors``.
"""

from __future__ import annotations

from typing import Sequence

from spikelint.documents.shell.calls import _shebang_options
from spikelint.documents.shell.grammar import _Parser
from spikelint.documents.shell.nodes import Script
from spikelint.documents.shell.positions import Locator


def parse_shell(text: str, first_line: int = 1, first_column: int = 1, *, indent: int = 0,
                pipefail: bool = False, errexit: bool = False) -> Script:
    """Parse a shell script (or a ``-c`` string) whose first character sits at ``first_line:first_column``.

    ``indent`` is added to the columns of the lines after the first (a YAML block scalar's
    indentation); ``pipefail``/``errexit`` are the options already in effect (``bash -o pipefail -c``,
    a Dockerfile ``SHELL``).  Never raises; problems go to ``Script.errors``.
    """
    if not isinstance(text, str):
        return Script()
    return _parse(text, Locator.for_text(text, first_line, first_column, indent), pipefail, errexit)


def parse_shell_segments(text: str, segments: Sequence[tuple[int, int, int]], *, pipefail: bool = False,
                         errexit: bool = False) -> Script:
    """Parse ``text`` whose runs of characters come from the file places in ``segments``.

    Each segment is ``(offset in text, line, column)`` where a run of characters on one physical
    line starts; the Dockerfile parser uses it for instructions joined across continuation lines.
    """
    if not isinstance(text, str):
        return Script()
    return _parse(text, Locator(segments), pipefail, errexit)


def _parse(text: str, locator: Locator, pipefail: bool, errexit: bool) -> Script:
    script = Script()
    options = _shebang_options(text)
    options["pipefail"] = options["pipefail"] or pipefail
    options["errexit"] = options["errexit"] or errexit
    try:
        parser = _Parser(text, 0, len(text), locator, script, options, 0)
        parser.parse()
    except RecursionError:
        script.errors.append("line 1, column 1: nesting exceeds the parser's safety limit")
        script.error_positions.append((1, 1))
    return script
