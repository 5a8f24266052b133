"""The built wheel carries the rule catalog and the JSON Schemas (what a non-editable
``pip install .``, as pre-commit does it, needs to run ``spikelint rules``)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(target), str(ROOT)],
                            capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no build backend available): {result.stderr.strip()[-300:]}")
    return next(target.glob("spikelint-*.whl"))


def test_wheel_contains_catalog_and_schemas(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in sorted((ROOT / "rules").glob("*.yaml")) + sorted((ROOT / "schemas").glob("*.json")):
        assert f"spikelint/data/{path.parent.name}/{path.name}" in names


def test_pre_commit_hooks_are_declared() -> None:
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["id"] for hook in hooks} == {"spikelint", "spikelint-secrets", "spikelint-policy", "spikelint-history"}
    assert all(hook["entry"].startswith("spikelint check" if hook["id"] != "spikelint-history" else "spikelint history")
               and hook["language"] == "python" for hook in hooks)
