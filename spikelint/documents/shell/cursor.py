"""The parser's state over one token list and the token-level questions every rule of the grammar asks.

Apart from the grammar so that the grammar (``grammar.py``) and the compound commands
(``compound.py``) read as rules, not as bookkeeping.
"""

from __future__ import annotations

from spikelint.documents.shell.lexer import _Lexer
from spikelint.documents.shell.lexer import _Token
from spikelint.documents.shell.nodes import Pipeline
from spikelint.documents.shell.nodes import Script
from spikelint.documents.shell.nodes import Word
from spikelint.documents.shell.positions import Locator


class _Cursor:
    """One text (or a range of it) lexed, the position in its tokens, and the shared script it fills."""

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

    def _expect(self, word: str) -> bool:
        if self._is_reserved(word):
            self.i += 1
            return True
        token = self._peek()
        offset = token.start if token is not None else len(self.s)
        self._error(offset, f"expected {word!r}")
        return False
