"""Dockerfiles -> positioned instructions and build stages.

Follows BuildKit's reading rules: parser directives (``# syntax=``, ``# escape=``,
``# check=``) only at the very top; lines ending in the escape character continue, and
comment or blank lines inside a continuation are dropped; keywords are case-insensitive;
``RUN``/``COPY``/``ADD`` may carry here-documents whose bodies follow the instruction.
Shell-form ``RUN``/``CMD``/``ENTRYPOINT`` are parsed with the shell parser, with positions
that point into this file, honouring ``SHELL [...]`` (``-o pipefail``) per stage.

Nothing here raises: unknown instructions and missing arguments go to ``Dockerfile.errors``.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

from spikelint.documents.shell import Pipeline
from spikelint.documents.shell import Script
from spikelint.documents.shell import SimpleCommand
from spikelint.documents.shell import Word
from spikelint.documents.shell.expansion import _expand
from spikelint.documents.shell import find_shell_call
from spikelint.documents.shell import parse_shell
from spikelint.documents.shell import parse_shell_segments
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located

INSTRUCTIONS = frozenset({
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
    "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
})
HEREDOC_INSTRUCTIONS = frozenset({"RUN", "COPY", "ADD"})
SHELL_FORM_INSTRUCTIONS = frozenset({"RUN", "CMD", "ENTRYPOINT"})
EXEC_FORM_INSTRUCTIONS = frozenset({"RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD", "VOLUME", "HEALTHCHECK"})
DIRECTIVES = frozenset({"syntax", "escape", "check"})
POSIX_SHELL = ("/bin/sh", "-c")
WINDOWS_SHELL = ("cmd", "/S", "/C")

_DIRECTIVE = lazy_regex(r"[ \t]*#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S[^\r\n]*?)?[ \t]*\r?$")
_KEYWORD = lazy_regex(r"[A-Za-z]+")
_HEREDOC = lazy_regex(r"(?<![<\w])<<(-?)([\"']?)([^\s\"'<>|&;()]+)\2")
_JSON_STRING = lazy_regex(r'"(?:[^"\\]|\\.)*"')
_FLAG = lazy_regex(r"--([A-Za-z][A-Za-z0-9-]*)(?:=(.*))?$", re.S)


@dataclass
class Instruction:
    """One instruction after joining continuation lines and heredocs."""

    keyword: str  # upper-case: FROM, RUN, ENV, ARG, COPY …
    value: str  # the text after the keyword (continuations joined), flags included
    line: int  # where the keyword is
    column: int
    end_line: int
    flags: dict[str, str] = field(default_factory=dict)  # --from=…, --mount=… (repeated --mount joined by '\n')
    arguments: list[tuple[str, int, int]] = field(default_factory=list)  # (text, line, column) after the flags
    heredocs: list[tuple[str, int]] = field(default_factory=list)  # (body, first line) of << heredocs
    script: Script | None = None  # RUN/CMD/ENTRYPOINT: the parsed command, positions in the file
    stage: int = 0  # index of the build stage it belongs to; -1 for ARGs before the first FROM
    exec_form: bool = False  # JSON array form: ``arguments`` are the array's strings
    # ENV/ARG/LABEL: (name, value) pairs, value None for ``ARG NAME`` without a default
    pairs: list[tuple[Located, Located | None]] = field(default_factory=list)
    flag_locations: dict[str, list[Located]] = field(default_factory=dict)  # flag -> each value, positioned
    # (offset in ``value``, line, column) where each run of ``value`` starts: see :meth:`locate`
    segments: list[tuple[int, int, int]] = field(default_factory=list, repr=False)

    def locate(self, offset: int) -> tuple[int, int]:
        """The file (line, column) of character ``offset`` of ``value``."""
        if not self.segments:
            return self.line, self.column
        return _locate(self.segments, offset)


@dataclass
class Stage:
    index: int
    name: str | None  # FROM … AS name
    base: str  # the image reference as written (ARGs not resolved)
    base_line: int
    base_column: int
    args: dict[str, str | None] = field(default_factory=dict)  # ARGs declared in the stage: default or None
    platform: str | None = None  # FROM --platform=…


@dataclass
class Dockerfile:
    instructions: list[Instruction] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    global_args: dict[str, str | None] = field(default_factory=dict)  # ARGs before the first FROM: default or None
    errors: list[tuple[str, int, int]] = field(default_factory=list)
    directives: dict[str, Located] = field(default_factory=dict)  # syntax / escape / check, lower-case keys
    escape: str = "\\"
    _first_named: dict[str, Stage] = field(default_factory=dict, init=False, repr=False, compare=False)
    _names_indexed: int = field(default=0, init=False, repr=False, compare=False)

    def root_image(self, stage: Stage) -> str:
        """The image a stage builds on at the root: ``FROM base AS builder`` over ``FROM alpine AS base`` is alpine."""
        base, parent, seen = stage.base, self.stage_named(stage.base, before=stage.index), set()
        while parent is not None and parent.index not in seen:
            seen.add(parent.index)
            base = parent.base
            parent = self.stage_named(base, before=parent.index)
        return base

    def stage_named(self, name: str, before: int | None = None) -> Stage | None:
        """The stage called ``name`` (case-insensitive) or with that index, among those before ``before``."""
        limit = len(self.stages) if before is None else min(before, len(self.stages))
        for stage in self.stages[self._names_indexed:]:  # indexed as stages are added: 1,000 ``--from`` stay linear
            if stage.name is not None:
                self._first_named.setdefault(stage.name.lower(), stage)
        self._names_indexed = len(self.stages)
        named = self._first_named.get(name.lower())
        if named is not None and named.index < limit:
            return named
        if name.isdigit() and int(name) < limit:
            return self.stages[int(name)]
        return None


def nothing_parsed(dockerfile: Dockerfile) -> bool:
    """True when the input had errors and not one instruction could be read from it."""
    return bool(dockerfile.errors) and not dockerfile.instructions


class _Logical(NamedTuple):
    """One instruction's lines joined: the text and where each run of it came from."""

    text: str
    segments: list[tuple[int, int, int]]
    first_line: int
    last_line: int  # index of the last physical line used (0-based)


