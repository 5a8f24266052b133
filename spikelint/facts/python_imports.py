"""Names a Python module imports from other modules of the scanned tree, with what those modules define.

``from pkg.sched import cosine_lr`` (or ``from .sched import cosine_lr``): the defining module is the tree's
file at that whole dotted path (a relative import counts from the importing file's folder). It is read and
parsed once per run and asked what it defines; every importing file still records it as read, and its name
as looked up, for the result cache.
"""

from __future__ import annotations

import ast
import posixpath
from typing import Callable
from typing import cast

from spikelint.discovery.project import Project
from spikelint.facts.entry_script import module_source
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import SourceFile
from spikelint.util.pytree import ast_nodes

Select = Callable[[ast.Module], frozenset[str]]


def imported_names(module: ast.Module, document: Document, project: Project, key: str, select: Select,
                   among: set[str]) -> set[str]:
    """The names of ``among`` that ``module`` imports (as it binds them) and that ``select`` picks in their
    defining module of the tree; ``key`` names ``select`` in the run's memo."""
    found: set[str] = set()
    for node in ast_nodes(module):
        if not isinstance(node, ast.ImportFrom) or (node.module is None and not node.level) or \
                not any((alias.asname or alias.name) in among for alias in node.names):
            continue
        source = _defining_module(node, document, project)
        if source is None:
            continue
        defined = _defined(source, project, key, select)
        found.update(alias.asname or alias.name for alias in node.names
                     if alias.name in defined and (alias.asname or alias.name) in among)
    return found


def _defining_module(node: ast.ImportFrom, document: Document, project: Project) -> SourceFile | None:
    parts = node.module.split(".") if node.module else []
    if not node.level:
        project.looked_up.add(parts[-1] + ".py")
        return module_source("/".join(parts) + ".py", project)
    folder = posixpath.dirname(document.path).split("/") if "/" in document.path else []
    if node.level > 1:
        folder = folder[:len(folder) - (node.level - 1)] if len(folder) >= node.level - 1 else []
    if not parts:
        return None  # ``from . import x``: x is a module, not a function
    path = "/".join([*folder, *parts]) + ".py"
    project.looked_up.add(posixpath.basename(path))
    return next((source for source in project.named(posixpath.basename(path))
                 if source.path == path and source.kind == FileKind.PYTHON), None)


def _defined(source: SourceFile, project: Project, key: str, select: Select) -> frozenset[str]:
    memo = f"python_imports.{key}:{source.path}"
    known = cast("frozenset[str] | None", project.derived.get(memo))
    if known is None:
        try:
            tree = ast.parse(project.text(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        known = select(tree) if tree is not None else frozenset()
        project.derived[memo] = known
    project.touched.add(source.path)
    return known
