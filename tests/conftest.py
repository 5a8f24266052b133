"""Test lanes: ``pytest -m "not slow"`` is the edit loop, plain ``pytest`` runs everything (CI).

The smoke tests start training processes (torch, ``torchrun``, real kills): they are ``slow``
as a folder, so new smoke tests join the right lane without a marker of their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_FOLDERS = (Path(__file__).resolve().parent / "smoke",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
