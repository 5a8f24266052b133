"""SPK403: Python code that saves a training checkpoint which cannot resume training.

Reads the module's ``ast``: a ``torch.save`` / ``accelerator.save`` / DCP ``save`` whose saved
object is a dict literal (or a name bound to one in the same function, keys added later by
``ckpt[k] = …`` or ``ckpt.update(…)`` included) that holds a module's ``state_dict()`` but no
optimizer state, no step/epoch, or — when the function has a scheduler — no scheduler state.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator
from typing import NamedTuple

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem
from spikelint.util.pytree import ast_nodes
from spikelint.util.pytree import child_nodes

SAVE_RECEIVERS = lazy_regex(r"^(torch|torch\.distributed\.checkpoint|dcp|DCP|dist_cp|distcp|ptd_checkpoint|"
                            r"xm|torch_xla\.core\.xla_model)$|accelerator$|accelerate$")
DCP_MODULES = ("torch.distributed.checkpoint",)
OPTIMIZER = lazy_regex(r"optim|(^|[._])opt($|[._])|optimi[sz]er", re.IGNORECASE)
SCHEDULER = lazy_regex(r"sched", re.IGNORECASE)
SCALER = lazy_regex(r"scaler|ema|swa|averaged", re.IGNORECASE)
STEP = lazy_regex(r"step|epoch|iter|global_step|iteration|ntokens|tokens_seen|progress|trainer_state|train_state|"
                  r"batch_idx|batches_seen|samples_seen", re.IGNORECASE)
MODEL_STATE_FUNCTIONS = lazy_regex(r"(^|\.)(get_model_state_dict|get_state_dict)$")
OPTIMIZER_STATE_FUNCTIONS = lazy_regex(r"(^|\.)get_optimizer_state_dict$")
SCHEDULER_FACTORIES = lazy_regex(r"sched|LR$|LambdaLR|OneCycle|CosineAnnealing|StepLR|ReduceLROnPlateau|"
                                 r"get_.*schedule", re.IGNORECASE)


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


class Contents(NamedTuple):
    """What a checkpoint dict holds."""

    model: bool
    optimizer: bool
    step: bool
    scheduler: bool


def _saves_by_scope(module: ast.Module, aliases: dict[str, str]) -> list[tuple[ast.AST, list[ast.Call]]]:
    """Each function (or the module) with the save calls of its own body, in one walk: a call in a
    nested function belongs to that function; one in a class body or a lambda to no scope."""
    found: dict[int, tuple[ast.AST, list[ast.Call]]] = {}
    stack: list[tuple[ast.AST, ast.AST | None]] = [(child, module) for child in child_nodes(module)]
    while stack:
        node, scope = stack.pop()
        if scope is not None and isinstance(node, ast.Call) and _is_save(node, aliases):
            found.setdefault(id(scope), (scope, []))[1].append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner: ast.AST | None = node
        elif isinstance(node, (ast.ClassDef, ast.Lambda)):
            inner = None
        else:
            inner = scope
        stack.extend([(child, inner) for child in child_nodes(node)])
    return list(found.values())


def _scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function (or module) body, not descending into nested functions and classes."""
    stack = child_nodes(scope)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(child_nodes(node))


def _state_dict_receiver(value: ast.AST) -> str | None:
    """``model.state_dict()`` -> ``model``; ``get_model_state_dict(model)`` -> ``model``."""
    if not isinstance(value, ast.Call):
        return None
    name = dotted(value.func)
    if name.endswith(".state_dict") or name == "state_dict":
        return name[: -len("state_dict")].rstrip(".") or "self"
    if MODEL_STATE_FUNCTIONS.search(name):
        return "model"
    if OPTIMIZER_STATE_FUNCTIONS.search(name):
        return "optimizer"
    return None


def _key_text(key: ast.AST | None) -> str:
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return dotted(key) if key is not None else ""


def _keys_and_values(node: ast.AST, depth: int = 0) -> Iterator[tuple[str, ast.AST]]:
    """(key text, value) of a dict literal or ``dict(k=v)`` call, nested dicts included."""
    if depth > 6:
        return
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values):
            yield _key_text(key), value
            yield from _keys_and_values(value, depth + 1)
    elif isinstance(node, ast.Call) and dotted(node.func) == "dict":
        for keyword in node.keywords:
            yield keyword.arg or "", keyword.value
            yield from _keys_and_values(keyword.value, depth + 1)


