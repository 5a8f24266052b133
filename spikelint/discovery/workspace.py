"""The work tree around the files given, so ``check FILE`` sees what ``check .`` sees.

pre-commit passes only the staged files, yet a workload's findings depend on the configs and
scripts it references.  References therefore resolve against every file of the repository
(``git ls-files`` from its root; outside Git, the configuration's folder), not only against the
files given; and a given config or script brings back the workloads that reference it, so a
change to ``configs/train.yaml`` is judged by the jobs that run it.

As a pre-commit hook (``hook``) the given files are a commit's: a referrer must be tracked, so a
work-in-progress script nobody has added never judges the commit (it is still read when a given
file references it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from pathlib import PurePosixPath
from typing import NamedTuple

from spikelint.config import Config
from spikelint.discovery.repository import SeveralRepositories
from spikelint.discovery.repository import foreign_root
from spikelint.discovery.repository import inside
from spikelint.files import discover
from spikelint.files import git_root
from spikelint.files import git_tracked
from spikelint.files import listed_sources
from spikelint.files import readable
from spikelint.model import FileKind
from spikelint.model import SourceFile

REFERENCED_KINDS = frozenset((FileKind.YAML, FileKind.JSON, FileKind.TOML, FileKind.SHELL))
REFERRING_KINDS = frozenset((FileKind.YAML, FileKind.JSON, FileKind.SHELL))
MIN_STEM = 3  # shorter stems are matched as whole file names only
STRUCTURAL_NAMES = frozenset(("kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml",
                              "Chart.lock", "helmfile.yaml"))
MANIFEST_HEAD = 8192  # bytes read to see whether a given file is a Kubernetes object
# top-level apiVersion and kind (YAML at column 0, or JSON keys): a Kubernetes object
_API_VERSION = re.compile(rb'(?m)^apiVersion:|"apiVersion"\s*:')
_KIND = re.compile(rb'(?m)^kind:|"kind"\s*:')


@dataclass
class Workspace:
    """``context``: every file references may resolve to; ``dependents``: files to check because they may
    reference a given one (kept only if they do)."""

    context: list[SourceFile] = field(default_factory=list)
    dependents: list[SourceFile] = field(default_factory=list)
    root: str | None = None  # the folder listed files must stay inside (links out of it are not read)


def reference_root(paths: list[str], cwd: Path, config: Config) -> Path | None:
    """The Git root, else the configuration's folder; ``None`` (nothing beyond the given files) otherwise.

    That is the current folder's when the given paths are inside it; ``check ../other-repo`` run from
    inside a repository is judged by the other repository, never by the files around the current folder.
    """
    root = git_root(cwd)
    if root is None and config.path is not None:
        root = (cwd / config.root).resolve()
    if root is not None and all(inside(cwd / raw, root) for raw in paths):
        return root
    try:
        return foreign_root(paths, cwd)
    except SeveralRepositories:
        return None


def _covers(paths: list[str], cwd: Path, root: Path) -> bool:
    """Whether a given path is the root or above it: then the given files are the whole tree."""
    return any(os.path.isdir(cwd / raw) and inside(root, cwd / raw) for raw in paths)


def workspace(paths: list[str], given: list[SourceFile], config: Config, cwd: Path, hook: bool = False) -> Workspace:
    """The files around ``given`` (discovered from ``paths``); empty when ``given`` already is the tree.
    ``hook``: only tracked files are referrers (``dependents``)."""
    root = reference_root(paths, cwd, config)
    if root is None or _covers(paths, cwd, root):
        return Workspace()
    base = Path(config.root) if config.path is not None else None
    listed = listed_sources(root, cwd, config.exclude, base)  # in Git: names only, each file looked at when read
    if listed is None:
        listed = discover([str(root)], cwd=cwd, exclude=config.exclude, max_file_size=config.max_file_size,
                          base=base).files
    known = {source.path for source in given}
    context = [source for source in listed if source.path not in known]
    names = _reference_names(given)
    top = os.path.realpath(root)
    dependents = [source for source in context if source.kind in REFERRING_KINDS
                  and readable(source, top, config.max_file_size) and _mentions(source, names)]
    if hook and dependents:
        dependents = _tracked(dependents, root)
    return Workspace(context, dependents, top)


def _tracked(sources: list[SourceFile], root: Path) -> list[SourceFile]:
    """The sources Git tracks (all of them outside Git: there is no commit to protect)."""
    tracked = git_tracked(root)
    if tracked is None:
        return sources
    top = os.path.realpath(root)
    return [source for source in sources
            if os.path.relpath(os.path.realpath(source.abspath), top).replace(os.sep, "/") in tracked]


# Up to this many names, a file is searched for each (``in`` is one fast scan); beyond it, the file's
# words are read once and looked up, so checking a folder of 400 files inside a repository does not
# scan every other file 400 times.
FEW_NAMES = 16
_WORD = re.compile(rb"[\w-]+")


class ReferenceNames(NamedTuple):
    """The stems to look for: ``literals`` for a fast ``in`` test, ``whole`` to confirm a whole name
    (a pattern that starts with a look-behind cannot skip ahead, so it runs only on candidates);
    ``words``: the names that are one word each (most), for looking up a file's words instead, and
    ``others`` the rest (``a.yaml``)."""

    literals: tuple[bytes, ...]
    whole: re.Pattern[bytes]
    words: frozenset[bytes] = frozenset()
    others: tuple[bytes, ...] = ()

    def candidate(self, data: bytes) -> bool:
        """Whether ``data`` contains one of the names at all (``whole`` then says whether as a name)."""
        if len(self.literals) <= FEW_NAMES:
            return any(literal in data for literal in self.literals)
        if not self.words.isdisjoint(_WORD.findall(data)):
            return True
        return any(literal in data for literal in self.others)


def _reference_names(given: list[SourceFile]) -> ReferenceNames | None:
    """What a reference to a given config or script must contain: its stem (Hydra drops the suffix),
    as a whole name that is not a key, so ``finetune-1`` does not bring back every file that names
    ``finetune-12`` and ``protocol.yaml`` not every manifest with a ``protocol:`` key."""
    names = set()
    for source in given:
        if source.kind in REFERENCED_KINDS and not _is_manifest(source):
            name = PurePosixPath(source.path).name
            stem = PurePosixPath(name).stem
            names.add(stem if len(stem) >= MIN_STEM else name)
    if not names:
        return None
    literals = tuple(name.encode("utf-8", "surrogateescape") for name in sorted(names))
    alternatives = b"|".join(re.escape(literal) for literal in literals)
    # not followed by a colon: ``protocol: TCP`` is a key, not a reference to ``protocol.yaml``
    words = frozenset(literal for literal in literals if _WORD.fullmatch(literal))
    return ReferenceNames(literals, re.compile(rb"(?<![\w-])(?:" + alternatives + rb")(?![\w-])(?![\"']?[ \t]*:)"),
                          words, tuple(literal for literal in literals if literal not in words))


def _is_manifest(source: SourceFile) -> bool:
    """A Kubernetes object, kustomization or chart file: workloads name such objects, not their files,
    so a given manifest (a CRD, a generated install bundle) brings back no dependents; its name is
    often a word (``protocol``, ``kustomization``) found in hundreds of files."""
    if PurePosixPath(source.path).name in STRUCTURAL_NAMES:
        return True
    if source.kind not in (FileKind.YAML, FileKind.JSON):
        return False
    try:
        with open(source.abspath, "rb") as handle:
            head = handle.read(MANIFEST_HEAD)
    except OSError:
        return False
    return bool(_API_VERSION.search(head) and _KIND.search(head))


def _mentions(source: SourceFile, names: ReferenceNames | None) -> bool:
    if names is None:
        return False
    try:
        with open(source.abspath, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return names.candidate(data) and names.whole.search(data) is not None