class _Word(NamedTuple):
    text: str  # quotes and escapes removed
    start: int  # offsets in the joined text
    end: int


# --------------------------------------------------------------------------- substitution


def resolve_args(text: str, args: dict[str, str | None], escape: str = "\\") -> str | None:
    """Substitute ``$VAR``/``${VAR}``/``${VAR:-x}``/``${VAR:+x}`` the way BuildKit does.

    ``args`` maps declared names to their default (None: declared without one).  Returns None
    when a variable without a value (or an undeclared one) is needed: the result then depends
    on ``--build-arg``.
    """
    if not isinstance(text, str):
        return None

    def lookup(name: str) -> str | None:
        return args.get(name)

    return _expand(text, lookup, True, 0, escape)


# --------------------------------------------------------------------------- reading lines


def _directives(lines: list[str], dockerfile: Dockerfile) -> int:
    """Read parser directives at the top; returns the index of the first line after them."""
    index = 0
    for index, line in enumerate(lines):
        match = _DIRECTIVE.fullmatch(line)
        if match is None:
            return index
        key = match.group(1).lower()
        if key not in DIRECTIVES or key in dockerfile.directives:
            return index
        value = match.group(2) or ""
        column = match.start(2) + 1 if match.group(2) else len(line) + 1
        dockerfile.directives[key] = Located(value, index + 1, column, index + 1, column + len(value))
        if key == "escape":
            if value in ("\\", "`"):
                dockerfile.escape = value
            else:
                dockerfile.errors.append((f"invalid escape directive {value!r}: use \\ or `", index + 1, column))
    return len(lines)


def _is_comment(line: str) -> bool:
    return line.lstrip(" \t").startswith("#")


