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