def _contents(pairs: list[tuple[str, ast.AST]]) -> Contents:
    model = optimizer = step = scheduler = False
    for key, value in pairs:
        receiver = _state_dict_receiver(value)
        value_name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else ""
        if receiver is not None:
            if OPTIMIZER.search(receiver) or OPTIMIZER.search(key):
                optimizer = True
            elif SCHEDULER.search(receiver) or SCHEDULER.search(key):
                scheduler = True
            elif not SCALER.search(receiver):
                model = True
        if OPTIMIZER.search(key):
            optimizer = True
        if SCHEDULER.search(key):
            scheduler = True
        if STEP.search(key) or (value_name and STEP.search(value_name)):
            step = True
    return Contents(model, optimizer, step, scheduler)


def _has_scheduler(scope: ast.AST) -> bool:
    """A learning-rate scheduler exists in the function: a parameter, a name or a factory call."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
        if any(SCHEDULER.search(name) for name in names):
            return True
    for node in _scope_nodes(scope):
        if isinstance(node, ast.Name) and SCHEDULER.search(node.id):
            return True
        if isinstance(node, ast.Attribute) and SCHEDULER.search(node.attr):
            return True
        if isinstance(node, ast.Call) and SCHEDULER_FACTORIES.search(dotted(node.func).split(".")[-1] or ""):
            name = dotted(node.func)
            if "lr_scheduler" in name or "schedul" in name.lower():
                return True
    return False


class _Bindings:
    """Dict literals bound to names in one scope, and keys added to them afterwards."""

    def __init__(self, scope: ast.AST) -> None:
        self.assigned: dict[str, list[tuple[int, ast.AST]]] = {}
        self.added: dict[str, list[tuple[int, str, ast.AST]]] = {}
        for node in _scope_nodes(scope):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                if value is None:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append((node.lineno, value))
                    elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                        self.added.setdefault(target.value.id, []).append(
                            (node.lineno, _key_text(target.slice), value))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("update", "setdefault") and isinstance(node.func.value, ast.Name):
                owner = node.func.value.id
                for argument in node.args[:1]:
                    for text, added in _keys_and_values(argument):
                        self.added.setdefault(owner, []).append((node.lineno, text, added))
                if node.func.attr == "setdefault" and node.args and isinstance(node.args[0], ast.Constant):
                    default: ast.AST = node.args[1] if len(node.args) > 1 else node.args[0]
                    self.added.setdefault(owner, []).append((node.lineno, str(node.args[0].value), default))
                for keyword in node.keywords:
                    self.added.setdefault(owner, []).append((node.lineno, keyword.arg or "", keyword.value))

    def pairs(self, name: str, line: int) -> list[tuple[str, ast.AST]] | None:
        """The keys of the dict ``name`` holds at ``line`` (``None`` when it is not a dict literal)."""
        earlier = [(at, value) for at, value in self.assigned.get(name, []) if at <= line]
        if not earlier:
            return None
        bound_at, value = max(earlier, key=lambda item: item[0])
        if not (isinstance(value, ast.Dict) or (isinstance(value, ast.Call) and dotted(value.func) == "dict")):
            return None
        pairs = list(_keys_and_values(value))
        for at, key, added in self.added.get(name, []):
            if bound_at <= at <= line:
                pairs.append((key, added))
                pairs.extend(_keys_and_values(added))
        return pairs


def _is_save(call: ast.Call, aliases: dict[str, str]) -> bool:
    name = dotted(call.func)
    if not name:
        return False
    head, _, tail = name.partition(".")
    resolved = aliases.get(head, head) + ("." + tail if tail else "")
    if resolved in ("torch.save", "torch.distributed.checkpoint.save", "torch.distributed.checkpoint.save_state_dict",
                    "torch.distributed.checkpoint.async_save"):
        return True
    receiver, _, method = resolved.rpartition(".")
    return method in ("save", "save_state_dict", "async_save") and bool(SAVE_RECEIVERS.search(receiver))


def _saved_object(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("obj", "state_dict"):
            return keyword.value
    return call.args[0] if call.args else None


def _aliases(module: ast.Module) -> dict[str, str]:
    """``import torch.distributed.checkpoint as dcp`` -> ``{"dcp": "torch.distributed.checkpoint"}``."""
    found: dict[str, str] = {}
    for node in ast_nodes(module):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _missing(contents: Contents, scheduler_exists: bool) -> list[str]:
    missing = []
    if not contents.optimizer:
        missing.append("optimizer state")
    if not contents.step:
        missing.append("step/epoch")
    if scheduler_exists and not contents.scheduler:
        missing.append("LR scheduler state")
    return missing


def consequence(missing: list[str]) -> str:
    """What a resume from this checkpoint gets wrong, for what is missing only."""
    parts = []
    if "optimizer state" in missing:
        parts.append("restarts its optimizer from scratch (a loss spike)")
    if "LR scheduler state" in missing:
        parts.append("restarts its learning-rate schedule from the start")
    if "step/epoch" in missing:
        parts.append("does not know which step or epoch it reached, so it replays data it already saw")
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def _trains(scope: ast.AST) -> bool:
    """The function (or module) trains: an optimizer is named or ``….backward()`` is called."""
    for node in _scope_nodes(scope):
        if isinstance(node, ast.Name) and OPTIMIZER.search(node.id):
            return True
        if isinstance(node, ast.Attribute) and (OPTIMIZER.search(node.attr) or node.attr == "backward"):
            return True
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        return any(OPTIMIZER.search(a.arg) for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])
    return False


FIXES = {
    "optimizer state": "'optimizer': optimizer.state_dict()",
    "step/epoch": "'step': step (or 'epoch': epoch)",
    "LR scheduler state": "'scheduler': scheduler.state_dict()",
}


@check("SPK403", scope="document", kinds=(FileKind.PYTHON,))
def incomplete_checkpoint_state(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """``torch.save({'model': model.state_dict()}, …)`` without optimizer, step or scheduler state."""
    module = document.parsed
    if not isinstance(module, ast.Module):
        return
    aliases = _aliases(module)
    if not any(isinstance(node, ast.Call) and _is_save(node, aliases) for node in ast_nodes(module)):
        return  # most modules save nothing: no per-scope walk
    for scope, saves in _saves_by_scope(module, aliases):
        bindings: _Bindings | None = None
        scheduler: bool | None = None
        for node in saves:
            saved = _saved_object(node)
            if saved is None:
                continue
            if isinstance(saved, ast.Name):
                bindings = bindings or _Bindings(scope)
                pairs = bindings.pairs(saved.id, node.lineno)
            elif isinstance(saved, ast.Call) and _state_dict_receiver(saved) is not None:
                # ``torch.save(model.state_dict(), path)``: weights alone, a checkpoint only where the
                # function trains (an optimizer or a backward pass is in sight), not an export
                pairs = [("", saved)] if _trains(scope) else None
            elif isinstance(saved, (ast.Dict, ast.Call)):
                pairs = list(_keys_and_values(saved)) or None
            else:
                pairs = None
            if not pairs:
                continue
            contents = _contents(pairs)
            if not contents.model:
                continue  # not a training checkpoint (no module state_dict())
            if scheduler is None:
                scheduler = _has_scheduler(scope)
            missing = _missing(contents, scheduler)
            if not missing:
                continue
            fixes = ", ".join(FIXES[item] for item in missing)
            line, column = saved.lineno, saved.col_offset + 1
            weights_only = "model weights only" if isinstance(saved, ast.Call) and not list(_keys_and_values(saved)) \
                else "model weights"
            yield Problem("SPK403", line, column,
                          f"{dotted(node.func)}() saves {weights_only} without {' and '.join(missing)}: a run resumed "
                          f"from this checkpoint {consequence(missing)} — save a dict with {fixes}",
                          end_line=saved.end_lineno,
                          end_column=saved.end_col_offset + 1 if saved.end_col_offset is not None else None,
                          key=f"{dotted(node.func)}:{'+'.join(missing)}")
