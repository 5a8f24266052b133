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
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from dataclasses import field
from typing import Callable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.util.lazyre import lazy_regex

MAX_DEPTH = 12  # nested $(…) / bash -c / heredoc scripts that are parsed in turn
MAX_NESTING = 100  # compound commands and substitutions nested in one another
MAX_SCAN_STACK = 400  # open quotes/substitutions while scanning one word
CONDITION_LIMIT = 300  # characters of one and-or element kept in the condition text of the next
CHAIN_HEAD = 3  # first elements of an and-or chain kept in the condition text of later ones

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "yash"})
RESERVED_TERMINATORS = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})
ASSIGNMENT_BUILTINS = frozenset({"export", "declare", "typeset", "local", "readonly"})
CASE_ENDS = frozenset({";;", ";&", ";;&"})

_PLAIN = lazy_regex(r"[^ \t\n\r\f\v|&;()<>'\"\\$`]+")
_DQ_PLAIN = lazy_regex(r"[^\"\\$`]+")
_NESTED_PLAIN = lazy_regex(r"[^\\`\"'$(){}#]+")
_CASE_WORD = lazy_regex(r"case|esac")
_MASTER = lazy_regex(r"""
     (?P<blank>(?:[ \t\r\f\v]|\\\r?\n)+)
    |(?P<newline>\n)
    |(?P<comment>\#[^\n]*)
    |(?P<procsub>[<>]\()
    |(?P<redirect>\d{0,4}(?:<<<|<<-|<<|>>|<&|>&|<>|>\||<|>)|&>>|&>)
    |(?P<arith>\(\()
    |(?P<operator>;;&|;;|;&|&&|\|\||\|&|\||&|;|\(|\))
    |(?P<plain>[^ \t\n\r\f\v|&;()<>'"\\$`\#][^ \t\n\r\f\v|&;()<>'"\\$`]*(?=[ \t\n\r\f\v|&;<>)]|\Z))
""", re.X)
_ASSIGNMENT = lazy_regex(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_ARRAY_START = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_NAME = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*")
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                 "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Word:
    """One shell word: ``text`` with quotes removed (variables NOT expanded), ``raw`` as written.

    ``end_line``/``end_column`` point just after the last character (exclusive).
    """

    text: str
    raw: str
    line: int
    column: int
    end_line: int
    end_column: int
    quoted: bool = False


@dataclass(frozen=True)
class Redirect:
    operator: str  # ">", ">>", "2>", "&>", "2>&1", "<", "<<", "<<<" … (fd number included)
    target: Word | None  # None for fd duplications such as 2>&1; the delimiter for << here-documents
    body: str | None = None  # here-document body (<< and <<- only)
    line: int = 0  # where the operator is
    column: int = 0


@dataclass
class SimpleCommand:
    """``A=1 B=2 prog arg … > file``: assignments, words (argv), redirects.

    A compound command (``( … )``, ``{ …; }``, ``for``/``while``/``until``/``if``/``case``)
    that is piped or redirected appears here as a stand-in: ``compound`` holds its keyword,
    ``words`` just that keyword, ``redirects`` the redirects written after it, and ``body``
    the pipelines inside it (which are also in the script's flat list: don't walk ``body``
    when you walk the whole script).
    """

    words: list[Word]
    assignments: list[Word] = field(default_factory=list)  # "NAME=value" words before argv
    redirects: list[Redirect] = field(default_factory=list)
    line: int = 1
    column: int = 1
    # the text of an embedded script (``bash -c '…'`` / ``sh -c`` / ``bash <<EOF``), parsed, with positions in this file
    inner: Script | None = None
    # the job script a here-document writes (``cat > job.sbatch <<EOF … EOF``), parsed as its own script
    written: Script | None = None
    compound: str = ""
    body: list[Pipeline] = field(default_factory=list)
    end_line: int = 0
    end_column: int = 0

    @property
    def name(self) -> str:
        return self.words[0].text if self.words else ""

    def argv(self) -> list[str]:
        return [word.text for word in self.words]


@dataclass
class Pipeline:
    """Commands joined by ``|`` (one command when there is no pipe)."""

    commands: list[SimpleCommand]
    line: int
    column: int
    pipefail: bool  # ``set -o pipefail`` in effect at this point of the script
    errexit: bool = False
    negated: bool = False
    condition: str = ""  # text of enclosing if-conditions, e.g. '[ "$RANK" = 0 ]' (rank-0 guards)
    nested: str = ""  # "$(", "`", "<(" or ">(" when the pipeline runs inside that substitution
    end_line: int = 0
    end_column: int = 0
    # what is done with its exit status (SPK501 asks whether a lost failure matters):
    tested: bool = False  # it runs in an if/while/until condition (set -e ignores it; the test consumes it)
    next_op: str = ""  # "&&" or "||" when it is followed by that operator in its and-or list
    rescued: bool = False  # a `||` follows it in its and-or list: its failure is handled there
    background: bool = False  # its and-or list ends with `&`: nobody waits for its status here
    last: bool = False  # its status can be the exit status of the whole script (or -c string)


@dataclass
class Script:
    """A whole script in order; compound commands (if/for/while/functions/subshells) are flattened.

    Pipelines inside command substitutions (``$(…)``, backticks, ``<(…)``) are in the flat
    list too, marked by ``Pipeline.nested``; ``bash -c`` strings are in ``SimpleCommand.inner``.
    """

    pipelines: list[Pipeline] = field(default_factory=list)
    # every simple assignment seen (NAME -> value words in order of appearance, incl. `export NAME=…`)
    assignments: dict[str, list[Word]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # unparseable fragments, "line L, column C: why"
    # function name -> the pipelines of its body (also in the flat list), for following calls
    functions: dict[str, list[Pipeline]] = field(default_factory=dict)
    error_positions: list[tuple[int, int]] = field(default_factory=list)  # (line, column) of each error

    def commands(self) -> list[SimpleCommand]:
        return [command for pipeline in self.pipelines for command in pipeline.commands]

    def scripts(self) -> Iterator[Script]:
        """This script and every script embedded in it (``bash -c`` strings, shell heredocs), depth first."""
        stack: list[Script] = [self]
        while stack:
            script = stack.pop()
            yield script
            stack.extend(reversed([command.inner for command in script.commands() if command.inner is not None]))

    def job_scripts(self) -> Iterator[Script]:
        """The job scripts this script and its embedded scripts write with here-documents
        (``cat > job.sbatch <<EOF … EOF``), each parsed as a script of its own, depth first."""
        for script in self.scripts():
            for command in script.commands():
                if command.written is not None:
                    yield command.written
                    yield from command.written.job_scripts()

    def variables(self) -> dict[str, str]:
        """The last value assigned to each name (for :func:`expand`)."""
        return {name: words[-1].text for name, words in self.assignments.items() if words}


class ShellCall(NamedTuple):
    """``bash [options] -c SCRIPT …`` found in an argv: where the shell and its script are."""

    shell_index: int
    script_index: int | None  # the -c string; None when the shell reads a file or stdin
    pipefail: bool
    errexit: bool


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


def nothing_parsed(script: Script) -> bool:
    """True when the input had errors and not one command or assignment could be read from it."""
    return bool(script.errors) and not script.pipelines and not script.assignments


# --------------------------------------------------------------------------- positions


class Locator:
    """Maps offsets in the text being lexed to 1-based (line, column) in the file.

    ``segments`` are (offset, line, column) at the start of each run of characters that sits
    on one physical line; a sub-range of the same text shares them through ``base``.
    """

    __slots__ = ("starts", "lines", "columns", "base")

    def __init__(self, segments: Sequence[tuple[int, int, int]], base: int = 0) -> None:
        self.starts = [segment[0] for segment in segments] or [0]
        self.lines = [segment[1] for segment in segments] or [1]
        self.columns = [segment[2] for segment in segments] or [1]
        self.base = base

    @classmethod
    def for_text(cls, text: str, first_line: int = 1, first_column: int = 1, indent: int = 0) -> Locator:
        segments = [(0, first_line, first_column)]
        line = first_line
        for match in _NEWLINES.finditer(text):
            line += 1
            segments.append((match.end(), line, indent + 1))
        return cls(segments)

    def segments(self) -> list[tuple[int, int, int]]:
        return list(zip(self.starts, self.lines, self.columns))

    def locate(self, offset: int) -> tuple[int, int]:
        absolute = offset + self.base
        index = bisect_right(self.starts, absolute) - 1
        if index < 0:
            index = 0
        return self.lines[index], self.columns[index] + absolute - self.starts[index]

    def span(self, start: int, end: int) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of ``[start, end)``, one search when it sits on one run."""
        absolute = start + self.base
        starts = self.starts
        index = bisect_right(starts, absolute) - 1
        if index < 0:
            index = 0
        line, column = self.lines[index], self.columns[index] + absolute - starts[index]
        if index + 1 >= len(starts) or end + self.base < starts[index + 1]:
            return line, column, line, column + end - start
        end_line, end_column = self.locate(end)
        return line, column, end_line, end_column


_NEWLINES = lazy_regex(r"\n")
_JOB_SCRIPT_NAME = lazy_regex(r"\.(?:sh|bash|sbatch|slurm|job|pbs|lsf|qsub)$")
# a shell shebang, or a batch scheduler's directives (Slurm, PBS, LSF, Grid Engine, Flux)
_JOB_SCRIPT_START = lazy_regex(r"\s*(?:#!\s*\S*(?:/|env\s+(?:-S\s*)?)(?:ba|z|k|da|)sh\b|#SBATCH|#PBS|#BSUB|#\$ |#flux:)")


# --------------------------------------------------------------------------- lexer


class _Token(NamedTuple):
    kind: str  # "w" word, "o" operator (incl. "\n"), "r" redirect
    start: int
    end: int
    text: str  # word: quotes removed; operator/redirect: the operator (fd included)
    quoted: bool = False
    subs: tuple[tuple[str, int, int], ...] = ()  # (kind, start, end) of $(…)/`…`/<(…) bodies
    bare: bool = False  # a word written without quotes or escapes (so it can be a reserved word)


def _scan_nested(s: str, i: int, closer: str, n: int) -> int:
    """Index just after the ``closer`` that balances an opener ending at ``i``; -1 when unterminated."""
    stack = [closer]
    while i < n:
        plain = _NESTED_PLAIN.match(s, i, n)
        if plain:
            if stack[-1] in (")", "esac"):
                _case_words(s, plain.start(), plain.end(), stack)
            i = plain.end()
            if i >= n:
                break
        top = stack[-1]
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if top == "`":
            if c == "`":
                stack.pop()
            i += 1
        elif top == '"':
            if c == '"':
                stack.pop()
                i += 1
            elif c == "$" and i + 1 < n and s[i + 1] in "({":
                stack.append(")" if s[i + 1] == "(" else "}")
                i += 2
            elif c == "`":
                stack.append("`")
                i += 1
            else:
                i += 1
        elif c == top:
            stack.pop()
            i += 1
        elif c == "'" and '"' not in stack:
            end = s.find("'", i + 1, n)
            if end < 0:
                return -1
            i = end + 1
        elif c == '"' or c == "`":
            stack.append(c)
            i += 1
        elif c == "$" and i + 1 < n and s[i + 1] in "({":
            stack.append(")" if s[i + 1] == "(" else "}")
            i += 2
        elif c == "(" and top == ")":
            stack.append(")")
            i += 1
        elif c == "#" and top in (")", "esac") and (i == 0 or s[i - 1] in " \t\n;|&("):
            end = s.find("\n", i, n)
            i = n if end < 0 else end
        else:
            i += 1
        if not stack:
            return i
        if len(stack) > MAX_SCAN_STACK:
            return -1
    return -1


def _case_words(s: str, start: int, end: int, stack: list[str]) -> None:
    """``case … esac`` inside ``$(…)``: its patterns' ``)`` must not close the substitution."""
    for match in _CASE_WORD.finditer(s, start, end):
        before = s[match.start() - 1] if match.start() > 0 else " "
        after = s[match.end()] if match.end() < len(s) else " "
        if before not in " \t\n;|&(" or after not in " \t\n;|&)":
            continue
        if match.group() == "case":
            stack.append("esac")
        elif stack[-1] == "esac":
            stack.pop()


def _ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ANSI_ESCAPES.get(body[i + 1], "\\" + body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _Lexer:
    """Turns one text (or a range of it) into tokens; records errors, never raises."""

    def __init__(self, s: str, lo: int, hi: int, error: Callable[[int, str], None]) -> None:
        self.s = s
        self.lo = lo
        self.hi = hi
        self.error = error
        self.tokens: list[_Token] = []
        self.heredocs: dict[int, tuple[int, int]] = {}  # index of the << token -> body (start, end)
        self.pending: list[tuple[int, str, bool]] = []  # (token index, delimiter, strip tabs)
        self.unbalanced = False  # a `((` never closed: later ones cannot close either (keeps lexing linear)

    def run(self) -> list[_Token]:
        s, hi = self.s, self.hi
        tokens = self.tokens
        i = self.lo
        want_delimiter: tuple[int, bool] | None = None
        while i < hi:
            match = _MASTER.match(s, i, hi)
            kind = match.lastgroup if match else None
            if kind == "blank" or kind == "comment":
                i = match.end()  # type: ignore[union-attr]
                continue
            if kind == "newline":
                tokens.append(_Token("o", i, i + 1, "\n"))
                want_delimiter = None
                i = self._read_heredocs(i + 1) if self.pending else i + 1
                continue
            if kind == "plain":
                end = match.end()  # type: ignore[union-attr]
                text = s[i:end]
                tokens.append(_Token("w", i, end, text, False, (), True))
                i = end
            elif kind == "procsub":
                end = _scan_nested(s, i + 2, ")", hi)
                if end < 0:
                    self.error(i, "unterminated process substitution")
                    end = hi
                tokens.append(_Token("w", i, end, s[i:end], False, ((s[i] + "(", i + 2, max(end - 1, i + 2)),)))
                i = end
                continue
            elif kind == "redirect":
                text = match.group()  # type: ignore[union-attr]
                tokens.append(_Token("r", i, match.end(), text))  # type: ignore[union-attr]
                operator = text.lstrip("0123456789")
                if operator == "<<" or operator == "<<-":
                    want_delimiter = (len(tokens) - 1, operator == "<<-")
                i = match.end()  # type: ignore[union-attr]
                continue
            elif kind == "arith" and self._arithmetic(i):
                i = tokens[-1].end
            elif kind == "operator" or kind == "arith":
                end = i + 1 if kind == "arith" else match.end()  # type: ignore[union-attr]
                tokens.append(_Token("o", i, end, s[i:end]))
                i = end
                continue
            else:
                token = self._word(i)
                tokens.append(token)
                i = max(token.end, i + 1)
            if want_delimiter is not None:
                self.pending.append((want_delimiter[0], tokens[-1].text, want_delimiter[1]))
                want_delimiter = None
        return tokens

    def _arithmetic(self, i: int) -> bool:
        """``(( expr ))`` as one word; False when the parentheses are nested subshells instead."""
        if self.unbalanced:
            return False
        end = _scan_nested(self.s, i + 1, ")", self.hi)
        if end < 0:
            self.unbalanced = True
            return False
        if end >= i + 4 and self.s[end - 2:end] == "))":
            self.tokens.append(_Token("w", i, end, self.s[i:end], False, (), True))
            return True
        return False

    def _read_heredocs(self, i: int) -> int:
        """Skip the bodies of here-documents opened on the line that just ended."""
        s, hi = self.s, self.hi
        for index, delimiter, strip_tabs in self.pending:
            body_start = i
            while i < hi:
                end = s.find("\n", i, hi)
                line_end = hi if end < 0 else end
                line = s[i:line_end].rstrip("\r")
                if strip_tabs:
                    line = line.lstrip("\t")
                if line == delimiter:
                    self.heredocs[index] = (body_start, i)
                    i = hi if end < 0 else end + 1
                    break
                i = hi if end < 0 else end + 1
            else:
                self.heredocs[index] = (body_start, hi)  # bash accepts a body ended by end-of-file
        self.pending = []
        return i

    def _word(self, i: int) -> _Token:
        s, hi = self.s, self.hi
        start = i
        pieces: list[str] = []
        quoted = False
        subs: list[tuple[str, int, int]] = []
        while i < hi:
            plain = _PLAIN.match(s, i, hi)
            if plain:
                pieces.append(plain.group())
                i = plain.end()
                if i >= hi:
                    break
            c = s[i]
            if c == "\\":
                if i + 1 >= hi:
                    pieces.append("\\")
                    i += 1
                elif s[i + 1] == "\n":
                    i += 2
                elif s[i + 1] == "\r" and i + 2 < hi and s[i + 2] == "\n":
                    i += 3  # a continuation in a file with CRLF line ends
                else:
                    pieces.append(s[i + 1])
                    quoted = True
                    i += 2
            elif c == "'":
                end = s.find("'", i + 1, hi)
                if end < 0:
                    self.error(i, "unterminated single quote")
                    end = hi
                pieces.append(s[i + 1:end])
                quoted = True
                i = min(end + 1, hi)
            elif c == '"':
                i = self._double_quoted(i + 1, pieces, subs)
                quoted = True
            elif c == "$":
                i = self._dollar(i, pieces, subs)
                if i < 0:
                    i = -i
                    quoted = True
            elif c == "`":
                end = self._backtick(i)
                subs.append(("`", i + 1, max(end - 1, i + 1)))
                pieces.append(s[i:end])
                i = end
            elif c == "(" and i > start and (s[i - 1] in "@!+*?" or _ARRAY_START.fullmatch("".join(pieces))):
                end = _scan_nested(s, i + 1, ")", hi)
                if end < 0:
                    self.error(i, "unterminated parenthesis")
                    end = hi
                pieces.append(s[i:end])
                i = end
            else:
                break
        text = "".join(pieces)
        return _Token("w", start, i, text, quoted, tuple(subs), not quoted and s[start:i] == text)

    def _double_quoted(self, i: int, pieces: list[str], subs: list[tuple[str, int, int]]) -> int:
        s, hi = self.s, self.hi
        opened = i - 1
        while i < hi:
            plain = _DQ_PLAIN.match(s, i, hi)
            if plain:
                pieces.append(plain.group())
                i = plain.end()
                if i >= hi:
                    break
            c = s[i]
            if c == '"':
                return i + 1
            if c == "\\":
                following = s[i + 1] if i + 1 < hi else ""
                if following == "\n":
                    i += 2
                elif following and following in '$`"\\':
                    pieces.append(following)
                    i += 2
                else:
                    pieces.append("\\")
                    i += 1
            elif c == "$":
                i = self._dollar(i, pieces, subs, in_double_quotes=True)
            else:  # backtick
                end = self._backtick(i)
                subs.append(("`", i + 1, max(end - 1, i + 1)))
                pieces.append(s[i:end])
                i = end
        self.error(opened, "unterminated double quote")
        return hi

    def _dollar(self, i: int, pieces: list[str], subs: list[tuple[str, int, int]],
                in_double_quotes: bool = False) -> int:
        """Consume a ``$`` construct; returns the next index (negated when it was a quoted form)."""
        s, hi = self.s, self.hi
        following = s[i + 1] if i + 1 < hi else ""
        if in_double_quotes and following in ("'", '"'):
            pieces.append("$")
            return i + 1
        if following == "'":
            j = i + 2
            while j < hi and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= hi:
                self.error(i, "unterminated $'…' string")
            pieces.append(_ansi_c(s[i + 2:min(j, hi)]))
            return -min(j + 1, hi)
        if following == '"':
            return -self._double_quoted(i + 2, pieces, subs)
        if following == "(" and i + 2 < hi and s[i + 2] == "(":
            end = _scan_nested(s, i + 2, ")", hi)
            if end < 0:
                self.error(i, "unterminated $((…))")
                end = hi
            pieces.append(s[i:end])
            return end
        if following in ("(", "{"):
            end = _scan_nested(s, i + 2, ")" if following == "(" else "}", hi)
            if end < 0:
                self.error(i, f"unterminated ${following}…")
                end = hi
            if following == "(":
                subs.append(("$(", i + 2, max(end - 1, i + 2)))
            pieces.append(s[i:end])
            return end
        pieces.append("$")
        return i + 1

    def _backtick(self, i: int) -> int:
        s, hi = self.s, self.hi
        j = i + 1
        while j < hi and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= hi:
            self.error(i, "unterminated backtick")
            return hi
        return j + 1


# --------------------------------------------------------------------------- options


def _apply_set(args: Sequence[str], options: dict[str, bool]) -> None:
    """``set -euo pipefail`` / ``set +o pipefail`` / ``set -e``: update ``options`` in place."""
    k = 0
    while k < len(args):
        arg = args[k]
        if arg in ("--", "-") or len(arg) < 2 or arg[0] not in "-+":
            break
        on = arg[0] == "-"
        for letter in arg[1:]:  # bash: each `o` of a cluster takes the next word (`set -exou pipefail`)
            if letter == "o":
                k += 1
                _set_named_option(options, args[k] if k < len(args) else "", on)
            elif letter == "e":
                options["errexit"] = on
        k += 1


def _set_named_option(options: dict[str, bool], name: str, on: bool) -> None:
    if name == "pipefail":
        options["pipefail"] = on
    elif name == "errexit":
        options["errexit"] = on


def _apply_shopt(args: Sequence[str], options: dict[str, bool]) -> None:
    """``shopt -s -o pipefail`` / ``shopt -so pipefail``."""
    letters = "".join(arg[1:] for arg in args if arg.startswith("-"))
    if "o" not in letters or ("s" not in letters and "u" not in letters):
        return
    for name in (arg for arg in args if not arg.startswith("-")):
        _set_named_option(options, name, "s" in letters)


def find_shell_call(argv: Sequence[str]) -> ShellCall | None:
    """The first ``sh``/``bash``/… word of ``argv`` with the options before its script.

    ``bash -lc 'x'``, ``/bin/sh -c "x"``, ``bash -euo pipefail -c 'x'``, ``bash -o pipefail -c``.
    """
    for index, word in enumerate(argv):
        if not word.endswith("sh") or word.rsplit("/", 1)[-1] not in SHELLS:
            continue
        options = {"pipefail": False, "errexit": False}
        has_c = False
        k = index + 1
        while k < len(argv):
            arg = argv[k]
            if arg == "--":
                k += 1
                break
            if len(arg) < 2 or arg[0] not in "-+":
                break
            if arg.startswith("--"):
                k += 2 if arg in ("--rcfile", "--init-file") else 1
                continue
            on = arg[0] == "-"
            for letter in arg[1:]:  # each `o`/`O` of a cluster takes the next word (`bash -eo pipefail -c`)
                if letter == "c":
                    has_c = True
                elif letter in "oO":
                    k += 1
                    if letter == "o":
                        _set_named_option(options, argv[k] if k < len(argv) else "", on)
                elif letter == "e":
                    options["errexit"] = on
            k += 1
        script_index = k if has_c and k < len(argv) else None
        return ShellCall(index, script_index, options["pipefail"], options["errexit"])
    return None


# --------------------------------------------------------------------------- parser


class _Parser:
    """Recursive descent over one token list; appends pipelines to the shared script."""

    def __init__(self, s: str, lo: int, hi: int, locator: Locator, script: Script,
                 options: dict[str, bool], depth: int, condition: str = "", nested: str = "",
                 nesting: int = 0) -> None:
        self.s = s
        self.locator = locator
        self.script = script
        self.options = options
        self.depth = depth
        self.condition = condition
        self.nested = nested
        self.nesting = nesting  # shared with the parsers of enclosing substitutions: bounds the stack
        self.heredoc_starts: dict[int, int] = {}  # id(Redirect) -> offset of its body
        # the pipelines whose status is the status of what was just parsed (a list, a compound command)
        self.tails: list[Pipeline] = []
        self.function_tails: dict[str, list[Pipeline]] = {}  # function name -> the tails of its body
        self.tested = False  # parsing an if/while/until condition
        lexer = _Lexer(s, lo, hi, self._lex_error)
        self.tokens = lexer.run()
        self.heredocs = lexer.heredocs
        self.i = 0

    # ----------------------------------------------------------------- helpers

    def _lex_error(self, offset: int, message: str) -> None:
        self._error(offset, message)

    def _error(self, offset: int, message: str) -> None:
        line, column = self.locator.locate(offset)
        self.script.errors.append(f"line {line}, column {column}: {message}")
        self.script.error_positions.append((line, column))

    def _peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _is_op(self, *texts: str) -> bool:
        token = self._peek()
        return token is not None and token.kind == "o" and token.text in texts

    def _is_reserved(self, *words: str) -> bool:
        if self.i >= len(self.tokens):
            return False
        token = self.tokens[self.i]
        return token.bare and token.text in words

    def _skip_newlines(self) -> None:
        while self._is_op("\n"):
            self.i += 1

    def _word(self, token: _Token) -> Word:
        line, column, end_line, end_column = self.locator.span(token.start, token.end)
        return Word(token.text, self.s[token.start:token.end], line, column, end_line, end_column, token.quoted)

    def _source_text(self, first: int, last: int, limit: int = 0) -> str:
        """Whitespace-normalised source of tokens ``first``..``last`` (inclusive), cut to ``limit`` characters."""
        if first > last or first >= len(self.tokens):
            return ""
        start = self.tokens[first].start
        end = self.tokens[min(last, len(self.tokens) - 1)].end
        if limit:
            end = min(end, start + 2 * limit)  # whitespace shrinks when normalised: read a little more
        text = " ".join(self.s[start:end].replace("\\\n", " ").split())
        return text[:limit] + "…" if limit and len(text) > limit else text

    def _with_condition(self, extra: str) -> str:
        if not extra:
            return self.condition
        return f"{self.condition} && {extra}" if self.condition else extra

    # ----------------------------------------------------------------- grammar

    def parse(self) -> None:
        self._list(frozenset(), frozenset())
        tails = self.tails
        while self.i < len(self.tokens):  # stray closers at top level: report and go on
            token = self.tokens[self.i]
            self._error(token.start, f"unexpected {token.text!r}")
            self.i += 1
            self._list(frozenset(), frozenset())
            tails = self.tails or tails
        if not self.nested:
            self._mark_last(tails)

    def _mark_last(self, tails: list[Pipeline]) -> None:
        """Mark the pipelines whose status the script exits with, through calls of its own functions."""
        stack = list(tails)
        seen: set[int] = set()
        while stack:
            pipeline = stack.pop()
            if id(pipeline) in seen:
                continue
            seen.add(id(pipeline))
            pipeline.last = True
            if len(pipeline.commands) == 1 and not pipeline.commands[0].compound:
                stack.extend(self.function_tails.get(pipeline.commands[0].name, ()))

    def _list(self, end_words: frozenset[str], end_ops: frozenset[str]) -> None:
        """A list of and-or lists; leaves in ``self.tails`` the pipelines whose status it ends with."""
        tails: list[Pipeline] = []
        while True:
            while self._is_op("\n", ";", "&"):
                self.i += 1
            token = self._peek()
            if token is None:
                break
            if token.kind == "o" and token.text in end_ops:
                break
            if token.bare and (token.text in end_words or token.text in RESERVED_TERMINATORS):
                break
            if token.kind == "o" and token.text not in ("(",):
                if token.text in end_ops or token.text == ")" or token.text in CASE_ENDS:
                    break
                self._error(token.start, f"unexpected {token.text!r}")
                self.i += 1
                continue
            before = self.i
            start = len(self.script.pipelines)
            self._and_or()
            tails = self.tails
            if self._is_op("&"):  # run in the background: its status is nobody's
                for pipeline in self.script.pipelines[start:]:
                    pipeline.background = True
                tails = []
            if self.i == before:  # nothing consumed: avoid looping forever
                self._error(token.start, f"unexpected {token.text!r}")
                self.i += 1
        self.tails = tails

    def _and_or(self) -> None:
        """``a && b || c``: b runs when ``a`` succeeded, c when ``! (a && b)``; that is their condition.

        The condition text keeps the first elements of a long chain and the one just before
        (each cut to a bounded length), so a chain of N elements costs O(N), not O(N²).
        """
        prefix = ""
        head: list[str] = []  # "text op" of the first elements of the chain
        elements: list[list[Pipeline]] = []  # the tails of each element
        unrescued = 0  # elements before this index are already followed by a `||`
        while True:
            saved = self.condition
            self.condition = self._with_condition(prefix)
            element_start = self.i
            self._pipeline()
            self.condition = saved
            elements.append(self.tails)
            if not self._is_op("&&", "||"):
                break
            operator = self.tokens[self.i].text
            for pipeline in self.tails:
                pipeline.next_op = operator
            if operator == "||":
                for tails in elements[unrescued:]:
                    for pipeline in tails:
                        pipeline.rescued = True
                unrescued = len(elements)
            text = self._source_text(element_start, self.i - 1, CONDITION_LIMIT)
            if len(head) < CHAIN_HEAD:
                head.append(f"{text} {operator}")
                chain = " ".join(head)[:-len(operator) - 1]
            else:
                chain = f"{' '.join(head)} … {text}"
            prefix = chain if operator == "&&" else f"! ({chain})"
            self.i += 1
            self._skip_newlines()
        self.tails = elements[-1]

    def _pipeline(self) -> None:
        negated = False
        if self._is_reserved("!"):
            negated = True
            self.i += 1
        if self._is_reserved("time"):
            self.i += 1
            while (option := self._peek()) is not None and option.kind == "w" and option.text in ("-p", "--"):
                self.i += 1
        index = len(self.script.pipelines)
        start_token = self._peek()
        options_at_start = dict(self.options)
        commands: list[SimpleCommand] = []
        while True:
            command = self._command()
            if command is not None:
                commands.append(command)
            if not self._is_op("|", "|&"):
                break
            if command is not None and self.tokens[self.i].text == "|&":
                command.redirects.append(Redirect("2>&1", None, None, *self.locator.locate(self.tokens[self.i].start)))
            self.i += 1
            self._skip_newlines()
        if not commands or start_token is None:
            self.tails = []
            return
        if len(commands) == 1 and commands[0].compound and not commands[0].redirects:
            return  # a plain compound command: its body is already in the flat list, its tails in self.tails
        first = commands[0]
        last = commands[-1]
        pipeline = Pipeline(commands, first.line, first.column, options_at_start["pipefail"],
                            options_at_start["errexit"], negated, self.condition, self.nested,
                            last.end_line, last.end_column, tested=self.tested or negated)
        self.script.pipelines.insert(index, pipeline)
        self.tails = [pipeline]

    def _command(self) -> SimpleCommand | None:
        token = self._peek()
        if token is None:
            return None
        if token.kind == "o":
            if token.text == "(":
                return self._compound(_Parser._subshell_body)
            return None
        if token.bare:
            body = _COMPOUND_BODIES.get(token.text)
            if body is not None:
                return self._compound(body)
            if token.text.startswith("((") and token.text.endswith("))"):
                self.i += 1
                self.tails = []
                return self._finish_compound("((", token, len(self.script.pipelines))
            if token.text == "[[":
                return self._double_bracket()
            if token.text == "function":
                return self._function_keyword()
            if token.text == "coproc":
                return self._coproc()
            if self._is_function_definition():
                return self._function_definition()
        return self._simple()

    # ----------------------------------------------------------------- compound commands

    def _enter(self, token: _Token) -> bool:
        if self.nesting >= MAX_NESTING:
            self._error(token.start, "compound commands nested too deeply; the rest is not parsed")
            self.i = len(self.tokens)
            return False
        self.nesting += 1
        return True

    def _compound(self, body: Callable[[_Parser, _Token], str]) -> SimpleCommand | None:
        """A compound command at ``self.i``: ``body`` parses past its keyword and returns the keyword
        the stand-in command gets; the nesting bound and the stand-in are the same for every kind."""
        token = self.tokens[self.i]
        if not self._enter(token):
            return None
        body_start = len(self.script.pipelines)
        self.i += 1
        keyword = body(self, token)
        self.nesting -= 1
        return self._finish_compound(keyword, token, body_start)

    def _finish_compound(self, keyword: str, token: _Token, body_start: int) -> SimpleCommand:
        """The stand-in for a compound command, with the redirects written after it."""
        line, column = self.locator.locate(token.start)
        word = Word(keyword, keyword, line, column, line, column + len(keyword))
        command = SimpleCommand([word], [], [], line, column, compound=keyword,
                                body=self.script.pipelines[body_start:])
        self._redirects_after(command)
        end_token = self.tokens[self.i - 1] if self.i > 0 else token
        command.end_line, command.end_column = self.locator.locate(end_token.end)
        return command

    def _redirects_after(self, command: SimpleCommand) -> None:
        while (token := self._peek()) is not None and token.kind == "r":
            self._redirect(command)

    def _expect(self, word: str) -> bool:
        if self._is_reserved(word):
            self.i += 1
            return True
        token = self._peek()
        offset = token.start if token is not None else len(self.s)
        self._error(offset, f"expected {word!r}")
        return False

    def _body(self, end_words: frozenset[str], condition: str = "") -> None:
        saved = self.condition
        self.condition = self._with_condition(condition)
        self._list(end_words, frozenset())
        self.condition = saved

    def _condition_list(self, end_word: str) -> str:
        first = self.i
        saved = self.tested
        self.tested = True
        self._list(frozenset({end_word}), frozenset())
        self.tested = saved
        text = self._source_text(first, self.i - 1)
        return text.rstrip(";& ").strip()

    def _if_body(self, token: _Token) -> str:
        conditions: list[str] = []
        condition = self._condition_list("then")
        self._expect("then")
        self._body(frozenset({"elif", "else", "fi"}), condition)
        tails = self.tails
        conditions.append(condition)
        while self._is_reserved("elif"):
            self.i += 1
            previous = " && ".join(f"! ({text})" for text in conditions)
            saved = self.condition
            self.condition = self._with_condition(previous)
            condition = self._condition_list("then")
            self.condition = saved
            self._expect("then")
            self._body(frozenset({"elif", "else", "fi"}), f"{previous} && {condition}")
            tails = tails + self.tails
            conditions.append(condition)
        if self._is_reserved("else"):
            self.i += 1
            self._body(frozenset({"fi"}), " && ".join(f"! ({text})" for text in conditions))
            tails = tails + self.tails
        self._expect("fi")
        self.tails = tails
        return "if"

    def _loop_body(self, token: _Token) -> str:
        """``while``/``until`` condition; do … done."""
        self._condition_list("do")
        self._do_done()
        return token.text

    def _do_done(self) -> None:
        if self._is_reserved("{"):  # bash also accepts `for x in …; { …; }`
            self.i += 1
            self._body(frozenset({"}"}))
            self._expect("}")
            return
        self._expect("do")
        self._body(frozenset({"done"}))
        self._expect("done")

    def _for_body(self, token: _Token) -> str:
        """``for NAME [in WORDS]; do … done`` and ``for ((…)); do … done`` (also ``select``)."""
        while True:
            current = self._peek()
            if current is None or (current.kind == "o" and current.text in (";", "\n")):
                break
            if self._is_reserved("do", "{"):
                break
            if current.kind == "w":
                self._substitutions(current)
            self.i += 1
        self._skip_separators()
        self._do_done()
        return token.text

    def _skip_separators(self) -> None:
        while self._is_op(";", "\n"):
            self.i += 1

    def _case_body(self, token: _Token) -> str:
        subject_token = self._peek()
        subject = ""
        if subject_token is not None and subject_token.kind == "w":
            subject = self.s[subject_token.start:subject_token.end]
            self._substitutions(subject_token)
            self.i += 1
        self._skip_newlines()
        self._expect("in")
        tails: list[Pipeline] = []
        while True:
            self._skip_newlines()
            current = self._peek()
            if current is None or self._is_reserved("esac"):
                break
            if self._is_op("("):
                self.i += 1
            first = self.i
            while self._peek() is not None and not self._is_op(")"):
                if self._is_op("\n") or self._is_reserved("esac"):
                    break
                self.i += 1
            patterns = self._source_text(first, self.i - 1)
            if not self._is_op(")"):
                self._error(current.start, "case pattern without ')'")
                break
            self.i += 1
            self._body(frozenset({"esac"}), f"case {subject} in {patterns}")
            tails = tails + self.tails
            if self._is_op(*CASE_ENDS):
                self.i += 1
        self._expect("esac")
        self.tails = tails
        return "case"

    def _group_body(self, token: _Token) -> str:
        self._body(frozenset({"}"}))
        self._expect("}")
        return "{"

    def _subshell_body(self, token: _Token) -> str:
        saved = dict(self.options)
        self._list(frozenset(), frozenset({")"}))
        self.options = saved  # `set` inside a subshell does not leak out
        if self._is_op(")"):
            self.i += 1
        else:
            self._error(token.start, "unterminated '('")
        return "("

    def _double_bracket(self) -> SimpleCommand:
        """``[[ … ]]``: operators inside are words (``<`` compares, ``&&`` joins tests)."""
        start = self.i
        while self.i < len(self.tokens) and not self._is_reserved("]]"):
            self.i += 1
        if self.i < len(self.tokens):
            self.i += 1
        else:
            self._error(self.tokens[start].start, "unterminated '[['")
        words = [self._word(token) for token in self.tokens[start:self.i] if token.text != "\n"]
        command = SimpleCommand(words, line=words[0].line, column=words[0].column,
                                end_line=words[-1].end_line, end_column=words[-1].end_column)
        self._redirects_after(command)
        return command

    def _coproc(self) -> SimpleCommand | None:
        """``coproc [NAME] command``: the command runs in the background; NAME only before a compound."""
        self.i += 1
        if self.i + 1 < len(self.tokens) and self.tokens[self.i].kind == "w":
            following = self.tokens[self.i + 1]
            if (following.kind == "o" and following.text == "(") or (following.bare and following.text == "{"):
                self.i += 1
        return self._command() if self.i < len(self.tokens) else None

    def _is_function_definition(self) -> bool:
        j = self.i
        return (j + 2 < len(self.tokens) and self.tokens[j + 1].kind == "o" and self.tokens[j + 1].text == "("
                and self.tokens[j + 2].kind == "o" and self.tokens[j + 2].text == ")")

    def _function_definition(self) -> SimpleCommand | None:
        name = self.tokens[self.i].text
        self.i += 3
        return self._function_body(name)

    def _function_keyword(self) -> SimpleCommand | None:
        self.i += 1  # `function`
        name = ""
        token = self._peek()
        if token is not None and token.kind == "w":
            name = token.text
            self.i += 1
        if self._is_op("(") and self.i + 1 < len(self.tokens) and self.tokens[self.i + 1].text == ")":
            self.i += 2
        return self._function_body(name)

    def _function_body(self, name: str) -> SimpleCommand | None:
        self._skip_newlines()
        saved = self.condition
        self.condition = ""  # a function runs where it is called, not where it is defined
        start = len(self.script.pipelines)
        command = self._command()
        self.condition = saved
        if name:
            self.script.functions[name] = self.script.pipelines[start:]
            self.function_tails[name] = self.tails
        self.tails = []
        if command is not None and command.compound and not command.redirects:
            return None
        return command

    # ----------------------------------------------------------------- simple commands

    def _simple(self) -> SimpleCommand | None:
        command = SimpleCommand([])
        offsets: list[int] = []  # where each of command.words starts in the source
        tokens = self.tokens
        while True:
            token = tokens[self.i] if self.i < len(tokens) else None
            if token is None or token.kind == "o":
                break
            if token.kind == "r":
                self._redirect(command)
                continue
            word = self._word(token)
            if not command.words and _ASSIGNMENT.match(word.raw):
                command.assignments.append(word)
            else:
                command.words.append(word)
                offsets.append(token.start)
            if token.subs:
                self._substitutions(token)
            self.i += 1
        if not command.words and not command.assignments and not command.redirects:
            return None
        firsts = [item for item in (command.assignments[:1] + command.words[:1]) if item]
        starts = [(word.line, word.column) for word in firsts]
        starts += [(redirect.line, redirect.column) for redirect in command.redirects[:1]]
        command.line, command.column = min(starts)
        ends = [(word.end_line, word.end_column) for word in command.words[-1:] + command.assignments[-1:]]
        ends += [(redirect.target.end_line, redirect.target.end_column) for redirect in command.redirects
                 if redirect.target is not None]
        command.end_line, command.end_column = max(ends) if ends else (command.line, command.column)
        self._record(command, offsets)
        return command

    def _redirect(self, command: SimpleCommand) -> None:
        token = self.tokens[self.i]
        index = self.i
        self.i += 1
        line, column = self.locator.locate(token.start)
        operator = token.text
        target_token = self._peek()
        if target_token is None or target_token.kind != "w":
            self._error(token.start, f"redirect {operator!r} without a target")
            command.redirects.append(Redirect(operator, None, None, line, column))
            return
        self.i += 1
        if operator.endswith(("<&", ">&")) and not operator.startswith("&") and (
                target_token.text.isdigit() or target_token.text == "-"):
            command.redirects.append(Redirect(operator + target_token.text, None, None, line, column))
            return
        target = self._word(target_token)
        body: str | None = None
        if index in self.heredocs:
            start, end = self.heredocs[index]
            body = self.s[start:end]
        else:
            self._substitutions(target_token)
        redirect = Redirect(operator, target, body, line, column)
        if body is not None:
            self.heredoc_starts[id(redirect)] = self.heredocs[index][0]
        command.redirects.append(redirect)

    def _substitutions(self, token: _Token) -> None:
        """Parse the bodies of ``$(…)``, backticks and ``<(…)`` in a word, into the flat list."""
        for kind, start, end in token.subs:
            if self.depth + 1 > MAX_DEPTH:
                self._error(start, "substitutions nested too deeply; not parsed")
                continue
            saved = dict(self.options)
            nested = _Parser(self.s, start, end, self.locator, self.script, dict(self.options),
                             self.depth + 1, self.condition, kind, self.nesting + 1)
            nested.parse()
            self.options = saved

    def _record(self, command: SimpleCommand, offsets: list[int]) -> None:
        """Side effects of one simple command: set/shopt options, assignments, embedded scripts."""
        if not command.words:
            for word in command.assignments:
                self._assign(word)
            return
        name = command.words[0].text
        argv = command.argv()
        if name == "set":
            _apply_set(argv[1:], self.options)
        elif name == "shopt":
            _apply_shopt(argv[1:], self.options)
        elif name in ASSIGNMENT_BUILTINS:
            for word in command.words[1:]:
                if _ASSIGNMENT.match(word.raw):
                    self._assign(word)
        call = find_shell_call(argv)
        if call is not None:
            command.inner = self._embedded(command, call, offsets)
        elif command.redirects and self.depth + 1 <= MAX_DEPTH:
            command.written = self._written_script(command)

    def _written_script(self, command: SimpleCommand) -> Script | None:
        """``cat > job.sbatch <<EOF``, ``cat <<'EOF' > run.sh``, ``tee job.sh <<EOF``: the job script it writes."""
        heredoc = next((redirect for redirect in command.redirects if id(redirect) in self.heredoc_starts), None)
        if heredoc is None or heredoc.body is None or command.name not in ("cat", "tee", "sbatch"):
            return None
        if command.name == "sbatch":  # ``sbatch <<EOF``: the job script is submitted from standard input
            targets = ["job.sbatch"]
        elif command.name == "cat":
            targets = [redirect.target.text for redirect in command.redirects if redirect.target is not None
                       and redirect.operator.lstrip("1") in (">", ">>", ">|")]
        else:
            targets = [word.text for word in command.words[1:] if not word.text.startswith("-")]
        if not targets or targets[-1].startswith("/dev/"):
            return None
        body = heredoc.body
        if not (_JOB_SCRIPT_NAME.search(targets[-1]) or _JOB_SCRIPT_START.match(body)):
            return None
        start = self.heredoc_starts[id(heredoc)]
        inner = Script()
        _Parser(self.s, start, start + len(body), self.locator, inner, _shebang_options(body), self.depth + 1).parse()
        return inner

    def _assign(self, word: Word) -> None:
        match = _ASSIGNMENT.match(word.raw)
        if match is None:
            return
        name = match.group(1)
        equals = word.text.find("=")
        value_text = word.text[equals + 1:] if equals >= 0 else ""
        raw_value = word.raw[match.end():]
        value = Word(value_text, raw_value, word.line, word.column + match.end(), word.end_line, word.end_column,
                     word.quoted)
        self.script.assignments.setdefault(name, []).append(value)

    def _embedded(self, command: SimpleCommand, call: ShellCall, offsets: list[int]) -> Script | None:
        """The script a ``bash -c STRING`` or ``bash <<EOF`` runs, parsed with its own options."""
        if self.depth + 1 > MAX_DEPTH:
            return None
        options = {"pipefail": call.pipefail, "errexit": call.errexit}
        if call.script_index is not None:
            word = command.words[call.script_index]
            return _parse_word_script(word, self.s, self.locator, options, self.depth + 1, offsets[call.script_index])
        heredoc = next((redirect for redirect in command.redirects if id(redirect) in self.heredoc_starts), None)
        if heredoc is None or heredoc.body is None or heredoc.operator.startswith("<<<"):
            return None
        start = self.heredoc_starts[id(heredoc)]
        inner = Script()
        _Parser(self.s, start, start + len(heredoc.body), self.locator, inner, options, self.depth + 1).parse()
        return inner


def _parse_word_script(word: Word, s: str, locator: Locator, options: dict[str, bool], depth: int,
                       offset: int) -> Script:
    """Parse a ``-c`` string; exact positions when the word is one plain quoted string."""
    inner = Script()
    raw = word.raw
    exact = len(raw) >= 2 and (
        (raw[0] == raw[-1] == "'" and raw.count("'") == 2)
        or (raw[0] == raw[-1] == '"' and raw[1:-1] == word.text)
        or raw == word.text)
    if exact:
        shift = 0 if raw == word.text else 1
        parser = _Parser(s, offset + shift, offset + len(raw) - shift, locator, inner, options, depth)
    else:
        text = word.text
        parser = _Parser(text, 0, len(text), Locator.for_text(text, word.line, word.column + 1),
                         inner, options, depth)
    parser.parse()
    return inner


_COMPOUND_BODIES: dict[str, Callable[[_Parser, _Token], str]] = {
    "if": _Parser._if_body,
    "while": _Parser._loop_body,
    "until": _Parser._loop_body,
    "for": _Parser._for_body,
    "select": _Parser._for_body,
    "case": _Parser._case_body,
    "{": _Parser._group_body,
}


# --------------------------------------------------------------------------- entry points


def _shebang_options(text: str) -> dict[str, bool]:
    """``#!/bin/bash -eo pipefail`` and ``#!/usr/bin/env -S bash -euo pipefail``."""
    options = {"pipefail": False, "errexit": False}
    if not text.startswith("#!"):
        return options
    first = text[2:].split("\n", 1)[0].split()
    call = find_shell_call(first)
    if call is not None:
        options["pipefail"] = call.pipefail
        options["errexit"] = call.errexit
    return options


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


# --------------------------------------------------------------------------- expansion


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
