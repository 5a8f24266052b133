"""SPK403: Python code that saves a training checkpoint which cannot resume training.

Reads the module's ``ast``: a ``torch.save`` / ``accelerator.save`` / DCP ``save`` whose saved
object is a dict literal (or a name bound to one in the same function, keys added later by
``ckpt[k] = …`` or ``ckpt.update(…)`` included) that holds a module's ``state_dict()`` but no
optimizer state, no step/epoch, or — when the function has a scheduler object — no scheduler state.
A final export is no checkpoint (saved after the training loop, under ``--save-model``, named
``best``/``final``/``export``, or written by a helper called only when the validation score improved),
and state saved beside it (``optimizer.pt``, a JSON of the step, the
step in the file name) or recomputed from the step (a stateless learning-rate function) is not missing.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator
from typing import NamedTuple

from spikelint.checks.checkpoint.callers import called_only_when_improved
from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem
from spikelint.checks.checkpoint.schedulers import SCHEDULER
from spikelint.checks.checkpoint.schedulers import SCHEDULER_TEXT
from spikelint.checks.checkpoint.schedulers import StepFunctions
from spikelint.checks.checkpoint.schedulers import has_scheduler
from spikelint.checks.checkpoint.schedulers import stateless_schedules
from spikelint.util.pytree import ast_nodes
from spikelint.util.pytree import child_nodes
from spikelint.util.pytree import dotted
from spikelint.util.pytree import last_name
from spikelint.util.pytree import scope_nodes

SAVE_RECEIVERS = lazy_regex(r"^(torch|torch\.distributed\.checkpoint|dcp|DCP|dist_cp|distcp|ptd_checkpoint|"
                            r"xm|torch_xla\.core\.xla_model)$|accelerator$|accelerate$")
DCP_MODULES = ("torch.distributed.checkpoint",)
OPTIMIZER = lazy_regex(r"optim|(^|[._])opt($|[._])|optimi[sz]er", re.IGNORECASE)
SCALER = lazy_regex(r"scaler|ema|swa|averaged", re.IGNORECASE)
# the state of the data pipeline or the RNG, saved beside the model (``train_batch_generator.state_dict()``)
DATA_STATE = lazy_regex(r"data_?loader|loader$|sampler|batch_?gen|data_?gen|dataset|data_?iter|iterator|(^|[._])rng|"
                        r"random_state|tokenizer|metric", re.IGNORECASE)
STEP = lazy_regex(r"step|epoch|iter|global_step|iteration|ntokens|tokens_seen|progress|trainer_state|train_state|"
                  r"batch_idx|batches_seen|samples_seen", re.IGNORECASE)
MODEL_STATE_FUNCTIONS = lazy_regex(r"(^|\.)(get_model_state_dict|get_state_dict)$")
OPTIMIZER_STATE_FUNCTIONS = lazy_regex(r"(^|\.)get_optimizer_state_dict$")


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
            elif not SCALER.search(receiver) and not DATA_STATE.search(receiver):
                model = True
        if OPTIMIZER.search(key) or (value_name and OPTIMIZER.search(value_name.rsplit(".", 1)[-1])):
            optimizer = True  # under an optimizer key, or the optimizer itself handed to a save helper
        if SCHEDULER.search(key):
            scheduler = True
        if STEP.search(key) or (value_name and STEP.search(value_name)):
            step = True
    return Contents(model, optimizer, step, scheduler)


class _Bindings:
    """Dict literals bound to names in one scope, and keys added to them afterwards."""

    def __init__(self, scope: ast.AST) -> None:
        self.assigned: dict[str, list[tuple[int, ast.AST]]] = {}
        self.added: dict[str, list[tuple[int, str | None, ast.AST]]] = {}  # None: a key computed at run time
        for node in scope_nodes(scope):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                if value is None:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append((node.lineno, value))
                    elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                        key = None if _computed_key(target.slice) else _key_text(target.slice)
                        self.added.setdefault(target.value.id, []).append((node.lineno, key, value))
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

    def latest(self, name: str, line: int) -> ast.AST | None:
        """The value last assigned to ``name`` at or before ``line``."""
        earlier = [(at, value) for at, value in self.assigned.get(name, []) if at <= line]
        return max(earlier, key=lambda item: item[0])[1] if earlier else None

    def pairs(self, name: str, line: int) -> list[tuple[str, ast.AST]] | None:
        """The keys of the dict ``name`` holds at ``line`` (``None`` when it is not a dict literal)."""
        earlier = [(at, value) for at, value in self.assigned.get(name, []) if at <= line]
        if not earlier:
            return None
        bound_at, value = max(earlier, key=lambda item: item[0])
        if not (isinstance(value, ast.Dict) or (isinstance(value, ast.Call) and dotted(value.func) == "dict")) \
                or spreads(value):
            return None
        pairs = list(_keys_and_values(value))
        for at, key, added in self.added.get(name, []):
            if bound_at <= at <= line:
                if key is None:
                    return None  # ``sd[key] = val.state_dict()`` in a loop: what it holds is not written here
                pairs.append((key, added))
                pairs.extend(_keys_and_values(added))
        return pairs


def _computed_key(key: ast.AST) -> bool:
    """A subscript key that is computed (``sd[key]``, ``sd[f"{name}"]``), not a literal or a CONSTANT's name."""
    if isinstance(key, ast.Constant):
        return False
    name = key.id if isinstance(key, ast.Name) else key.attr if isinstance(key, ast.Attribute) else None
    return name is None or not name.isupper()