def _logical_line(lines: list[str], index: int, continuation: re.Pattern[str]) -> _Logical:
    """Join the instruction starting at ``lines[index]`` with its continuation lines."""
    pieces: list[str] = []
    segments: list[tuple[int, int, int]] = []
    offset = 0
    line = lines[index].rstrip("\r")
    stripped = line.lstrip(" \t")
    column = len(line) - len(stripped) + 1
    current = index
    text = stripped
    while True:
        match = continuation.search(text)
        piece = text[:match.start()] if match else text
        segments.append((offset, current + 1, column))
        pieces.append(piece)
        offset += len(piece)
        if match is None:
            break
        current += 1
        while current < len(lines) and (not lines[current].strip() or _is_comment(lines[current])):
            current += 1  # BuildKit drops blank and comment lines inside a continuation
        if current >= len(lines):
            current = len(lines) - 1
            break
        text = lines[current].rstrip("\r")
        column = 1
    return _Logical("".join(pieces), segments, index + 1, current)


def _shift(segments: list[tuple[int, int, int]], start: int) -> list[tuple[int, int, int]]:
    """Segments for ``text[start:]`` given the segments of ``text``."""
    out: list[tuple[int, int, int]] = []
    for position, (offset, line, column) in enumerate(segments):
        following = segments[position + 1][0] if position + 1 < len(segments) else None
        if following is not None and following <= start:
            continue
        if offset <= start:
            out.append((0, line, column + start - offset))
        else:
            out.append((offset - start, line, column))
    return out or [(0, segments[0][1] if segments else 1, 1)]


def _locate(segments: list[tuple[int, int, int]], offset: int) -> tuple[int, int]:
    """Binary search on the segment starts (no list built per call: an instruction may have 10,000 lines)."""
    index = max(bisect_right(segments, offset, key=_segment_start) - 1, 0)
    start, line, column = segments[index]
    return line, column + offset - start


def _segment_start(segment: tuple[int, int, int]) -> int:
    return segment[0]


def _located(text: str, segments: list[tuple[int, int, int]], start: int, end: int) -> Located:
    line, column = _locate(segments, start)
    end_line, end_column = _locate(segments, end)
    return Located(text, line, column, end_line, end_column)


def _split_words(text: str, escape: str, start: int = 0) -> list[_Word]:
    """Whitespace-separated words of ``text[start:]``, quotes and escapes removed."""
    words: list[_Word] = []
    i = start
    n = len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        begin = i
        pieces: list[str] = []
        while i < n and text[i] not in " \t\r\n":
            c = text[i]
            if c == escape and i + 1 < n:
                pieces.append(text[i + 1])
                i += 2
            elif c in "\"'":
                j = i + 1
                while j < n and text[j] != c:
                    if c == '"' and text[j] == escape and j + 1 < n and text[j + 1] in ('"', escape, "$"):
                        pieces.append(text[j + 1])
                        j += 2
                        continue
                    pieces.append(text[j])
                    j += 1
                i = j + 1
            else:
                pieces.append(c)
                i += 1
        words.append(_Word("".join(pieces), begin, min(i, n)))
    return words


def _flags(value: str, words: list[_Word]) -> tuple[list[_Word], list[tuple[str, str, int, int]]]:
    """Leading ``--name[=value]`` words; returns the remaining words and (name, value, start, end)."""
    flags: list[tuple[str, str, int, int]] = []
    position = 0
    for position, word in enumerate(words):
        match = _FLAG.match(word.text)
        if match is None or word.text == "--":
            break
        raw = value[word.start:word.end]
        equals = raw.find("=")
        value_start = word.start + equals + 1 if equals >= 0 else word.end
        flags.append((match.group(1).lower(), match.group(2) or "", value_start, word.end))
    else:
        position = len(words)
    return words[position:], flags


# --------------------------------------------------------------------------- instructions


class _State:
    """What reading one instruction needs from those before it."""

    def __init__(self, dockerfile: Dockerfile) -> None:
        self.dockerfile = dockerfile
        self.stage = -1
        self.shells: list[tuple[str, ...]] = []  # per stage
        default = WINDOWS_SHELL if dockerfile.escape == "`" else POSIX_SHELL
        self.default_shell = default

    def shell(self) -> tuple[str, ...]:
        return self.shells[self.stage] if 0 <= self.stage < len(self.shells) else self.default_shell


