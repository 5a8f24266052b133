"""What a container runs: its simple commands in order, with what is in effect at each.

The working directory (``workingDir``, ``cd`` in the script), the variables and the redirects
are tracked; ``sh -c`` scripts and nested ``bash -c`` ones are opened.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import NamedTuple
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.facts.runconfig import UNRESOLVED
from spikelint.facts.expansion import Lookup
from spikelint.facts.expansion import env_lookup
from spikelint.facts.expansion import expand
from spikelint.facts.expansion import script_lookup
from spikelint.facts.embedded_script import parse_script
from spikelint.facts.placement import WORKDIR_UNKNOWN

if TYPE_CHECKING:
    from spikelint.documents.shell import Script
    from spikelint.documents.shell import SimpleCommand
    from spikelint.documents.shell import Word

SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ash", "ksh"))
_ASSIGNMENT = lazy_regex(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Invocation:
    """One simple command as the container runs it, with what was in effect at that point."""

    words: list[Located]
    writes: list[Write] = field(default_factory=list)  # redirect and tee targets
    cwd: str | None = None  # working directory in effect (None: not set anywhere)
    condition: str = ""  # enclosing if-conditions (rank-0 guards)
    lookup: Lookup | None = None  # variable values in effect
    programs: tuple[str, ...] = ()  # every program of its pipeline


class Write(NamedTuple):
    """A file a command writes its output to: ``> f``, ``>> f``, ``tee f``, ``tee -a f``."""

    target: Located
    operator: str
    append: bool


def program_name(words: Sequence[Located]) -> str:
    """``/usr/bin/python3`` -> ``python3``; skips ``exec``, ``env A=1``, ``time``, ``nohup`` prefixes."""
    for word in words:
        text = str(word.value)
        if "=" in text and not text.startswith("-") and _ASSIGNMENT.match(text):
            continue
        base = posixpath.basename(text)
        if base in ("exec", "env", "time", "nohup", "stdbuf", "nice", "ionice", "command", "builtin"):
            continue
        return base
    return ""


def script_argument(words: Sequence[Located]) -> tuple[int, Located] | None:
    """``bash -c 'script'`` / ``sh -lc "…"`` -> (index, script word)."""
    for index, word in enumerate(words):
        base = posixpath.basename(str(word.value))
        if base in ("exec", "env", "time", "nohup") or _ASSIGNMENT.match(str(word.value)):
            continue
        if base not in SHELLS:
            return None
        for position in range(index + 1, len(words)):
            option = str(words[position].value)
            if not option.startswith("-") or option == "--":
                return None
            if option.startswith("--"):
                continue
            if "c" in option[1:]:
                return (position + 1, words[position + 1]) if position + 1 < len(words) else None
        return None
    return None


def _word_located(word: Word) -> Located:
    return Located(word.text, word.line, word.column, word.end_line, word.end_column)


def _command_writes(command: SimpleCommand) -> list[Write]:
    writes = []
    for redirect in command.redirects:
        operator = redirect.operator
        if redirect.target is None or "<" in operator or operator.endswith("&"):
            continue
        target = _word_located(redirect.target)
        writes.append(Write(target, operator, ">>" in operator))
    if command.words and posixpath.basename(command.words[0].text) == "tee":
        append = any(word.text in ("-a", "--append") or (word.text.startswith("-") and "a" in word.text[1:]
                                                         and not word.text.startswith("--"))
                     for word in command.words[1:])
        for word in command.words[1:]:
            if not word.text.startswith("-"):
                writes.append(Write(_word_located(word), "tee -a" if append else "tee", append))
    return writes


def script_invocations(script: Script, cwd: str | None, lookup: Lookup,
                       skip: frozenset[str] = frozenset()) -> list[Invocation]:
    """Every simple command of a script in order, with ``cd`` tracked and nested ``bash -c`` opened.

    Commands whose program is in ``skip`` (``runai``: its command line is a workload) are left out
    together with the scripts they embed.
    """
    found: list[Invocation] = []
    current = cwd
    for pipeline in script.pipelines:
        if pipeline.nested:
            continue  # runs inside $(…) or backticks: part of another command's word
        programs = tuple(program_name([_word_located(w) for w in command.words]) for command in pipeline.commands)
        pipe_writes = [write for command in pipeline.commands for write in _command_writes(command)]
        for position, command in enumerate(pipeline.commands):
            words = _with_arrays([_word_located(word) for word in command.words], script)
            assignments = [_word_located(word) for word in command.assignments]
            if words and words[0].value == "cd":
                current = _change_directory(current, words[1:], lookup)
                continue
            if not words and not command.redirects:
                continue  # NAME=value alone sets a shell variable, read through the lookup
            if skip and program_name(words) in skip:
                continue
            invocation = Invocation(assignments + words, [], current, pipeline.condition, lookup, programs)
            if position == 0:
                invocation.writes = pipe_writes
            found.append(invocation)
            if command.inner is not None:
                found.extend(script_invocations(command.inner, current, script_lookup(command.inner, lookup), skip))
    return found


_ARRAY_USE = lazy_regex(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$")


def _with_arrays(words: list[Located], script: Script) -> list[Located]:
    """``"${ARGS[@]}"`` replaced by the elements of the array assigned before it, each where it is written."""
    if not any("[" in str(word.value) for word in words):
        return words
    expanded: list[Located] = []
    for word in words:
        match = _ARRAY_USE.match(str(word.value))
        assigned = script.assignments.get(match.group(1)) if match else None
        before = [value for value in assigned or () if (value.line, value.column) < (word.line, word.column)]
        if not before or not before[-1].raw.startswith("("):
            expanded.append(word)
            continue
        expanded.extend(array_elements(before[-1].raw, before[-1].line, before[-1].column))
    return expanded


def array_elements(raw: str, line: int, column: int) -> list[Located]:
    """The words of a bash array literal ``( --a 1 \\ # note ⏎ --b "x y" )``, with their positions.

    Inside ``(…)`` a newline separates words like a space, ``\\`` + newline joins lines, and a ``#``
    that starts a word comments out the rest of its line — so flags after a commented line are kept.
    """
    found: list[Located] = []
    text = raw[1:-1] if raw.endswith(")") else raw[1:]
    row, col = line, column + 1
    current: list[str] = []
    start: tuple[int, int] | None = None
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"' and index + 1 < len(text):
                index += 1
                char = text[index]
                current.append(char)
            else:
                current.append(char)
        elif char in "'\"":
            quote = char
            start = start or (row, col)
        elif char == "\\" and index + 1 < len(text):
            index += 1
            if text[index] != "\n":  # an escaped character; ``\\`` + newline only continues the line
                start = start or (row, col)
                current.append(text[index])
                col += 1
        elif char == "#" and start is None:
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
            continue
        elif char.isspace():
            if start is not None:
                found.append(Located("".join(current), start[0], start[1], row, col))
                current, start = [], None
        else:
            start = start or (row, col)
            current.append(char)
        if index < len(text) and text[index] == "\n":
            row, col = row + 1, 1
        else:
            col += 1
        index += 1
    if start is not None:
        found.append(Located("".join(current), start[0], start[1], row, col))
    return found


def _change_directory(current: str | None, arguments: list[Located], lookup: Lookup) -> str | None:
    if not arguments:
        return WORKDIR_UNKNOWN
    target = expand(str(arguments[0].value), arguments[0], lookup).text
    if target.startswith("/") and UNRESOLVED not in target:
        return posixpath.normpath(target)
    if current is not None and not current.startswith(WORKDIR_UNKNOWN) and UNRESOLVED not in target \
            and not target.startswith(("~", "-")):
        return posixpath.normpath(posixpath.join(current, target))
    return WORKDIR_UNKNOWN


def container_invocations(container: Container, document: Document | None) -> list[Invocation]:
    """The commands a container runs: its argv, or the commands of its ``sh -c`` script."""
    argv = [*container.command, *container.args]
    cwd = str(container.working_dir.value) if container.working_dir is not None and \
        str(container.working_dir.value).strip() else None
    outer: Lookup | None = None
    if document is not None and document.kind == FileKind.SHELL and document.parsed is not None \
            and hasattr(document.parsed, "assignments"):
        outer = script_lookup(document.parsed)
    lookup = env_lookup(container, outer)
    if not argv:
        return []
    script = script_argument(argv)
    if script is None:
        return [Invocation(argv, [], cwd, "", lookup, (program_name(argv),))]
    index, holder = script
    lines = document.lines if document is not None else None
    parsed = parse_script(str(holder.value), holder, lines)
    if parsed is None:
        return [Invocation(argv, [], cwd, "", lookup, (program_name(argv),))]
    return script_invocations(parsed, cwd, script_lookup(parsed, lookup))
