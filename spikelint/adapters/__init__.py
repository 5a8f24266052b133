"""Adapters: each workload format is translated into the one :class:`Workload` model.

``workloads_in`` picks the adapter from the document's kind and shape (a table, not a
chain of branches); adapters never raise on documents of the wrong shape.

Conventions every adapter follows:

- numbers are numbers: ``gpus``/``gpus_total`` (float or int), ``retries``, ``grace_period``,
  ``ttl`` and ``deadline`` in seconds (Run:ai durations such as ``5m`` are converted), each
  located where it is written; a restart policy that restarts without a count
  (``OnFailure``/``Always``/``ExitCode``) is ``retries`` = :data:`UNBOUNDED_RETRIES`;
- ``default_retries`` is what the platform applies when ``retries`` is not written (Job 6,
  Volcano 3, Run:ai training 6);
- a block scalar (``|``) command word is located at its first content line;
- a ``runai`` flag whose whole value is one variable assigned earlier in the script is located
  at that assignment, where the value is written;
- ``platform`` is the form's typed record (``adapters/platforms.py``): the object's lines, API
  group, Run:ai class, whether storage is attached by something the file only names, and the
  words messages use for the object and its settings; ``slurm`` holds what only a batch script
  has. docs/model.md documents every field.
"""

from __future__ import annotations

from typing import Callable

from spikelint.adapters.common import UNBOUNDED_RETRIES
from spikelint.adapters.common import SourceLines
from spikelint.adapters.common import as_map
from spikelint.adapters.common import scalar_text
from spikelint.config import Config
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Node
from spikelint.model import Workload

__all__ = ["UNBOUNDED_RETRIES", "workloads_in", "tree_workloads"]

TreeAdapter = Callable[[Node, str, Config, SourceLines], list[Workload]]


def _kubernetes(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    from spikelint.adapters.kubernetes import kubernetes_workloads

    return kubernetes_workloads(root, path, config, lines)


def _runai_crd(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    from spikelint.adapters.runai_crd import crd_workloads

    return crd_workloads(root, path, config, lines)


def _runai_rest(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    from spikelint.adapters.runai_rest import rest_workloads

    return rest_workloads(root, path, config, lines)


def _manifest(root: Node, path: str, config: Config, lines: SourceLines) -> list[Workload]:
    """``runai workload submit`` / ``POST /api/v2/workloads``: ``{metadata, manifest: <object>}``."""
    manifest = as_map(root.get("manifest"))
    return _kubernetes(manifest, path, config, lines) if manifest is not None else []


def tree_format(root: Node) -> str | None:
    """Which format a YAML/JSON document is written in, from its shape."""
    if root.kind != "map":
        return None
    kind = scalar_text(root.get("kind"))
    api_version = scalar_text(root.get("apiVersion"))
    if kind and api_version:
        from spikelint.adapters.runai_crd import is_runai_crd

        return "runai-crd" if is_runai_crd(api_version, kind) else "kubernetes"
    if as_map(root.get("manifest")) is not None and scalar_text(child_kind(root)):
        return "manifest"
    from spikelint.adapters.runai_rest import is_rest_body

    return "runai-rest" if is_rest_body(root) else None


def child_kind(root: Node) -> Node | None:
    manifest = as_map(root.get("manifest"))
    return manifest.get("kind") if manifest is not None else None


TREE_ADAPTERS: dict[str, TreeAdapter] = {
    "kubernetes": _kubernetes,
    "runai-crd": _runai_crd,
    "runai-rest": _runai_rest,
    "manifest": _manifest,
}


def tree_workloads(document: Document, config: Config) -> list[Workload]:
    lines = SourceLines(document.text)
    found: list[Workload] = []
    for root in document.trees:
        adapter = TREE_ADAPTERS.get(tree_format(root) or "")
        if adapter is not None:
            found.extend(adapter(root, document.path, config, lines))
    return found


def script_workloads(document: Document, config: Config) -> list[Workload]:
    """``runai … submit`` commands and Slurm batch jobs (``#SBATCH`` scripts, heredocs, ``sbatch --wrap``)."""
    from spikelint.adapters.runai_cli import cli_workloads
    from spikelint.adapters.slurm import slurm_workloads

    return cli_workloads(document, config) + slurm_workloads(document, config)


DOCUMENT_ADAPTERS: dict[str, Callable[[Document, Config], list[Workload]]] = {
    FileKind.YAML: tree_workloads,
    FileKind.JSON: tree_workloads,
    FileKind.SHELL: script_workloads,
}


def workloads_in(document: Document, config: Config) -> list[Workload]:
    """Every workload a document defines (none for documents that define none), each classified
    once as training or not (:mod:`spikelint.adapters.purpose`)."""
    from spikelint.adapters.purpose import apply

    adapter = DOCUMENT_ADAPTERS.get(document.kind)
    return [apply(workload) for workload in adapter(document, config)] if adapter is not None else []