def _exec_arguments(rest: str, start: int, segments: list[tuple[int, int, int]]) -> list[tuple[str, int, int]] | None:
    """The strings of a JSON array (exec form), positioned; None when ``rest`` is not one."""
    stripped = rest.strip()
    if not stripped.startswith("["):
        return None
    try:
        values = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        return None
    literals = list(_JSON_STRING.finditer(rest))
    arguments = []
    for position, value in enumerate(values):
        offset = start + (literals[position].start() if position < len(literals) else 0)
        line, column = _locate(segments, offset)
        arguments.append((value, line, column))
    return arguments


def _heredoc_markers(command: str, escape: str) -> list[re.Match[str]]:
    """``<<EOF`` markers of a RUN/COPY/ADD line that are not inside quotes (``echo "<<EOF"`` is text).

    One left-to-right scan carries the quoting state from marker to marker (rescanning from the
    start for each marker made a line with thousands of heredocs quadratic).
    """
    markers: list[re.Match[str]] = []
    quote = ""
    i = 0
    for match in _HEREDOC.finditer(command):
        quote, i = _quote_state(command, i, match.start(), quote, escape)
        if not quote:
            markers.append(match)
    return markers


def _quote_state(text: str, start: int, position: int, quote: str, escape: str) -> tuple[str, int]:
    """The open quote (or "") at ``position``, scanning on from ``start`` with ``quote`` open there.

    Returns the index where the scan stopped (``position``, or one past it after an escape).
    """
    i = start
    while i < position:
        c = text[i]
        if c == escape and quote != "'":
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        i += 1
    return quote, i


def _heredoc_bodies(lines: list[str], after: int, markers: list[re.Match[str]]) -> tuple[list[tuple[str, int]], int]:
    """Read the bodies of ``markers`` from the lines after index ``after``; returns them and the last line used."""
    bodies: list[tuple[str, int]] = []
    current = after
    for marker in markers:
        strip_tabs = marker.group(1) == "-"
        delimiter = marker.group(3)
        first = current + 1
        body_lines: list[str] = []
        current += 1
        while current < len(lines):
            line = lines[current].rstrip("\r")
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            body_lines.append(line)
            current += 1
        if current >= len(lines):
            current = len(lines) - 1
        bodies.append(("".join(line + "\n" for line in body_lines), first + 1))
    return bodies, current


def _pairs(keyword: str, value: str, words: list[_Word], segments: list[tuple[int, int, int]]) -> list[tuple[Located, Located | None]]:
    """ENV/ARG/LABEL ``NAME=value`` pairs (and legacy ``ENV NAME value``)."""
    pairs: list[tuple[Located, Located | None]] = []
    if not words:
        return pairs
    if keyword == "ENV" and "=" not in words[0].text:
        name = _located(words[0].text, segments, words[0].start, words[0].end)
        rest = words[1:]
        if not rest:
            return [(name, None)]
        text = " ".join(word.text for word in rest)
        return [(name, _located(text, segments, rest[0].start, rest[-1].end))]
    for word in words:
        raw = value[word.start:word.end]
        equals_text = word.text.find("=")
        if equals_text < 0:
            pairs.append((_located(word.text, segments, word.start, word.end), None))
            continue
        equals_raw = raw.find("=")
        name = _located(word.text[:equals_text], segments, word.start, word.start + max(equals_raw, 0))
        value_start = word.start + equals_raw + 1
        pairs.append((name, _located(word.text[equals_text + 1:], segments, value_start, word.end)))
    return pairs


