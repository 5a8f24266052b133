"""Results of unchanged files, kept from the last run in ``.spikelint_cache/``.

An entry is reused only when everything its findings depend on is unchanged: the file's bytes,
the spikelint code and rule catalog, the configuration, the current folder and today's date
(suppressions expire), and every other file its checks looked at (a referenced config, a
schema in the tree) along with the set of files that a config reference could have matched.
Runs that point checks at files outside the tree (``schemas`` in the configuration) are not
cached.  The cache is JSON, never pickle: a file in a checkout must not be able to run code.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterable

from spikelint import __version__
from spikelint.model import Finding
from spikelint.util.resources import PACKAGE_DIR
from spikelint.util.resources import data_folder

FOLDER = ".spikelint_cache"
FORMAT = 1


@dataclass(frozen=True)
class Dependencies:
    """What else one file's checks read: other files (path -> digest) and config lookups by name."""

    files: dict[str, str] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)  # file name -> the paths called that


@dataclass(frozen=True)
class Entry:
    digest: str
    dependencies: Dependencies
    result: dict[str, Any]  # a FileResult as plain data


def file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
    except OSError:
        return None


def _code_stamp() -> str:
    """Size and modification time of every module and catalog file: an edited checkout is a new tool."""
    stamps = []
    for folder in {PACKAGE_DIR, data_folder("rules")}:
        if folder.is_dir():
            for root, _, names in os.walk(folder):
                for name in sorted(names):
                    if name.endswith((".py", ".yaml", ".json")):
                        info = os.stat(os.path.join(root, name))
                        stamps.append(f"{root}/{name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.blake2b("\n".join(sorted(stamps)).encode(), digest_size=16).hexdigest()


def run_key(config: Any, cwd: Path, today: date) -> str:
    settings = json.dumps(asdict(config), sort_keys=True, default=str)
    parts = (str(FORMAT), __version__, _code_stamp(), settings, str(cwd.resolve()), today.isoformat())
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()


class ResultCache:
    """One JSON file per run key; entries of files that were not checked this run are dropped."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.key = key
        self.previous: dict[str, Entry] = {}
        self.current: dict[str, Entry] = {}
        try:
            data = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
            for path, raw in data["entries"].items():
                self.previous[path] = Entry(raw["digest"], Dependencies(raw["files"], raw["names"]), raw["result"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.previous = {}  # absent, unreadable or from another format: start afresh

    def lookup(self, path: str, digest: str, digest_of: Callable[[str], str | None],
               named: dict[str, list[str]]) -> dict[str, Any] | None:
        """The stored result of ``path`` if it and everything it depends on are unchanged."""
        entry = self.previous.get(path)
        if entry is None or entry.digest != digest:
            return None
        if any(digest_of(other) != wanted for other, wanted in entry.dependencies.files.items()):
            return None
        if any(sorted(named.get(name, [])) != paths for name, paths in entry.dependencies.names.items()):
            return None
        self.current[path] = entry
        return entry.result

    def store(self, path: str, digest: str, dependencies: Dependencies, result: dict[str, Any]) -> None:
        self.current[path] = Entry(digest, dependencies, result)

    def save(self) -> None:
        """Write the entries of this run; a read-only checkout just goes without a cache."""
        entries = {path: {"digest": entry.digest, "files": entry.dependencies.files,
                          "names": entry.dependencies.names, "result": entry.result}
                   for path, entry in self.current.items()}
        try:
            self.folder.mkdir(exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# written by spikelint: nothing here belongs in version control\n*\n",
                                  encoding="utf-8")
            for stale in self.folder.glob("*.json"):
                if stale.stem != self.key:
                    stale.unlink()
            target = self.folder / f"{self.key}.json"
            temporary = target.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"format": FORMAT, "entries": entries}, separators=(",", ":")),
                                 encoding="utf-8")
            os.replace(temporary, target)
        except OSError:
            pass


def findings_to_data(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    return [asdict(finding) for finding in findings]


def findings_from_data(data: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(**{**item, "aliases": tuple(item.get("aliases", ()))}) for item in data]
