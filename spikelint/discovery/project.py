"""The set of files being checked, so a check can look up a config a workload references."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from spikelint.model import Document
from spikelint.model import SourceFile

if TYPE_CHECKING:
    from spikelint.documents.limits import ImageLimits


# names too common to identify a referenced config by file name alone
COMMON_CONFIG_STEMS = frozenset(("config", "configs", "conf", "cfg", "default", "defaults", "settings", "params",
                                 "parameters", "train", "training", "base", "main", "values", "args", "hparams"))


def path_parts(path: str) -> tuple[str, ...]:
    """A display path's folders and name: '/'-separated already, so split (path objects cost 25 µs each, and a
    4,000-file tree is indexed on a hook run of one file)."""
    return tuple(part for part in path.split("/") if part and part != ".")


@dataclass
class Project:
    """Every discovered file; other files are parsed on demand when a check asks for them."""

    sources: list[SourceFile] = field(default_factory=list)
    parsed: dict[str, Document] = field(default_factory=dict)  # path -> document already read
    # paths find_config has resolved (the engine clears it per file to learn who references what)
    resolved: set[str] = field(default_factory=set, compare=False)
    image_limits: ImageLimits | None = None  # how much of an image tarball is read (the configuration's)
    # a listed source (named by Git, not yet looked at) is read only when admissible: inside this folder, a regular
    # file within the size limit
    root: str = "/"
    max_file_size: int = 5 * 1024 * 1024
    # file name -> (path parts, source) of the files with that name: find_config looks only there
    _by_name: dict[str, list[tuple[tuple[str, ...], SourceFile]]] = field(default_factory=dict, init=False,
                                                                         repr=False, compare=False)
    _indexed: int = field(default=-1, init=False, repr=False, compare=False)
    _referenced: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    # what the checks asked for (the result cache records a file's dependencies from these)
    touched: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    looked_up: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    # answers about the whole tree that every file asks the same (which images skaffold replaces …),
    # computed once per project by the check that asks, under a key naming that check
    derived: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    def document(self, source: SourceFile) -> Document:
        self.touched.add(source.path)
        if source.path not in self.parsed:
            from spikelint.documents import read_document

            self.parsed[source.path] = read_document(source, self.image_limits) if self._readable(source) \
                else Document(source, "")
        return self.parsed[source.path]

    def text(self, source: SourceFile) -> str:
        """A file's text without parsing it ('' when unreadable): a quick look before asking for its document."""
        self.touched.add(source.path)
        if source.path in self.parsed:
            return self.parsed[source.path].text
        if not self._readable(source):
            return ""
        try:
            with open(source.abspath, "rb") as handle:
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _readable(self, source: SourceFile) -> bool:
        from spikelint.files import readable

        return readable(source, self.root, self.max_file_size)

    def find_config(self, reference: str, near: Document | None = None) -> Document | None:
        """The scanned file a workload's ``--config`` path points at.

        Container paths differ from repository paths (``/workspace/configs/a.yaml`` is
        ``configs/a.yaml`` here), so the longest matching path tail wins; ties go to the file
        closest to the referring document.
        """
        wanted = [part for part in PurePosixPath(reference.strip().strip("'\"")).parts if part not in ("/", ".")]
        if not wanted:
            return None
        best: tuple[int, int, SourceFile] | None = None
        near_parts = path_parts(near.path)[:-1] if near is not None else ()
        for parts, source in self._named(wanted[-1]):
            matched = 0
            while matched < min(len(parts), len(wanted)) and parts[-1 - matched] == wanted[-1 - matched]:
                matched += 1
            if matched == 0:
                continue
            shared = 0
            while shared < min(len(near_parts), len(parts) - 1) and near_parts[shared] == parts[shared]:
                shared += 1
            candidate = (matched, shared, source)
            if best is None or candidate[:2] > best[:2]:
                best = candidate
        if best is None or (near is not None and best[2].path == near.path):
            return None
        if best[0] == 1 and len(wanted) > 1 and not self._distinctive(wanted[-1]):
            return None  # only a common file name matches: /etc/trainer/config.yaml is not any config.yaml
        self.resolved.add(best[2].path)
        self._referenced.add(best[2].path)
        return self.document(best[2])

    def named(self, name: str) -> list[SourceFile]:
        """The scanned files called ``name`` (any folder)."""
        return [source for _, source in self._named(name)]

    def release(self, path: str) -> None:
        """Forget a checked file's document, unless a workload referenced it (it may be asked for again):
        memory then stays flat in the number of files."""
        if path not in self._referenced:
            self.parsed.pop(path, None)

    def _distinctive(self, name: str) -> bool:
        """A file name that identifies one file here: unique, and not a name every project uses."""
        return len(self._named(name)) == 1 and PurePosixPath(name).stem.lower() not in COMMON_CONFIG_STEMS

    def _named(self, name: str) -> list[tuple[tuple[str, ...], SourceFile]]:
        """The sources called ``name`` (an index built once, so lookups do not rescan every path)."""
        self.looked_up.add(name)
        if self._indexed != len(self.sources):
            self._by_name = {}
            for source in self.sources:
                parts = path_parts(source.path)
                if parts:
                    self._by_name.setdefault(parts[-1], []).append((parts, source))
            self._indexed = len(self.sources)
        return self._by_name.get(name, [])
