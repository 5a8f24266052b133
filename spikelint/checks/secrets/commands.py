"""SPK203's reading of command lines: argv words, ``bash -c`` strings, scripts, ``command``/``args`` keys.

Workload trees, launch scripts, Dockerfile ``RUN`` lines and notebook shell cells all hold
command lines; they share these walkers so a credential flag reads the same everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Iterable
from typing import Iterator

from spikelint.model import Node
from spikelint.model import walk
from spikelint.secrets.cmdline import ArgWord
from spikelint.secrets.cmdline import command_secrets
from spikelint.secrets.cmdline import shell_script_word
from spikelint.secrets.cmdline import split_commands
from spikelint.secrets.detectors import Secret
from spikelint.secrets.text import find_in_text
from spikelint.checks.secrets.found import Found
from spikelint.checks.secrets.found import found_at

if TYPE_CHECKING:
    from spikelint.documents.shell import Script

COMMAND_KEYS = frozenset(("command", "args", "arguments", "cmd", "entrypoint", "script", "run", "before_script",
                          "after_script", "commands"))
PROGRAM_KEYS = frozenset(("command", "cmd", "entrypoint"))
MAX_SHELL_DEPTH = 3


# --------------------------------------------------------------------------- command lines


def _node_words(node: Node | None) -> list[ArgWord]:
    """argv words of a ``command``/``args`` value: a list is one word per item, a string is shell-split."""
    if node is None:
        return []
    if node.kind == "map" and len(node.value) == 1:
        node = next(iter(node.value.values()))  # Run:ai CRD ``{value: …}``
    if node.kind == "seq":
        return [ArgWord(str(item.value), item.line, item.column, item.end_line)
                for item in node.value if item.kind == "scalar" and item.value is not None]
    if node.kind == "scalar" and isinstance(node.value, str):
        return _string_words(node.value, node.line, node.column, node.end_line)
    return []


def _string_words(text: str, line: int, column: int, end_line: int) -> list[ArgWord]:
    from spikelint.adapters.common import split_words

    return [ArgWord(span.text, line, column, end_line) for span in split_words(text) if span.text]


INLINE_SCRIPT = "inside a shell -c script on the command line"


def inline_script_secrets(argv: list[ArgWord]) -> Iterator[tuple[ArgWord, Secret, str]]:
    """Everything in a ``bash -c '…'`` string is on the command line, ``export X=…`` included."""
    script = shell_script_word(argv)
    if script is not None:
        for secret in find_in_text(script.text):
            yield script, secret, INLINE_SCRIPT


def argv_secrets(argv: list[ArgWord], depth: int = 0) -> Iterator[tuple[ArgWord, Secret, str]]:
    """SPK203 candidates in an argv, following ``bash -c`` scripts."""
    for command in split_commands(argv):
        for found in command_secrets(command):
            yield found.word, found.secret, found.how
        yield from inline_script_secrets(command)
        script = shell_script_word(command)
        if script is not None and depth < MAX_SHELL_DEPTH:
            yield from script_secrets(script.text, script.line, script.end_line, depth + 1)


def script_secrets(text: str, first: int, last: int, depth: int = 0) -> Iterator[tuple[ArgWord, Secret, str]]:
    """SPK203 candidates in a shell script held in a string (positions: the lines it spans)."""
    from spikelint.documents.shell import parse_shell

    script = parse_shell(text, first)
    for nested in script.scripts():
        for command in nested.commands():
            argv = [ArgWord(word.text, first, word.column, last, word.raw) for word in command.words]
            for found in command_secrets(argv):
                yield found.word, found.secret, found.how
            yield from inline_script_secrets(argv)


def shell_document_secrets(script: Script) -> Iterator[tuple[ArgWord, Secret, str]]:
    """SPK203 candidates of a parsed launch script (its ``bash -c`` strings and heredocs included)."""
    for nested in script.scripts():
        for command in nested.commands():
            argv = [ArgWord(word.text, word.line, word.column, word.end_line, word.raw) for word in command.words]
            for found in command_secrets(argv):
                yield found.word, found.secret, found.how
            yield from inline_script_secrets(argv)


def command_found(lines: list[str], items: Iterable[tuple[ArgWord, Secret, str]]) -> Iterator[Found]:
    for word, secret, how in items:
        yield found_at("SPK203", lines, secret, word.line, word.end_line, (word.line, word.column), how)


def tree_commands(root: Node, lines: list[str]) -> Iterator[Found]:
    """SPK203 candidates in ``command``/``args`` (Kubernetes, Run:ai CRD/REST), CI ``script``/``run``."""
    for _, node in walk(root):
        if node.kind != "map" or not COMMAND_KEYS.intersection(node.value):
            continue
        program = next((node.value[key] for key in PROGRAM_KEYS if key in node.value), None)
        words = _node_words(program) if program is not None else [ArgWord("", node.line, node.column, node.line)]
        for key in ("args", "arguments"):
            words.extend(_node_words(node.value.get(key)))
        yield from command_found(lines, argv_secrets(words))
        for key in ("script", "run", "before_script", "after_script", "commands"):
            for word in _node_words_as_scripts(node.value.get(key)):
                yield from command_found(lines, script_secrets(word.text, word.line, word.end_line))


def _node_words_as_scripts(node: Node | None) -> list[ArgWord]:
    """CI ``script:``/``run:`` entries are whole shell lines, not argv words."""
    if node is None:
        return []
    items = node.value if node.kind == "seq" else [node]
    return [ArgWord(item.value, item.line, item.column, item.end_line) for item in items
            if item.kind == "scalar" and isinstance(item.value, str)]

