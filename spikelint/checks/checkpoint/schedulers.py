"""Whether a function holds a learning-rate scheduler with state a checkpoint must keep.

A schedule that is a function of the step (``lr = get_lr(it)``, ``lr_schedule[it]``, a lambda, or what a
factory such as open_clip's ``cosine_lr(optimizer, …)`` returns: ``_lr_adjuster(step)``) is recomputed from
the saved step on resume and holds no state; a ``torch.optim.lr_scheduler`` object does.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from spikelint.discovery.project import Project
from spikelint.facts.python_imports import imported_names
from spikelint.model import Document
from spikelint.util.lazyre import lazy_regex
from spikelint.util.pytree import ast_nodes
from spikelint.util.pytree import dotted
from spikelint.util.pytree import scope_nodes

SCHEDULER = lazy_regex(r"sched", re.IGNORECASE)
SCHEDULER_FACTORIES = lazy_regex(r"sched|LR$|LambdaLR|OneCycle|CosineAnnealing|StepLR|ReduceLROnPlateau|"
                                 r"get_.*schedule", re.IGNORECASE)
# what the file's text holds wherever a scheduler can exist (a cheap look before walking a scope)
SCHEDULER_TEXT = lazy_regex(r"sched|lr\s*\(|onecycle|cosineannealing|reducelronplateau", re.IGNORECASE)


class StepFunctions(NamedTuple):
    """What a module calls a function of the step: its own functions and lambdas, and the factories (its own
    or imported from a module of the tree) that return one."""

    functions: frozenset[str]
    factories: frozenset[str]


def stateless_schedules(module: ast.Module, document: Document, project: Project) -> StepFunctions:
    functions: set[str] = set()
    wanted: set[str] = set()  # what a scheduler-like name is bound to: only that needs resolving
    for node in ast_nodes(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            functions.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                and any(isinstance(target, ast.Name) and SCHEDULER.search(target.id) for target in node.targets):
            wanted.add(node.value.func.id)
    if not wanted:
        return StepFunctions(frozenset(functions), frozenset())
    factories = (step_function_factories(module) & wanted) | imported_names(
        module, document, project, "step-function-factories", step_function_factories, wanted)
    return StepFunctions(frozenset(functions), frozenset(factories))


def step_function_factories(module: ast.Module) -> frozenset[str]:
    """The module's top-level functions whose every return is a function: a nested ``def`` or a lambda."""
    found = set()
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _returns_a_function(node):
            found.add(node.name)
    return frozenset(found)


def _returns_a_function(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    nested = {node.name for node in function.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    returned = [node.value for node in scope_nodes(function) if isinstance(node, ast.Return) and node.value is not None]
    return bool(returned) and all(isinstance(value, ast.Lambda) or isinstance(value, ast.Name) and value.id in nested
                                  for value in returned)


def _made_by_factories(nodes: list[ast.AST], factories: frozenset[str]) -> set[str]:
    """Names the scope binds only to ``None`` or to what a step-function factory returns."""
    made: set[str] = set()
    other: set[str] = set()
    for node in nodes:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        by_factory = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in factories
        none = isinstance(value, ast.Constant) and value.value is None
        for target in targets:
            if isinstance(target, ast.Name) and by_factory:
                made.add(target.id)
            elif isinstance(target, ast.Name) and not none:
                other.add(target.id)
    return made - other


# what holds a run's settings: ``args.lr_scheduler == "cosine"`` names a schedule, it is not one
SETTINGS = frozenset(("args", "cfg", "config", "conf", "opt", "opts", "options", "hparams", "hp", "params", "flags",
                      "FLAGS", "training_args", "train_args", "train_config", "run_config"))


def _setting(node: ast.Attribute) -> bool:
    root: ast.AST = node
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in SETTINGS


def has_scheduler(scope: ast.AST, step: StepFunctions) -> bool:
    """A learning-rate scheduler object exists in the function: a parameter, a name or a factory call.

    A schedule that is a stateless function of the step (``lr = get_lr(it)``, ``lr_schedule[it]``,
    a lambda, what ``cosine_lr(…)`` returns) is recomputed from the saved step on resume: it holds no
    state to save."""
    nodes = scope_nodes(scope)
    local_functions = step.functions | _made_by_factories(nodes, step.factories) if step.factories \
        else step.functions
    named = [node for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
             and SCHEDULER.search(node.id) and node.id not in local_functions
             or isinstance(node, ast.Attribute) and SCHEDULER.search(node.attr) and not _setting(node)]
    tables: set[str] = set()
    if named:
        # nodes used as a function or a table: ``lr_schedule(step)``, ``lr_schedule[it]``
        applied = {id(node.func) for node in nodes if isinstance(node, ast.Call)} | \
            {id(node.value) for node in nodes if isinstance(node, ast.Subscript)}
        for usage in named:
            if id(usage) not in applied:
                return True
            if isinstance(usage, ast.Name):
                tables.add(usage.id)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
        if any(SCHEDULER.search(name) and name not in local_functions and name not in tables for name in names):
            return True
    table_values = {id(node.value) for node in nodes if isinstance(node, ast.Assign)
                    and any(isinstance(target, ast.Name) and target.id in tables for target in node.targets)}
    for node in nodes:
        if isinstance(node, ast.Call) and SCHEDULER_FACTORIES.search(dotted(node.func).split(".")[-1] or ""):
            name = dotted(node.func)
            if id(node) in table_values or (isinstance(node.func, ast.Name) and name in local_functions):
                continue
            if "lr_scheduler" in name or "schedul" in name.lower():
                return True
    return False
