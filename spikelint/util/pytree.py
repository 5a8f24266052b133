"""Every node of a Python syntax tree, walked once and kept on the tree.

Several checks (secrets in literals, checkpoint contents) walk each module more than once;
``ast.walk`` is a generator over ``iter_child_nodes``, so each walk costs as much as parsing.
Trees are not changed after parsing, so the first walk's list serves every later one.
"""

from __future__ import annotations

import ast

_KEPT = "_spikelint_nodes"


def ast_nodes(tree: ast.AST) -> list[ast.AST]:
    """The nodes of ``tree`` in ``ast.walk``'s order (breadth first, ``tree`` first)."""
    found: list[ast.AST] | None = tree.__dict__.get(_KEPT)
    if found is None:
        found = _breadth_first(tree)
        tree.__dict__[_KEPT] = found
    return found


def _breadth_first(tree: ast.AST) -> list[ast.AST]:
    found: list[ast.AST] = [tree]
    position = 0
    while position < len(found):
        found.extend(child_nodes(found[position]))
        position += 1
    return found


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without a generator per node."""
    found: list[ast.AST] = []
    node_type = ast.AST
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, node_type):
                    found.append(item)
        elif isinstance(value, node_type):
            found.append(value)
    return found


def last_name(node: ast.AST) -> str:
    """``torch.save`` -> ``save``, ``save`` -> ``save``; ``''`` for anything else (a call, a subscript)."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def dotted(node: ast.AST) -> str:
    """``torch.distributed.checkpoint.save`` -> that text; ``''`` for anything not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        inner = dotted(node.func)
        parts.append(f"{inner}()" if inner else "")
    else:
        return ""
    return ".".join(reversed(parts))


def scope_nodes(scope: ast.AST) -> list[ast.AST]:
    """Nodes of a function (or module) body, not descending into nested functions and classes.

    Four readings of a scope ask for them (bindings, training loop, scheduler, saves): the list is
    computed once and kept on the scope node (syntax trees are not changed after parsing)."""
    found: list[ast.AST] | None = getattr(scope, "_spikelint_scope_nodes", None)
    if found is not None:
        return found
    found = []
    stack = child_nodes(scope)
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(child_nodes(node))
    scope._spikelint_scope_nodes = found  # type: ignore[attr-defined]
    return found
