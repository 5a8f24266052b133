"""Copy the top-level ``rules/`` and ``schemas/`` folders into the built package.

The catalog and the JSON Schemas are product data that live at the repository's top level
(where users read and review them); a non-editable install (what pre-commit does) must
still find them, so the build copies them to ``spikelint/data/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA_FOLDERS = ("rules", "schemas")


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        for folder in DATA_FOLDERS:
            source = ROOT / folder
            target = Path(self.build_lib) / "spikelint" / "data" / folder
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target)


setup(cmdclass={"build_py": BuildPyWithData})
