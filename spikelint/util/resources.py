"""Where the product data (``rules/``, ``schemas/``) is, installed or in a source checkout."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def data_folder(name: str) -> Path:
    """``spikelint/data/NAME`` in a built wheel, else the repository's top-level ``NAME/``."""
    installed = PACKAGE_DIR / "data" / name
    if installed.is_dir():
        return installed
    return PACKAGE_DIR.parent / name
