"""The words of a ``runai`` command line: where each is written and its text after variable expansion.

A script's earlier assignments are expanded where the whole value is known (``$GPUS``,
``${N:-4}``, ``$((N * 2))``); a word that is exactly one variable points at its assignment.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located


VARIABLE = lazy_regex(r"\$(?:\{(\w+)(?:(:?[-=+?])([^}]*))?\}|(\w+))")
ARITHMETIC = lazy_regex(r"\$\(\((.*)\)\)", re.DOTALL)
NAME_IN_EXPRESSION = lazy_regex(r"\$?\{?([A-Za-z_]\w*)\}?")
ARITHMETIC_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.floordiv,
                        "%": operator.mod}


@dataclass(frozen=True)
class Value:
    """A flag's value after variable expansion, and where it is written."""

    text: str
    where: Located
    offset_known: bool = True  # False when expansion changed the text, so sub-offsets are estimates

    def part(self, start: int, end: int) -> Located:
        """Where ``text[start:end]`` is written (estimated after an expansion)."""
        piece = self.text[start:end]
        if not self.offset_known or self.where.line != self.where.end_line:
            return Located(piece, self.where.line, self.where.column, self.where.end_line, self.where.end_column)
        return Located(piece, self.where.line, self.where.column + start, self.where.line,
                       self.where.column + end)


# --------------------------------------------------------------------------- words and variables


def word_located(word: object) -> Located:
    return Located(getattr(word, "text", ""), getattr(word, "line", 1), getattr(word, "column", 1),
                   getattr(word, "end_line", None), getattr(word, "end_column", None))


def word_end_line(word: object, default: int) -> int:
    """The line a word ends on (its start line when the end is unknown)."""
    end = getattr(word, "end_line", None) or getattr(word, "line", default)
    return end if isinstance(end, int) else default


def raw_offset(word: object) -> int:
    """1 when the word's text starts after an opening quote in the source."""
    raw = str(getattr(word, "raw", ""))
    text = str(getattr(word, "text", ""))
    if raw == text or not raw:
        return 0
    return 1 if raw[:1] in "'\"" and raw[1:1 + len(text)] == text else 0


class Expander:
    """Expands ``$NAME``/``${NAME}`` from the script's earlier assignments."""

    def __init__(self, assignments: dict[str, list[object]], before: tuple[int, int]) -> None:
        self.assignments = assignments
        self.before = before  # only assignments written before this (line, column) apply

    def assignment(self, name: str) -> tuple[str, Located] | None:
        words = [word for word in self.assignments.get(name, [])
                 if (getattr(word, "line", 0), getattr(word, "column", 0)) < self.before]
        if not words:
            return None
        word = words[-1]
        text = str(getattr(word, "text", ""))
        where = word_located(word)
        prefix = f"{name}="
        if text.startswith(prefix):
            text = text[len(prefix):]
            where = where._replace(column=where.column + len(prefix))
        where = where._replace(value=text, column=where.column + raw_offset(word))
        return text, where

    def value(self, word: object) -> Value:
        text = str(getattr(word, "text", ""))
        where = word_located(word)
        shifted = where._replace(column=where.column + raw_offset(word))
        if "$" not in text:
            return Value(text, shifted)
        whole = VARIABLE.fullmatch(text)
        if whole is not None:
            found = self.assignment(whole.group(1) or whole.group(4))
            if found is not None and "$" not in found[0]:
                return Value(found[0], found[1])
            return Value(text, shifted)
        if text.startswith("$((") and text.endswith("))"):
            computed = self.arithmetic(text)
            return Value(computed, shifted._replace(value=computed), offset_known=computed == text)
        expanded = VARIABLE.sub(self._substitute, text)
        return Value(expanded, shifted._replace(value=expanded), offset_known=expanded == text)

    def arithmetic(self, text: str) -> str:
        """``$((NODES - 1))`` with known integer variables -> ``3``; anything else unchanged."""
        match = ARITHMETIC.fullmatch(text.strip())
        if match is None:
            return text
        expression = NAME_IN_EXPRESSION.sub(lambda name: self._integer(name.group(1)), match.group(1))
        value = evaluate(expression)
        return str(value) if value is not None else text

    def _integer(self, name: str) -> str:
        found = self.assignment(name)
        if found is None:
            return name
        inner = self.arithmetic(found[0]) if "$((" in found[0] else found[0]
        return inner if inner.strip().lstrip("-").isdigit() else name

    def _substitute(self, match: re.Match[str]) -> str:
        found = self.assignment(match.group(1) or match.group(4))
        if found is None or "$" in found[0]:
            return match.group(0)
        return found[0]


def evaluate(expression: str) -> int | None:
    """Integer shell arithmetic of literals with ``+ - * / %`` and parentheses; ``None`` otherwise."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    symbols = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/", ast.Mod: "%"}

    def value(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return -inner if inner is not None else None
        if isinstance(node, ast.BinOp) and type(node.op) in symbols:
            left, right = value(node.left), value(node.right)
            if left is None or right is None or (symbols[type(node.op)] in "/%" and right == 0):
                return None
            if abs(left) > 10**9 or abs(right) > 10**9:
                return None
            return int(ARITHMETIC_OPERATORS[symbols[type(node.op)]](left, right))
        return None

    return value(tree.body)