def spreads(node: ast.AST) -> bool:
    """``{**other, "model": …}`` or ``dict(**other)``: the dict holds keys this code does not name."""
    if isinstance(node, ast.Dict):
        return any(key is None for key in node.keys)
    return isinstance(node, ast.Call) and any(keyword.arg is None for keyword in node.keywords)


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
    for node in scope_nodes(scope):
        if isinstance(node, ast.Name) and OPTIMIZER.search(node.id):
            return True
        if isinstance(node, ast.Attribute) and (OPTIMIZER.search(node.attr) or node.attr == "backward"):
            return True
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        return any(OPTIMIZER.search(a.arg) for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])
    return False


# --------------------------------------------------------------------------- a checkpoint that a resume reads

EXPORT_WORDS = frozenset(("best", "final", "export", "exported", "pretrained"))
OPTIMIZER_CLASS = lazy_regex(r"^(?:SGD|Adam\w*|RMSprop|Adagrad|Adadelta|Adafactor|LAMB|Lamb|Lion|LBFGS|"
                             r"Muon|Sophia\w*|FusedAdam|FusedLAMB|DeepSpeedCPUAdam|\w*Optimizer)$")
# scores in a file name: a model kept to be chosen by them, not a checkpoint a resume reads
METRIC_TEXT = lazy_regex(r"(?:^|[^a-z])(?:precision|recall|f1|acc|accuracy|auc|bleu|rouge|score|iou)(?:[^a-z]|$)",
                         re.IGNORECASE)
CHECKPOINT_WORDS = ("checkpoint", "ckpt", "step", "epoch", "iter")
MODEL_FILE = lazy_regex(r"(?:^|[/\\_.-])model\.(?:pt|pth|bin|safetensors)$", re.IGNORECASE)
WORD = lazy_regex(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
TRAIN_CALL = lazy_regex(r"^(?:train(?:ing)?(?:_one)?(?:_epoch|_step|_loop|_batch)?(?:_fn|_func)?|fit)$")
SAVE_MODEL_FLAGS = frozenset(("save_model", "savemodel", "save_final_model"))
PATH_KEYWORDS = frozenset(("f", "checkpoint_id", "storage_writer", "file_or_path", "path", "output_file"))
BESIDE_CALLS = frozenset(("save", "save_state", "dump", "safe_dump", "save_file", "save_json", "write_json",
                          "dump_json", "save_yaml", "write", "write_text"))
DUMPS = frozenset(("dumps", "dump", "safe_dump"))



def _training_call(call: ast.Call) -> bool:
    """``loss.backward()``, ``optimizer.step()``, ``scaler.step(optimizer)``, ``train_one_epoch(…)``."""
    name = last_name(call.func)
    if name == "backward" or TRAIN_CALL.match(name):
        return True
    if name == "step" and isinstance(call.func, ast.Attribute):
        return any(OPTIMIZER.search(dotted(part)) for part in [call.func.value, *call.args])
    return False


class _Training:
    """Where a function (or module) trains: each node's parent and its training loops."""

    def __init__(self, scope: ast.AST) -> None:
        self.parents: dict[int, ast.AST] = {}
        calls = []
        # a function defined in this one that trains (``def step_fn(…): loss.backward()``): a call of it trains
        nested = {node.name for node in scope_nodes(scope)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _trains(node)}
        for node in scope_nodes(scope):
            for child in child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Call) and (_training_call(node) or last_name(node.func) in nested):
                calls.append(node)
        self.loops: set[int] = set()
        self.loops_end = 0  # the last line of the last training loop
        for call in calls:
            for ancestor in self.ancestors(call):
                if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)):
                    self.loops.add(id(ancestor))
                    self.loops_end = max(self.loops_end, ancestor.end_lineno or ancestor.lineno)

    def ancestors(self, node: ast.AST) -> list[ast.AST]:
        found = []
        while id(node) in self.parents:
            node = self.parents[id(node)]
            found.append(node)
        return found


