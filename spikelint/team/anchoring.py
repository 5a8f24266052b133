"""Where a team rule's ``paths:`` globs start: the folder of the configuration that loads the rules, not the
folder ``spikelint`` happens to run in (``cd prod && spikelint check .`` switched a ``prod/**`` rule off)."""

from __future__ import annotations

from pathlib import Path

from spikelint.config import Config
from spikelint.model import Document


def anchored_path(document: Document, config: Config) -> str:
    """The document's path from the configuration's folder; its own path when there is no configuration file
    or the document lies outside that folder."""
    if config.path is None or not document.source.abspath:
        return document.path
    try:
        return Path(document.source.abspath).resolve().relative_to(Path(config.root).resolve()).as_posix()
    except (ValueError, OSError):
        return document.path
