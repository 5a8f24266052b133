"""The package type-checks with the ``[tool.mypy]`` settings of pyproject.toml.

Skipped where mypy 2.0+ is not installed (it is in the ``test`` extra; older releases narrow
types differently and want PyYAML stubs) or the tests run outside a source checkout.  A cold
run takes about 10 s; mypy's cache makes later runs ~1 s.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
TIMEOUT_S = 120


def test_package_is_mypy_clean() -> None:
    pytest.importorskip("mypy.version", minversion="2.0",
                        reason="mypy 2.0+ is not installed (pip install -e '.[test]')")
    if not (ROOT / "pyproject.toml").is_file() or not (ROOT / "spikelint").is_dir():
        pytest.skip("not a source checkout")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty"],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )
    assert result.returncode == 0, f"mypy found problems:\n{result.stdout}{result.stderr}"