def _path_nodes(call: ast.Call, bindings: _Bindings) -> list[ast.AST]:
    """Where the save writes, and the values the names in it were last assigned (two hops)."""
    nodes: list[ast.AST] = [*call.args[1:2], *(item.value for item in call.keywords if item.arg in PATH_KEYWORDS)]
    for _ in range(2):
        for node in list(nodes):
            for name in ast.walk(node):
                if isinstance(name, ast.Name):
                    value = bindings.latest(name.id, call.lineno)
                    if value is not None and all(value is not seen for seen in nodes):
                        nodes.append(value)
    return nodes


def _stateless_optimizer(module: ast.Module) -> bool:
    """Every optimizer the file builds is plain SGD without momentum, whose ``state_dict()`` holds no
    state: there is nothing of it for a checkpoint to keep."""
    built = [node for node in ast_nodes(module) if isinstance(node, ast.Call)
             and OPTIMIZER_CLASS.search(last_name(node.func))]
    return bool(built) and all(last_name(node.func) == "SGD" and not any(
        item.arg == "momentum" and not (isinstance(item.value, ast.Constant) and not item.value.value)
        for item in node.keywords) and len(node.args) < 3 for node in built)


def _listed(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``: what a checkpoint lacks, for messages."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _is_export(call: ast.Call, saved: ast.AST, training: _Training, bindings: _Bindings) -> bool:
    """A final export rather than a checkpoint a resume reads: after the training loop, under a
    ``--save-model`` flag, or named ``best``/``final``/``export``/``pretrained``/``model.pt`` (a
    ``checkpoint``/``ckpt``/``step``/``epoch`` name inside the training loop stays a checkpoint)."""
    chain = [call, *training.ancestors(call)]
    for node in chain:
        if isinstance(node, ast.If) and any(isinstance(part, (ast.Name, ast.Attribute))
                                            and last_name(part).lower() in SAVE_MODEL_FLAGS
                                            for part in ast.walk(node.test)):
            return True
    names = [saved.id] if isinstance(saved, ast.Name) else []
    files = []
    for node in _path_nodes(call, bindings):
        for part in ast.walk(node):
            if isinstance(part, (ast.Name, ast.Attribute)):
                names.append(last_name(part))
            elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                files.append(part.value)
    words = {word.lower() for text in [*names, *files] for word in WORD.findall(text)}
    if any(METRIC_TEXT.search(text) for text in [*names, *files]) and \
            not any(word.startswith(("ckpt", "checkpoint")) for word in words):
        return True  # ``fold-2_epoch-3_precision-0.91_f1-0.88.pt``: named by its scores, kept to choose a model
    in_loop = any(id(node) in training.loops for node in chain)
    if (words & EXPORT_WORDS or any(MODEL_FILE.search(text) for text in files)) and not (
            in_loop and any(word.startswith(CHECKPOINT_WORDS) for word in words)):
        return True
    if not training.loops_end or call.lineno <= training.loops_end:
        return False
    # after the last training loop, unless an interruption handler saves it for the next run
    for child, parent in zip(chain, chain[1:]):
        if isinstance(parent, ast.ExceptHandler) or (
                isinstance(parent, ast.Try) and any(child is statement for statement in parent.finalbody)):
            return False
    return True


def _step_in_name(call: ast.Call, bindings: _Bindings) -> bool:
    """The step is in the file name: ``f"ckpt_{step}.pt"``, ``"iter_{}".format(it)``, ``"e%d" % epoch``."""
    for node in _path_nodes(call, bindings):
        for inner in ast.walk(node):
            parts: list[ast.AST] = []
            if isinstance(inner, ast.FormattedValue):
                parts.append(inner.value)
            elif isinstance(inner, ast.Call) and last_name(inner.func) in ("format", "str"):
                parts.extend([*inner.args, *(item.value for item in inner.keywords)])
            elif isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mod):
                parts.append(inner.right)
            for part in parts:
                for leaf in ast.walk(part):
                    name = last_name(leaf) if isinstance(leaf, (ast.Name, ast.Attribute)) else ""
                    if name and (name == "it" or STEP.search(name)):
                        return True
    return False


