"""Hub fetches and pickle loads in a Python module, read from its ``ast``.

:func:`hub_uses` finds the calls that download a model, tokenizer or dataset by id
(``from_pretrained``, ``pipeline``, ``load_dataset``, ``snapshot_download`` …) with the
``revision`` and ``trust_remote_code`` they pass (the latter only where it runs hub code: not on a
concrete class that transformers ships); :func:`unsafe_loads` finds the loads that
unpickle a checkpoint-like file.  A value counts when it is a literal or a name whose latest
binding in the same scope is one; anything else (a parameter, an attribute, an f-string, a
``**kwargs`` that may carry the revision) is unknown and never reported.  A function also reads the module's constants (a name assigned once
at module level and not bound in the function).
"""

from __future__ import annotations

import ast
import re
from typing import Iterator
from typing import NamedTuple

from spikelint.util.pytree import dotted
from spikelint.facts.hubref import HubUse
from spikelint.facts.hubref import is_hub_id
from spikelint.facts.hubref import is_sha
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.util.pytree import ast_nodes
from spikelint.util.pytree import child_nodes

UNKNOWN = object()  # a value that cannot be known statically


class Scope:
    """The calls and name bindings of one function, class body or module (nested ones excluded)."""

    def __init__(self, node: ast.AST, module: Scope | None = None) -> None:
        self.node = node
        self.module = module  # the module's scope, for constants a function reads (``BASE = "org/x"``)
        self.calls: list[ast.Call] = []
        # name -> ((line, column) where the binding takes effect, value or None)
        self.bindings: dict[str, list[tuple[tuple[int, int], ast.AST | None]]] = {}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             *([arguments.vararg] if arguments.vararg else []),
                             *([arguments.kwarg] if arguments.kwarg else [])]:
                self.bind(argument.arg, (0, 0), None)

    def bind(self, name: str, at: tuple[int, int], value: ast.AST | None) -> None:
        self.bindings.setdefault(name, []).append((at, value))

    def value_of(self, name: str, line: int, column: int | None = None) -> ast.AST | None:
        """The value of the binding of ``name`` that reaches ``line`` (at ``column``; anywhere on the line
        when not given): the last one before it, an assignment counting from the end of its value, so
        that ``p = os.path.join(p, "x")`` reads the ``p`` before it (``None``: unknown)."""
        bound = self.bindings.get(name)
        if bound is None and self.module is not None:
            written = self.module.bindings.get(name, [])
            return written[0][1] if len(written) == 1 else None  # a module constant, assigned once
        here = (line, column if column is not None else 1 << 30)
        earlier = [(at, value) for at, value in bound or [] if at <= here]
        return max(earlier, key=lambda item: item[0])[1] if earlier else None