def _shell_script(instruction: Instruction, command: str, command_start: int, shell: tuple[str, ...],
                  lines: list[str], heredoc_range: tuple[int, int] | None) -> Script | None:
    """The shell-form command parsed as the stage's shell would run it (None for non-POSIX shells)."""
    call = find_shell_call(shell)
    if call is None or call.shell_index != 0:
        return None
    segments = _shift(instruction.segments, command_start)
    if instruction.heredocs and heredoc_range is not None:
        if not _HEREDOC.sub("", command).strip():  # `RUN <<EOF`: the body is the script
            script = Script()
            for body, first_line in instruction.heredocs:
                if body.startswith("#!") and find_shell_call(body[2:].split("\n", 1)[0].split()) is None:
                    continue  # a python (or other) script, not shell
                part = parse_shell(body, first_line, 1, pipefail=call.pipefail, errexit=call.errexit)
                script.pipelines.extend(part.pipelines)
                for name, values in part.assignments.items():
                    script.assignments.setdefault(name, []).extend(values)
                script.errors.extend(part.errors)
                script.error_positions.extend(part.error_positions)
            return script
        first, last = heredoc_range  # `RUN python3 <<EOF`: the shell sees the heredoc
        text = command + "\n"
        segments = segments + [(len(command), segments[-1][1], segments[-1][2] + len(command) - segments[-1][0])]
        for index in range(first, last + 1):
            segments.append((len(text), index + 1, 1))
            text += lines[index].rstrip("\r") + "\n"
        return parse_shell_segments(text, segments, pipefail=call.pipefail, errexit=call.errexit)
    return parse_shell_segments(command, segments, pipefail=call.pipefail, errexit=call.errexit)


def _exec_script(arguments: list[tuple[str, int, int]]) -> Script:
    """An exec-form command as a one-command script; a ``["bash", "-c", "…"]`` string is parsed too."""
    words = [Word(text, json.dumps(text), line, column, line, column + len(json.dumps(text)))
             for text, line, column in arguments]
    command = SimpleCommand(words, line=words[0].line, column=words[0].column,
                            end_line=words[-1].end_line, end_column=words[-1].end_column)
    call = find_shell_call([word.text for word in words])
    if call is not None and call.script_index is not None:
        word = words[call.script_index]
        command.inner = parse_shell(word.text, word.line, word.column + 1, pipefail=call.pipefail,
                                    errexit=call.errexit)
    pipeline = Pipeline([command], command.line, command.column, False, False, end_line=command.end_line,
                        end_column=command.end_column, last=True)
    return Script([pipeline])


def _instruction_word(text: str) -> str:
    """What an error quotes of an unknown instruction: its word up to ``=`` or ``:`` (``ENV_GITHUB_TOKEN=ghp_…``
    is quoted as ``ENV_GITHUB_TOKEN``: the value after it may be a secret, and a cut one is not masked whole)."""
    word = text.split(None, 1)[0] if text.split() else text
    return re.split(r"[=:]", word, maxsplit=1)[0][:40]


def _instruction(lines: list[str], index: int, state: _State, continuation: re.Pattern[str]) -> int:
    """Read the instruction at ``lines[index]`` into the Dockerfile; returns the next line index."""
    dockerfile = state.dockerfile
    logical = _logical_line(lines, index, continuation)
    text = logical.text
    keyword_match = _KEYWORD.match(text)
    line, column = logical.segments[0][1], logical.segments[0][2]
    if keyword_match is None or keyword_match.group().upper() not in INSTRUCTIONS:
        dockerfile.errors.append((f"unknown instruction: {_instruction_word(text)}", line, column))
        return logical.last_line + 1
    keyword = keyword_match.group().upper()
    after_keyword = keyword_match.end()
    if after_keyword < len(text) and text[after_keyword] not in " \t":
        dockerfile.errors.append((f"unknown instruction: {_instruction_word(text)}", line, column))
        return logical.last_line + 1
    value_start = after_keyword
    while value_start < len(text) and text[value_start] in " \t":
        value_start += 1
    value = text[value_start:]
    segments = _shift(logical.segments, value_start)
    if not value.strip():
        dockerfile.errors.append((f"{keyword} requires at least one argument", line, column))
        return logical.last_line + 1
    instruction = Instruction(keyword, value, line, column, logical.last_line + 1, segments=segments)
    words = _split_words(value, dockerfile.escape)
    rest_words, flags = _flags(value, words)
    for name, flag_value, start, end in flags:
        previous = instruction.flags.get(name)
        instruction.flags[name] = flag_value if previous is None else f"{previous}\n{flag_value}"
        instruction.flag_locations.setdefault(name, []).append(_located(flag_value, segments, start, end))
    command_start = rest_words[0].start if rest_words else len(value)
    command = value[command_start:]
    last_line = logical.last_line
    heredoc_range: tuple[int, int] | None = None
    if keyword in HEREDOC_INSTRUCTIONS:
        markers = _heredoc_markers(command, dockerfile.escape)
        if markers:
            instruction.heredocs, last_line = _heredoc_bodies(lines, logical.last_line, markers)
            heredoc_range = (logical.last_line + 1, last_line)
            instruction.end_line = last_line + 1
    exec_arguments = _exec_arguments(command, command_start, segments) if keyword in EXEC_FORM_INSTRUCTIONS else None
    if exec_arguments is not None:
        instruction.exec_form = True
        instruction.arguments = exec_arguments
    else:
        instruction.arguments = [(word.text, *_locate(segments, word.start)) for word in rest_words]
    instruction.stage = state.stage
    _apply(instruction, state, rest_words, command, command_start, lines, heredoc_range)
    dockerfile.instructions.append(instruction)
    return last_line + 1


