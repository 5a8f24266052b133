"""Hierarchical configuration: a ``.spikelint.yaml`` in a sub-folder refines its parent's for the files below it.

A sub-folder's file names only what differs: each key it sets replaces the parent's value,
except ``per_path_ignores``, ``schemas`` and ``exclude``, whose entries are added (their globs
and paths are relative to the sub-folder, as they would be at the top).  ``fail_on``,
``max_file_size`` and ``baseline`` are one value per run, so only the top configuration sets
them.  Command-line options still win over every file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any
from typing import Callable

from spikelint.config import Config
from spikelint.config import DEFAULT_RULES_DIR
from spikelint.config import ConfigError
from spikelint.config import config_from_mapping
from spikelint.config import read_config_mapping
from spikelint.config import config_source
from spikelint.config import unknown_rule_names
from spikelint.config import with_overrides

SUB_CONFIG_NAMES = (".spikelint.yaml", ".spikelint.yml")
RUN_WIDE_KEYS = ("fail_on", "max_file_size", "baseline")
ADDED_KEYS = ("per_path_ignores", "schemas", "exclude")


@dataclass
class Layers:
    """The effective configuration of each folder below the top one (``top_folder``), computed on demand."""

    top: Config
    top_folder: Path
    cwd: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    known_rules: tuple[str, ...] = ()
    # the rule ids a configuration's own team rules add (the engine's: discovery knows no rule files)
    team_rules: Callable[[Config], tuple[str, ...]] | None = None
    _folders: dict[str, Config] = field(default_factory=dict, repr=False)

    def for_path(self, path: str) -> Config:
        """The configuration for the file ``path`` (relative to ``cwd``)."""
        folder = os.path.dirname(os.path.normpath(os.path.join(self.cwd, path)))
        return self._for_folder(folder)

    def _for_folder(self, folder: str) -> Config:
        if folder in self._folders:
            return self._folders[folder]
        top = os.path.normpath(self.top_folder)
        if folder == top or not folder.startswith(top.rstrip(os.sep) + os.sep):
            config = self.top
        else:
            config = self._for_folder(os.path.dirname(folder))
            found = next((Path(folder, name) for name in SUB_CONFIG_NAMES if os.path.isfile(os.path.join(folder, name))),
                         None)
            if found is not None:
                config = self._refine(config, found, Path(os.path.relpath(folder, top)).as_posix())
        self._folders[folder] = config
        return config

    def _refine(self, parent: Config, path: Path, folder: str) -> Config:
        data, source = read_config_mapping(path)
        child = config_from_mapping(data, source=source, root=str(path.parent))
        own = child.team_rules_folder()
        added = parent.added_rules_dirs
        if own is not None:
            added = (*added, (str(own[0]), f"{folder}/{(child.rules_dir or DEFAULT_RULES_DIR).rstrip('/')}"))
        known = self.known_rules
        if known and self.team_rules is not None and own is not None:
            known = (*known, *self.team_rules(replace(parent, added_rules_dirs=added)))
        problems = unknown_rule_names(replace(child, path=source), known, config_source(source)) if known else []
        if problems:
            raise ConfigError("; ".join(problems))
        values: dict[str, Any] = {key: getattr(child, key) for key in data
                                  if key not in RUN_WIDE_KEYS + ADDED_KEYS + ("rules_dir",)}
        values["added_rules_dirs"] = added
        values["per_path_ignores"] = {**parent.per_path_ignores,
                                      **{_under(folder, glob): rules for glob, rules in child.per_path_ignores.items()}}
        values["schemas"] = {**parent.schemas, **{_under(folder, glob): target if os.path.isabs(target)
                                                  else f"{folder}/{target}" for glob, target in child.schemas.items()}}
        values["exclude"] = (*parent.exclude, *(_under(folder, glob) for glob in child.exclude))
        overrides = {key: value for key, value in self.overrides.items() if key != "exclude"}
        return with_overrides(replace(parent, **values), **overrides)


def _under(folder: str, glob: str) -> str:
    """A sub-folder's glob as seen from the top: anchored below the sub-folder."""
    glob = glob.strip()
    if "/" not in glob.rstrip("/"):
        return f"{folder}/**/{glob}"  # a bare name matches at any depth, as at the top
    return f"{folder}/{glob.lstrip('/')}"