def _start(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _end(node: ast.AST) -> tuple[int, int]:
    line, column = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if not isinstance(line, int):
        line = _start(node)[0]
    return line, column if isinstance(column, int) else 0


def scopes(module: ast.Module) -> list[Scope]:
    """Every scope of the module, in one walk, kept on the module: the hub check and the unsafe-load check both
    read them (syntax trees are not changed after parsing)."""
    found: list[Scope] | None = module.__dict__.get("_spikelint_scopes")
    if found is None:
        found = _walked_scopes(module)
        module.__dict__["_spikelint_scopes"] = found
    return found


def _walked_scopes(module: ast.Module) -> list[Scope]:
    top = Scope(module)
    found = [top]
    stack: list[tuple[ast.AST, Scope]] = [(child, top) for child in child_nodes(module)]
    while stack:
        node, scope = stack.pop()
        inner = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope.bind(node.name, _start(node), None)
            inner = Scope(node, top)
            found.append(inner)
        elif isinstance(node, ast.Call):
            scope.calls.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    plain = not isinstance(node, ast.AugAssign) and node.value is not None
                    scope.bind(target.id, _end(node), node.value if plain else None)
                else:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            scope.bind(name.id, _end(node), None)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name):
                    scope.bind(item.optional_vars.id, _end(item.context_expr), item.context_expr)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    scope.bind(name.id, _start(node.target), None)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            # the comprehension's own variables, from where it starts (its element is written before them)
            for generator in node.generators:
                for name in ast.walk(generator.target):
                    if isinstance(name, ast.Name):
                        scope.bind(name.id, _start(node), None)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            scope.bind(node.target.id, _end(node.value), node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                scope.bind((alias.asname or alias.name).split(".")[0], _start(node), None)
        stack.extend((child, inner) for child in child_nodes(node))
    return found


def literal(node: ast.AST | None, scope: Scope, line: int) -> object:
    """A constant, or a name whose latest binding in the scope is one; else :data:`UNKNOWN`."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        value = scope.value_of(node.id, line)
        if isinstance(value, ast.Constant):
            return value.value
    return UNKNOWN


def located(node: ast.AST) -> Located:
    line = getattr(node, "lineno", 1)
    column = getattr(node, "col_offset", 0) + 1
    end_column = getattr(node, "end_col_offset", None)
    return Located(None, line, column, getattr(node, "end_lineno", None),
                   end_column + 1 if end_column is not None else None)


def keyword(call: ast.Call, *names: str) -> ast.keyword | None:
    for item in call.keywords:
        if item.arg in names:
            return item
    return None


def argument(call: ast.Call, position: int, *names: str) -> ast.expr | None:
    found = keyword(call, *names)
    if found is not None:
        return found.value
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position]
    return None


# --------------------------------------------------------------------------- hub fetches

HUB_HEADS = ("pipeline", "transformers.pipeline")
SENTENCE_MODELS = ("SentenceTransformer", "CrossEncoder", "SparseEncoder")
DOWNLOADS = ("snapshot_download", "hf_hub_download")


class _Target(NamedTuple):
    """Which argument holds the id, and how messages name the call."""

    ids: list[ast.expr]
    how: str
    dataset: bool = False
    kind: str = "hf"  # "hf", "torch.hub", "timm"


def _target(call: ast.Call, name: str) -> _Target | None:
    head, _, last = name.rpartition(".")
    last = last or name
    shown = f"{name}()" if len(name) <= 60 else f"{last}()"
    if last == "from_pretrained":
        receiver = head.rpartition(".")[2]
        if receiver.startswith("PeftModel"):
            found = argument(call, 1, "model_id")
        else:
            found = argument(call, 0, "pretrained_model_name_or_path", "model_name_or_path", "model_id")
        return _Target([found] if found is not None else [], shown)
    if name in HUB_HEADS:
        ids = [value for value in (argument(call, 1, "model"), argument(call, 99, "tokenizer")) if value is not None]
        return _Target(ids, shown)
    if last in SENTENCE_MODELS:
        found = argument(call, 0, "model_name_or_path", "model_name")
        return _Target([found] if found is not None else [], shown)
    if last == "load_dataset" and head in ("", "datasets"):
        found = argument(call, 0, "path")
        return _Target([found] if found is not None else [], shown, dataset=True)
    if last in DOWNLOADS:
        found = argument(call, 0, "repo_id")
        repo_type = keyword(call, "repo_type")
        dataset = repo_type is not None and isinstance(repo_type.value, ast.Constant) and \
            repo_type.value.value == "dataset"
        return _Target([found] if found is not None else [], shown, dataset=dataset)
    if last == "create_model" and head.endswith("timm"):
        found = argument(call, 0, "model_name")
        return _Target([found] if found is not None else [], shown, kind="timm")
    if name in ("torch.hub.load", "hub.load"):
        found = argument(call, 0, "repo_or_dir")
        return _Target([found] if found is not None else [], shown, kind="torch.hub")
    return None


def _revision(call: ast.Call, scope: Scope) -> tuple[bool, str | None]:
    """(pinned, the non-sha revision as written); an unknown revision counts as pinned."""
    found = keyword(call, "revision")
    if found is None:
        return False, None
    value = literal(found.value, scope, call.lineno)
    if value is UNKNOWN or value is None:
        return value is UNKNOWN, None
    return is_sha(value), None if is_sha(value) else str(value)


def _hub_id(kind: str, text: str) -> tuple[str, bool, str | None] | None:
    """(id, pinned, revision) from the written id; ``None`` when it is not a hub id."""
    if kind == "timm":
        for prefix in ("hf-hub:", "hf_hub:"):
            if text.startswith(prefix):
                repo, _, ref = text[len(prefix):].partition("@")
                return (repo, is_sha(ref), ref or None) if is_hub_id(repo) else None
        return None
    if kind == "torch.hub":
        repo, _, ref = text.partition(":")
        return (repo, is_sha(ref), None if is_sha(ref) else (ref or None)) if is_hub_id(repo) else None
    return (text, False, None) if is_hub_id(text) else None


def hub_uses(module: ast.Module) -> list[HubUse]:
    """Every call that fetches a literal hub id, in source order."""
    if not any(isinstance(node, ast.Call) for node in ast_nodes(module)):
        return []
    aliases = _aliases(module)
    found: list[HubUse] = []
    for scope in scopes(module):
        for call in scope.calls:
            found.extend(_call_uses(call, scope, aliases))
    return sorted(found, key=lambda use: (use.where.line, use.where.column))


def runs_no_hub_code(name: str, aliases: dict[str, str]) -> bool:
    """``Idefics2ForConditionalGeneration.from_pretrained(…, trust_remote_code=True)``: a class that
    transformers ships (imported from it, not an ``Auto*`` factory) builds the model from its own
    code, so ``trust_remote_code`` has no hub code to run; only the ``Auto*`` classes and
    ``pipeline`` import a repository's modelling code."""
    head, _, last = name.rpartition(".")
    if last != "from_pretrained" or not head:
        return False
    module, _, cls = _resolved(head, aliases).rpartition(".")
    return (module == "transformers" or module.startswith("transformers.")) and cls[:1].isupper() \
        and not cls.startswith("Auto")


def _call_uses(call: ast.Call, scope: Scope, aliases: dict[str, str]) -> Iterator[HubUse]:
    name = dotted(call.func)
    if not name:
        return
    target = _target(call, name)
    if target is None or not target.ids:
        return
    if any(item.arg is None for item in call.keywords):
        return  # ``**kwargs`` may carry the revision or local_files_only
    offline = keyword(call, "local_files_only")
    if offline is not None and literal(offline.value, scope, call.lineno) is not False:
        return
    if target.kind == "torch.hub":
        source = keyword(call, "source")
        if source is not None and literal(source.value, scope, call.lineno) != "github":
            return
    trust_keyword = keyword(call, "trust_remote_code")
    trust = None
    if trust_keyword is not None and literal(trust_keyword.value, scope, call.lineno) is True \
            and not runs_no_hub_code(name, aliases):
        trust = located(trust_keyword)
    pinned, revision = _revision(call, scope) if target.kind == "hf" else (False, None)
    for node in target.ids:
        text = literal(node, scope, call.lineno)
        if not isinstance(text, str):
            continue
        parsed = _hub_id(target.kind, text.strip())
        if parsed is None:
            continue
        hub_id, id_pinned, id_revision = parsed
        where = located(node)._replace(value=text)
        yield HubUse(hub_id, where, pinned or id_pinned, revision or id_revision, trust, target.how, target.dataset)


# --------------------------------------------------------------------------- unsafe loads

LOADERS = {
    "pickle.load", "pickle.loads", "cPickle.load", "cPickle.loads", "_pickle.load", "_pickle.loads",
    "dill.load", "dill.loads", "cloudpickle.load", "cloudpickle.loads", "joblib.load",
    "pandas.read_pickle", "torch.load", "numpy.load",
}
WRITER = lazy_regex(r"^(save|dump|savez|savez_compressed|to_pickle|save_checkpoint|save_state)$")
# a checkpoint folder, a run folder (resume, output), a download, a hub file, a URL
CHECKPOINT_LIKE = lazy_regex(r"ckpt|checkpoint|model|weights|download|cache|resume|run_dir|output_dir|"
                             r"https?://|urlopen|urlretrieve|"
                             r"requests\.get|hf_hub|snapshot_download", re.IGNORECASE)
IN_MEMORY = lazy_regex(r"\bdumps\(")  # ``pickle.loads(pickle.dumps(model))``: a round trip, no file
OWN_FILE = lazy_regex(r"cache|offset", re.IGNORECASE)  # a file the module keeps for itself
ANY_OWN = "*"  # the module has a cache writer of its own: a load from its own cache attribute reads what it wrote
WRITE_MODE = lazy_regex(r"[rbt+]*[wax][rbt+]*")  # "wb", "ab", "w+", "xb"


class UnsafeLoad(NamedTuple):
    """A load that unpickles a checkpoint-like file."""

    function: str  # resolved: "torch.load", "pickle.load" …
    where: Located
    path_text: str  # the path as written (shortened), for the message
    reason: str  # what makes it unsafe: "weights_only=False", "allow_pickle=True", "pickle"


def _aliases(module: ast.Module) -> dict[str, str]:
    """What each imported name stands for (``np`` -> ``numpy``), kept on the module as :func:`scopes` is."""
    kept: dict[str, str] | None = module.__dict__.get("_spikelint_aliases")
    if kept is not None:
        return kept
    found: dict[str, str] = {}
    module.__dict__["_spikelint_aliases"] = found
    for node in ast_nodes(module):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _resolved(name: str, aliases: dict[str, str]) -> str:
    head, dot, tail = name.partition(".")
    full = aliases.get(head, head) + dot + tail
    return full.replace("np.", "numpy.", 1) if full.startswith("np.") else full.replace("pd.", "pandas.", 1) \
        if full.startswith("pd.") else full


def _path_texts(node: ast.AST | None, scope: Scope, line: int, depth: int = 0) -> list[str]:
    """The written path and what it was built from: a name's binding, ``open(x)``'s ``x``, ``f.read()``'s ``f``."""
    if node is None or depth > 3:
        return []
    texts = [ast.unparse(node)]
    inner: ast.AST | None = None
    if isinstance(node, ast.Name):  # the binding that reaches this name, not the load's whole line
        inner = scope.value_of(node.id, node.lineno, node.col_offset) if hasattr(node, "lineno") \
            else scope.value_of(node.id, line)
    elif isinstance(node, ast.Call):
        name = dotted(node.func)
        if name in ("open", "io.open", "gzip.open", "bz2.open", "lzma.open", "fsspec.open", "Path.open") and node.args:
            inner = node.args[0]
        elif isinstance(node.func, ast.Attribute):
            inner = node.func.value  # f.read(), Path(p).open(), BytesIO(x)
        elif node.args:
            inner = node.args[0]
    elif isinstance(node, ast.Attribute):
        inner = node.value
    return texts + _path_texts(inner, scope, line, depth + 1)


def _written_before(scope: Scope, texts: list[str], line: int) -> bool:
    """The same scope wrote this file earlier (``torch.save(x, p)``, ``trainer.save_checkpoint(p)``,
    ``pickle.dump(x, f)`` of ``open(p, "wb")`` … then the load of ``p``)."""
    wanted = set(texts[1:]) or set(texts)
    for call in scope.calls:
        if call.lineno > line:
            continue
        name = dotted(call.func)
        if not WRITER.search(name.rpartition(".")[2] or name):
            continue
        written = [*call.args, *(item.value for item in call.keywords if item.arg in ("f", "file", "filename", "path"))]
        if any(wanted & set(_path_texts(value, scope, call.lineno)) for value in written):
            return True
    return False


def _own_names(node: ast.AST | None, scope: Scope, depth: int = 0) -> set[str]:
    """The cache or offsets names a path is built from (``self.cache_dir``, ``offsets_file``,
    ``"cached_train.pkl"``), through the bindings of the names in it."""
    found: set[str] = set()
    if node is None or depth > 3:
        return found
    for part in ast.walk(node):
        if isinstance(part, (ast.Name, ast.Attribute)):
            text = dotted(part)
            if text and OWN_FILE.search(text):
                found.add(text)
            if isinstance(part, ast.Name):
                found |= _own_names(scope.value_of(part.id, part.lineno, part.col_offset), scope, depth + 1)
        elif isinstance(part, ast.Constant) and isinstance(part.value, str) and OWN_FILE.search(part.value):
            found.add(part.value)
    return found


def _own_writes(found: list[Scope]) -> set[str]:
    """The cache and offsets names the module writes to: ``pickle.dump(x, open(cache_file, "wb"))``,
    ``torch.save(x, os.path.join(self.cache_dir, …))``."""
    written: set[str] = set()
    for scope in found:
        for call in scope.calls:
            func = call.func
            last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if last in ("open", "write_bytes") or WRITER.search(last):
                if last == "open":  # open(p, "wb"), Path(p).open("wb"), gzip.open(p, mode="wb")
                    modes = [*call.args[:2], *(item.value for item in call.keywords if item.arg == "mode")]
                    if not any(isinstance(mode, ast.Constant) and isinstance(mode.value, str)
                               and WRITE_MODE.fullmatch(mode.value) for mode in modes):
                        continue
                for value in [*call.args, *(item.value for item in call.keywords)]:
                    written |= _own_names(value, scope)
                    if isinstance(value, ast.Attribute):  # open(self.checkpoint_file, "wb"): this very attribute
                        written.add(ast.unparse(value))
                if isinstance(call.func, ast.Attribute) and last in ("open", "write_bytes"):
                    written |= _own_names(call.func.value, scope)  # Path(cache_file).open("wb")
                if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and OWN_FILE.search(scope.node.name):
                    written.add(ANY_OWN)  # ``def _write_to_cache(self, path, data)``: the module's cache writer
    return written


def unsafe_loads(module: ast.Module) -> list[UnsafeLoad]:
    """Pickle-based loads of checkpoint-like paths, in source order."""
    aliases = _aliases(module)
    if not any(isinstance(node, ast.Call) and _resolved(dotted(node.func), aliases) in LOADERS
               for node in ast_nodes(module)):
        return []  # most modules load nothing that unpickles: no walk of their scopes
    found: list[UnsafeLoad] = []
    every = scopes(module)
    own_writes: set[str] | None = None
    for scope in every:
        for call in scope.calls:
            name = _resolved(dotted(call.func), aliases)
            if name not in LOADERS:
                continue
            if name == "torch.load":
                flag = keyword(call, "weights_only")
                if flag is None or literal(flag.value, scope, call.lineno) is not False:
                    continue
                reason = "weights_only=False"
            elif name == "numpy.load":
                flag = keyword(call, "allow_pickle")
                if flag is None or literal(flag.value, scope, call.lineno) is not True:
                    continue
                reason = "allow_pickle=True"
            else:
                reason = "pickle"
            path = argument(call, 0, "f", "file", "filename", "filepath_or_buffer", "path")
            texts = _path_texts(path, scope, call.lineno)
            if not any(CHECKPOINT_LIKE.search(text) for text in texts) or any(IN_MEMORY.search(t) for t in texts):
                continue
            if _written_before(scope, texts, call.lineno):
                continue
            own = _own_names(path, scope)
            own_writes = _own_writes(every) if own_writes is None else own_writes
            if own and (own & own_writes or ANY_OWN in own_writes and any(name.startswith("self.") for name in own)):
                continue  # the module's own cache or offsets file, written by its code (before or after)
            if own_writes.intersection(texts):
                continue  # read back from the attribute the module writes to (``self.checkpoint_file``)
            text = next(text for text in texts if CHECKPOINT_LIKE.search(text))
            shown = text if len(text) <= 60 else text[:57] + "..."
            found.append(UnsafeLoad(name, located(call), shown, reason))
    return sorted(found, key=lambda load: (load.where.line, load.where.column))