# a training-state file written beside the weights (``trial_state.pkl``, ``trainer_state.json``): the step
STATE_FILE = lazy_regex(r"(?:^|[/_.-])(?:trial|trainer|training|train|run)_?state\.\w+$", re.IGNORECASE)
# a checkpoint API given the run's metadata (``store_path(dict(steps_completed=…))``, ``save_checkpoint(…, step=…)``)
CHECKPOINT_CALL = lazy_regex(r"checkpoint|store_path|^upload$", re.IGNORECASE)


def _saved_beside(call: ast.Call, scope: ast.AST, bindings: _Bindings) -> Contents:
    """What the function's other saves hold: ``torch.save(optimizer.state_dict(), ".../optimizer.pt")``,
    ``json.dump({"step": step}, f)``, ``accelerator.save_state(…)``."""
    optimizer = scheduler = False
    # a training-state file named anywhere in the function (``path.joinpath("trial_state.pkl").open("wb")``)
    step = any(isinstance(node, ast.Constant) and isinstance(node.value, str) and STATE_FILE.search(node.value)
               for node in scope_nodes(scope))
    pairs: list[tuple[str, ast.AST]] = []
    for node in scope_nodes(scope):
        if not isinstance(node, ast.Call) or node is call:
            continue
        name = last_name(node.func)
        if name not in BESIDE_CALLS and not CHECKPOINT_CALL.search(name):
            continue
        if name == "save_state":  # accelerate's full state: optimizer and scheduler included
            optimizer = scheduler = True
        values = [*node.args, *(item.value for item in node.keywords)]
        if name in ("write", "write_text"):  # f.write(json.dumps({...}))
            values = [inner for value in values if isinstance(value, ast.Call) and last_name(value.func) in DUMPS
                      for inner in value.args]
        for value in values:
            pairs.append(("", value))
            pairs.extend(_keys_and_values(value))
            if isinstance(value, ast.Name):
                pairs.extend(bindings.pairs(value.id, node.lineno) or [])
            for part in ast.walk(value):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    optimizer = optimizer or bool(OPTIMIZER.search(part.value))
                    scheduler = scheduler or bool(SCHEDULER.search(part.value))
                    step = step or bool(STATE_FILE.search(part.value))
    found = _contents(pairs)
    return Contents(False, optimizer or found.optimizer, step or found.step, scheduler or found.scheduler)


def _still_missing(missing: list[str], call: ast.Call, scope: ast.AST, bindings: _Bindings) -> list[str]:
    """What is missing once the step in the file name and the state saved beside it are counted."""
    if "step/epoch" in missing and _step_in_name(call, bindings):
        missing = [item for item in missing if item != "step/epoch"]
    if not missing:
        return missing
    beside = _saved_beside(call, scope, bindings)
    covered = {"optimizer state": beside.optimizer, "step/epoch": beside.step, "LR scheduler state": beside.scheduler}
    return [item for item in missing if not covered[item]]


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
    step_functions: StepFunctions | None = None
    for scope, saves in _saves_by_scope(module, aliases):
        bindings: _Bindings | None = None
        training: _Training | None = None
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
                pairs = None if spreads(saved) else list(_keys_and_values(saved)) or None
            else:
                pairs = None
            if not pairs:
                continue
            contents = _contents(pairs)
            if not contents.model:
                continue  # not a training checkpoint (no module state_dict())
            if scheduler is None:
                # nothing scheduler-like anywhere in the file (most scripts that save): no walk needed
                scheduler = bool(SCHEDULER_TEXT.search(document.text))
                if scheduler:
                    step_functions = step_functions or stateless_schedules(module, document, ctx.project)
                    scheduler = has_scheduler(scope, step_functions)
            missing = _missing(contents, scheduler)
            if "optimizer state" in missing and _stateless_optimizer(module):
                missing = [item for item in missing if item != "optimizer state"]
            if not missing:
                continue
            bindings = bindings or _Bindings(scope)
            training = training or _Training(scope)
            if _is_export(node, saved, training, bindings) or called_only_when_improved(scope, module):
                continue
            missing = _still_missing(missing, node, scope, bindings)
            if not missing:
                continue
            fixes = ", ".join(FIXES[item] for item in missing)
            line, column = saved.lineno, saved.col_offset + 1
            weights_only = "only the model's weights" if isinstance(saved, ast.Call) and \
                not list(_keys_and_values(saved)) else "the model's weights"
            yield Problem("SPK403", line, column,
                          f"{dotted(node.func)}() saves {weights_only} but no {_listed(missing)}: a run resumed "
                          f"from this checkpoint {consequence(missing)} — save a dict with {fixes}",
                          end_line=saved.end_lineno,
                          end_column=saved.end_col_offset + 1 if saved.end_col_offset is not None else None,
                          key=f"{dotted(node.func)}:{'+'.join(missing)}")
