"""Kustomize patch files: fragments of the workload they patch, never workloads of their own.

A file listed under ``patches:``/``patchesStrategicMerge:``/``patchesJson6902:`` of a
``kustomization.yaml`` holds only the fields it changes (``kind: Job`` and an image, say); read
as a whole Job it would lack every volume, deadline and checkpoint setting its base has, and each
training rule would fire on what the patch never meant to say (rules.md, *evidence before a
training rule speaks*).
"""

from __future__ import annotations

import posixpath
from typing import Iterator

from spikelint.discovery.project import Project
from spikelint.model import Node
from spikelint.model import SourceFile

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")


# (how many sources the project had, the patch paths, the kustomizations they were read from)
PATCHES_KEY = "spikelint.discovery.kustomize.patches"


def is_patch_fragment(project: Project, path: str) -> bool:
    """Whether a kustomization in the tree lists ``path`` as a patch (read once per project, on demand)."""
    known = project.derived.get(PATCHES_KEY)
    if not isinstance(known, tuple) or known[0] != len(project.sources):
        sources = [source for name in KUSTOMIZATION_FILES for source in project.named(name)]
        patches = frozenset(patch for source in sources for patch in _patch_paths(project, source.path, source))
        known = (len(project.sources), patches, tuple(source.path for source in sources))
        project.derived[PATCHES_KEY] = known
    project.touched.update(known[2])  # the result cache re-checks this file when a kustomization changes
    return posixpath.normpath(path) in known[1]


def _patch_paths(project: Project, path: str, source: SourceFile) -> set[str]:
    return {listed for tree in project.document(source).trees for listed in listed_paths(tree, PATCH_KEYS, path)}


def listed_paths(tree: Node, keys: tuple[str, ...], path: str) -> Iterator[str]:
    """The files a kustomization at ``path`` lists under ``keys`` (``- file.yaml`` or ``- path: file.yaml``),
    resolved against its folder; remote references (``https://…``) are not files of the tree."""
    if tree.kind != "map":
        return
    folder = posixpath.dirname(path)
    for key in keys:
        entries = tree.get(key)
        for entry in entries.value if entries is not None and entries.kind == "seq" else []:
            target = entry.scalar("path") if entry.kind == "map" else entry.value if entry.kind == "scalar" else None
            if isinstance(target, str) and "://" not in target and "\n" not in target:
                yield posixpath.normpath(posixpath.join(folder, target))
