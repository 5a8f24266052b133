"""Shell text -> tokens with offsets: words (quotes removed, substitutions kept whole), operators, redirects.

Hand-written rather than ``shlex``: shlex drops positions, splits ``$(a | b)`` at the pipe and
knows nothing of here-documents.  Here-document bodies are skipped as data and their ranges kept;
the bodies of ``$(…)``, backticks and ``<(…)`` are kept as ranges for the parser to parse in turn.
"""

from __future__ import annotations

import re
from typing import Callable
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex

MAX_SCAN_STACK = 400  # open quotes/substitutions while scanning one word

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
_ARRAY_START = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                 "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


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
