"""Secrets in Python source (``.py`` files and notebook code cells), read through ``ast``.

``ast`` gives every string literal with the name it is bound to, so the key context that
line-based scanners guess (and detect-secrets loses on ``x = f(api_key="…")``) is exact:
assignment targets, keyword arguments, dict keys, ``os.environ[...]`` subscripts and
``wandb.login(key=…)``.
"""

from __future__ import annotations

import ast
from typing import Callable
from typing import Iterator
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.util.pytree import ast_nodes
from spikelint.secrets.detectors import Secret
from spikelint.secrets.text import CONFIG
from spikelint.secrets.text import PROSE
from spikelint.secrets.text import find_in_text

# calls whose argument names a credential although the parameter name does not say so
CALL_KEYS = {("login", "key"): "wandb_api_key"}
MAGIC_ASSIGNMENT = lazy_regex(r"^\s*[\w.]+\s*=\s*[!%]")


class Literal(NamedTuple):
    """A string literal, the name it is written under (``""`` when none) and its position."""

    value: str
    key: str
    line: int
    column: int
    end_line: int
    prose: bool = False  # a docstring or a sentence: only token shapes count there


def _name_of(node: ast.AST) -> str:
    """``HF_TOKEN`` for ``HF_TOKEN``, ``self.token``, ``os.environ["HF_TOKEN"]``, ``cfg["api_key"]``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, str):
            return index.value
    return ""


def _call_name(call: ast.Call) -> str:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""


def _call_owner(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        return function.value.id
    return ""


def _keyed_strings(tree: ast.AST) -> dict[int, str]:
    """``id(constant) -> key`` for literals whose binding names them."""
    keys: dict[int, str] = {}

    def bind(value: ast.AST | None, key: str) -> None:
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and key:
            keys[id(value)] = key
        elif isinstance(value, (ast.JoinedStr, ast.Tuple, ast.List, ast.Set)) and key:
            for part in (value.values if isinstance(value, ast.JoinedStr) else value.elts):
                bind(part, key)  # ``PASSWORDS = ("…", "…")`` and f-string parts

    for node in ast_nodes(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(node.value, _name_of(target))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            bind(node.value, _name_of(node.target))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    bind(value, key.value)
        elif isinstance(node, ast.Call):
            _bind_call(node, bind)
        elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
            bind(node.comparators[0], _name_of(node.left))
    return keys


def _bind_call(call: ast.Call, bind: Callable[[ast.AST | None, str], None]) -> None:
    name = _call_name(call)
    owner = _call_owner(call)
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        if keyword.arg in ("auth", "basic_auth", "http_auth", "credentials") and isinstance(keyword.value, ast.Tuple) \
                and len(keyword.value.elts) == 2:
            bind(keyword.value.elts[1], "password")  # requests' auth=(user, password)
            continue
        special = CALL_KEYS.get((name, keyword.arg))
        if special and (name != "login" or owner in ("wandb", "")):
            bind(keyword.value, special)
        else:
            bind(keyword.value, keyword.arg)
    if name in ("setdefault", "putenv", "__setitem__") and len(call.args) >= 2:
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            bind(call.args[1], first.value)
    elif name == "login" and call.args:
        bind(call.args[0], "wandb_api_key" if owner == "wandb" else "token")


def string_literals(tree: ast.AST) -> Iterator[Literal]:
    """Every string literal with its key; docstrings included (keys stay empty there)."""
    keys = _keyed_strings(tree)
    statements = {id(node.value) for node in ast_nodes(tree) if isinstance(node, ast.Expr)}
    for node in ast_nodes(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
            prose = id(node) in statements or any(character.isspace() for character in node.value.strip())
            yield Literal(node.value, keys.get(id(node), ""), node.lineno, node.col_offset + 1,
                          node.end_lineno or node.lineno, prose)


def python_secrets(tree: ast.AST) -> Iterator[tuple[Literal, Secret]]:
    """Secrets in the string literals of a parsed module (offsets within each literal)."""
    for literal in string_literals(tree):
        for secret in find_in_text(literal.value, literal.key, PROSE if literal.prose else CONFIG):
            yield literal, secret


def magic_free_source(lines: list[str]) -> str:
    """A notebook cell with IPython ``!``/``%`` lines blanked, so ``ast`` can read the Python around them."""
    if lines and lines[0].lstrip().startswith("%%"):
        return "\n".join("" for _ in lines)
    cleaned = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("!", "%")) or MAGIC_ASSIGNMENT.match(line):
            cleaned.append("")
        else:
            cleaned.append(line)
    return "\n".join(cleaned)
