"""Recursive descent over the tokens: lists, and-or lists, pipelines, simple commands, nested scripts.

Compound commands are flattened into the script's ordered list of pipelines, tracking ``set -o
pipefail`` and ``set -e`` in source order and the text of enclosing conditions, so rank-0 guards
stay visible.  The bodies of ``$(…)``, ``bash -c`` strings and the job scripts here-documents
write are parsed in turn, to a bounded depth.
"""

from __future__ import annotations

from typing import Callable

from spikelint.util.lazyre import lazy_regex
from spikelint.documents.shell.calls import _shebang_options
from spikelint.documents.shell.calls import find_shell_call
from spikelint.documents.shell.calls import find_wrap
from spikelint.documents.shell.compound import CASE_ENDS
from spikelint.documents.shell.compound import _CompoundCommands
from spikelint.documents.shell.lexer import _Token
from spikelint.documents.shell.nodes import Pipeline
from spikelint.documents.shell.nodes import Redirect
from spikelint.documents.shell.nodes import Script
from spikelint.documents.shell.nodes import ShellCall
from spikelint.documents.shell.nodes import SimpleCommand
from spikelint.documents.shell.nodes import Word
from spikelint.documents.shell.options import _apply_set
from spikelint.documents.shell.options import _apply_shopt
from spikelint.documents.shell.positions import Locator

MAX_DEPTH = 12  # nested $(…) / bash -c / heredoc scripts that are parsed in turn
MAX_NESTING = 100  # compound commands and substitutions nested in one another
CONDITION_LIMIT = 300  # characters of one and-or element kept in the condition text of the next
CHAIN_HEAD = 3  # first elements of an and-or chain kept in the condition text of later ones

RESERVED_TERMINATORS = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})
ASSIGNMENT_BUILTINS = frozenset({"export", "declare", "typeset", "local", "readonly"})

_ASSIGNMENT = lazy_regex(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_JOB_SCRIPT_NAME = lazy_regex(r"\.(?:sh|bash|sbatch|slurm|job|pbs|lsf|qsub)$")
# a shell shebang, or a batch scheduler's directives (Slurm, PBS, LSF, Grid Engine, Flux)
_JOB_SCRIPT_START = lazy_regex(r"\s*(?:#!\s*\S*(?:/|env\s+(?:-S\s*)?)(?:ba|z|k|da|)sh\b|#SBATCH|#PBS|#BSUB|#\$ |#flux:)")


class _Parser(_CompoundCommands):
    """Recursive descent over one token list; appends pipelines to the shared script."""

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
        wrap = find_wrap(argv) if call is None and name.endswith("sbatch") else None
        if call is not None:
            command.inner = self._embedded(command, call, offsets)
        elif wrap is not None and self.depth + 1 <= MAX_DEPTH:  # a job script of its own, run later
            index, skip = wrap
            command.written = _parse_word_script(command.words[index], self.s, self.locator,
                                                 {"pipefail": False, "errexit": False}, self.depth + 1,
                                                 offsets[index], skip)
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
                       offset: int, skip: int = 0) -> Script:
    """Parse a ``-c`` string (or a ``--wrap=`` word's text after its first ``skip`` characters); exact
    positions when what is parsed is one plain quoted string."""
    inner = Script()
    raw, text, column = word.raw, word.text, word.column
    if skip:
        exact_prefix = raw[:skip] == text[:skip]  # ``--wrap="cmd"``, not ``"--wrap=cmd"``
        raw, text, column = (raw[skip:] if exact_prefix else ""), text[skip:], column + skip
        offset += skip
    exact = len(raw) >= 2 and (
        (raw[0] == raw[-1] == "'" and raw.count("'") == 2)
        or (raw[0] == raw[-1] == '"' and raw[1:-1] == text)
        or raw == text)
    if exact:
        shift = 0 if raw == text else 1
        parser = _Parser(s, offset + shift, offset + len(raw) - shift, locator, inner, options, depth)
    else:
        parser = _Parser(text, 0, len(text), Locator.for_text(text, word.line, column + 1),
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