def _apply(instruction: Instruction, state: _State, words: list[_Word], command: str, command_start: int,
           lines: list[str], heredoc_range: tuple[int, int] | None) -> None:
    """What an instruction means for the build: stages, ARGs, ENV pairs, SHELL, parsed commands."""
    dockerfile = state.dockerfile
    keyword = instruction.keyword
    segments = instruction.segments
    if keyword == "FROM":
        _from(instruction, state, words)
    elif keyword in ("ARG", "ENV", "LABEL"):
        instruction.pairs = _pairs(keyword, instruction.value, words, segments)
        if keyword == "ARG":
            for name, default in instruction.pairs:
                if state.stage < 0:
                    dockerfile.global_args[name.value] = default.value if default is not None else None
                else:
                    inherited = dockerfile.global_args.get(name.value)
                    dockerfile.stages[state.stage].args[name.value] = (
                        default.value if default is not None else inherited)
    elif keyword == "SHELL":
        if instruction.exec_form and instruction.arguments and state.stage >= 0:
            state.shells[state.stage] = tuple(argument[0] for argument in instruction.arguments)
        elif not instruction.exec_form:
            dockerfile.errors.append(("SHELL requires the JSON array form", instruction.line, instruction.column))
    if keyword in SHELL_FORM_INSTRUCTIONS:
        if instruction.exec_form:
            if instruction.arguments:
                instruction.script = _exec_script(instruction.arguments)
        else:
            instruction.script = _shell_script(instruction, command, command_start, state.shell(), lines,
                                               heredoc_range)


def _from(instruction: Instruction, state: _State, words: list[_Word]) -> None:
    dockerfile = state.dockerfile
    segments = instruction.segments
    comment = next((position for position, word in enumerate(words) if position and word.text.startswith("#")), None)
    if comment is not None:
        words = words[:comment]  # BuildKit would reject `FROM a AS b # note`; read it as a trailing comment
    if len(words) not in (1, 3) or (len(words) == 3 and words[1].text.lower() != "as"):
        dockerfile.errors.append(("FROM requires either one or three arguments (image [AS name])",
                                  instruction.line, instruction.column))
    if not words:
        return
    base_line, base_column = _locate(segments, words[0].start)
    name = words[2].text if len(words) >= 3 and words[1].text.lower() == "as" else None
    index = len(dockerfile.stages)
    stage = Stage(index, name, words[0].text, base_line, base_column, platform=instruction.flags.get("platform"))
    parent = dockerfile.stage_named(words[0].text)
    dockerfile.stages.append(stage)
    state.stage = index
    instruction.stage = index
    state.shells.append(state.shells[parent.index] if parent is not None else state.default_shell)


def parse_dockerfile(text: str) -> Dockerfile:
    """Parse a Dockerfile; never raises (problems go to ``Dockerfile.errors``)."""
    dockerfile = Dockerfile()
    if not isinstance(text, str):
        return dockerfile
    lines = text.split("\n")
    index = _directives(lines, dockerfile)
    continuation = re.compile(re.escape(dockerfile.escape) + r"[ \t]*$")
    state = _State(dockerfile)
    while index < len(lines):
        line = lines[index]
        if not line.strip() or _is_comment(line):
            index += 1
            continue
        index = max(_instruction(lines, index, state, continuation), index + 1)
    return dockerfile
