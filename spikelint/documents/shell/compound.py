"""The bodies of compound commands: ``if``, ``while``/``until``, ``for``/``select``, ``case``, ``{ }``, ``( )``,
``[[ … ]]``, ``coproc`` and function definitions.

Each body is entered past its keyword and calls back into the grammar (``grammar._Parser``) for
the lists inside it; the few grammar rules it needs are declared here and defined there.
"""

from __future__ import annotations

from spikelint.documents.shell.cursor import _Cursor
from spikelint.documents.shell.lexer import _Token
from spikelint.documents.shell.nodes import Pipeline
from spikelint.documents.shell.nodes import SimpleCommand

CASE_ENDS = frozenset({";;", ";&", ";;&"})


class _CompoundCommands(_Cursor):
    """The compound commands' rules, on the parser's state; the grammar inherits them."""

    # ----------------------------------------------------------------- defined by the grammar

    def _list(self, end_words: frozenset[str], end_ops: frozenset[str]) -> None:
        raise NotImplementedError

    def _command(self) -> SimpleCommand | None:
        raise NotImplementedError

    def _substitutions(self, token: _Token) -> None:
        raise NotImplementedError

    def _redirects_after(self, command: SimpleCommand) -> None:
        raise NotImplementedError

    # ----------------------------------------------------------------- compound commands

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
