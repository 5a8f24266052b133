"""Shell scripts -> positioned simple commands and pipelines.

The lexer is hand-written rather than ``shlex``: shlex drops positions, splits ``$(a | b)``
at the pipe and knows nothing of here-documents.  This lexer keeps the offset of every word,
keeps ``$(…)``, ``${…}``, backticks and ``$((…))`` inside one word (their bodies are parsed
in turn, to a bounded depth) and skips here-document bodies as data.  The parser flattens
compound commands (``if``/``for``/``while``/``case``/``{ }``/``( )``/functions) into the
ordered list of pipelines, tracking ``set -o pipefail`` and ``set -e`` in source order and the
text of enclosing conditions, so rank-0 guards stay visible.

Nothing here raises for bad input: unterminated quotes, stray keywords and the safety
limits (nesting depth) go to ``Script.errors`` and parsing goes on.  An error is recorded only
where ``bash -n`` would fail too (checked against several hundred real scripts), because the
document dispatcher turns the first one into SPK001; :func:`nothing_parsed` tells a caller
that wants the milder policy whether anything at all could be read.

This package's face is what is imported here; its modules, in the order text flows through them:
``positions`` (offsets -> line/column), ``lexer`` (tokens), ``options`` (``set``/``shopt``),
``calls`` (``bash -c`` in an argv, shebang options), ``cursor``/``compound``/``grammar`` (the
parser), ``parse`` (the entry points), ``nodes`` (what a parsed script is), ``expansion``
(``$NAME`` from the script's assignments), ``templating`` (template text that is not shell yet).
"""

from __future__ import annotations

from spikelint.documents.shell.calls import SHELLS
from spikelint.documents.shell.calls import find_shell_call
from spikelint.documents.shell.calls import find_wrap
from spikelint.documents.shell.expansion import expand
from spikelint.documents.shell.nodes import Pipeline
from spikelint.documents.shell.nodes import Redirect
from spikelint.documents.shell.nodes import Script
from spikelint.documents.shell.nodes import ShellCall
from spikelint.documents.shell.nodes import SimpleCommand
from spikelint.documents.shell.nodes import Word
from spikelint.documents.shell.nodes import nothing_parsed
from spikelint.documents.shell.parse import parse_shell
from spikelint.documents.shell.parse import parse_shell_segments
from spikelint.documents.shell.positions import Locator
from spikelint.documents.shell.templating import fill_in_blanks
from spikelint.documents.shell.templating import is_template

__all__ = ["SHELLS", "Locator", "Pipeline", "Redirect", "Script", "ShellCall", "SimpleCommand", "Word", "expand",
           "fill_in_blanks", "find_shell_call", "find_wrap", "is_template", "nothing_parsed", "parse_shell",
           "parse_shell_segments"]
