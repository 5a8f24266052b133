"""Where a function that saves a model is called from: a helper that runs only when the validation
score improved keeps the best model (an export), whatever its dict holds (SPK403)."""

from __future__ import annotations

import ast
import re

from spikelint.util.lazyre import lazy_regex
from spikelint.util.pytree import child_nodes
from spikelint.util.pytree import last_name



# a name in an ``if`` that keeps the best model: ``if val_loss < best_loss``, ``if is_best``, ``if improved``
IMPROVEMENT_NAME = lazy_regex(r"best|improv|lowest|highest|^min_|_min$|^max_|_max$", re.IGNORECASE)


def _improvement_test(test: ast.AST) -> bool:
    """``val < best_val``, ``acc >= self.best_acc``, ``is_best``, ``metric.improved``: the branch
    runs only when the model got better."""
    if isinstance(test, (ast.Name, ast.Attribute)):
        return bool(IMPROVEMENT_NAME.search(last_name(test)))
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(isinstance(part, (ast.Name, ast.Attribute)) and IMPROVEMENT_NAME.search(last_name(part))
                   for side in sides for part in ast.walk(side)):
                return True
    return False


def called_only_when_improved(scope: ast.AST, module: ast.Module) -> bool:
    """The function that saves is called in this file, and every call sits under an improvement
    test: ``if val_loss < best: save_ckpt(model, path)`` keeps the best model, it is no checkpoint
    a resume reads. A helper called nowhere here (or once unconditionally) stays a checkpoint."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    calls, guarded = 0, 0
    stack: list[tuple[ast.AST, bool]] = [(child, False) for child in child_nodes(module)]
    while stack:
        node, under = stack.pop()
        if isinstance(node, ast.Call) and last_name(node.func) == scope.name:
            calls += 1
            guarded += under
        if isinstance(node, ast.If):
            improved = under or _improvement_test(node.test)
            stack.extend([(child, improved) for child in node.body])
            stack.extend([(child, under) for child in [node.test, *node.orelse]])
        else:
            stack.extend([(child, under) for child in child_nodes(node)])
    return calls > 0 and guarded == calls
