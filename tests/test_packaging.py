"""A wheel built from the sdist (what ``python -m build`` and every index do) installs and runs.

The catalog and the JSON Schemas live at the repository's top level; ``pyproject.toml`` maps
them into the package as ``spikelint/data/``.  A non-editable install (what pre-commit does)
must run ``spikelint rules``, ``check`` and ``explain`` from the wheel alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """The package list is written out (a folder mapped to a package needs it): a new package must join it."""
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "spikelint").rglob("__init__.py")}
    assert found - listed == set(), "add these packages to [tool.setuptools] packages in pyproject.toml"
    assert {"spikelint.data.rules", "spikelint.data.schemas"} <= listed


def test_no_setup_py() -> None:
    assert not (ROOT / "setup.py").exists()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(sdist, wheel)``: the sdist from the checkout, then the wheel from the unpacked sdist."""
    pytest.importorskip("build", reason="the 'build' package is in the test extra")
    out = tmp_path_factory.mktemp("dist")
    sdist_run = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)],
                               capture_output=True, text=True, timeout=600, check=False)
    if sdist_run.returncode != 0:
        pytest.skip(f"cannot build here (no build backend reachable): {sdist_run.stderr.strip()[-300:]}")
    sdist = next(out.glob("spikelint-*.tar.gz"))
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    source = next(unpacked.iterdir())
    wheel_run = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
                               capture_output=True, text=True, timeout=600, check=False)
    assert wheel_run.returncode == 0, wheel_run.stderr[-2000:]
    return sdist, next(out.glob("spikelint-*.whl"))


@pytest.mark.slow
def test_sdist_carries_the_catalog_and_the_schemas(built: tuple[Path, Path]) -> None:
    sdist, _ = built
    names = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    for path in sorted((ROOT / "rules").iterdir()) + sorted((ROOT / "schemas").iterdir()):
        assert f"{path.parent.name}/{path.name}" in names
    assert "setup.py" not in names


@pytest.mark.slow
def test_wheel_from_sdist_carries_data_and_py_typed(built: tuple[Path, Path]) -> None:
    _, wheel = built
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in sorted((ROOT / "rules").glob("*.yaml")) + sorted((ROOT / "schemas").glob("*.json")):
        assert f"spikelint/data/{path.parent.name}/{path.name}" in names
    assert "spikelint/py.typed" in names


@pytest.mark.slow
def test_installed_wheel_runs_rules_check_and_explain(built: tuple[Path, Path], tmp_path: Path) -> None:
    """Installed apart from the checkout (dependencies come from this environment): it runs on its own data."""
    _, wheel = built
    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                              "--target", str(target), str(wheel)], capture_output=True, text=True, timeout=300, check=False)
    assert install.returncode == 0, install.stderr[-2000:]
    work = tmp_path / "work"
    work.mkdir()
    (work / "job.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n"
                                   "  containers:\n    - name: main\n      image: nvcr.io/nvidia/pytorch:latest\n",
                                   encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(target)}

    def spikelint(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "spikelint", *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120, check=False)

    where = subprocess.run([sys.executable, "-c", "import spikelint; print(spikelint.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=60, check=True)
    assert where.stdout.strip().startswith(str(target))
    rules = spikelint("rules")
    assert rules.returncode == 0, rules.stderr
    assert "SPK101" in rules.stdout and "mutable-image-tag" in rules.stdout
    check = spikelint("check", "job.yaml")
    assert check.returncode == 1, check.stderr
    assert "job.yaml:8:" in check.stdout and "SPK101" in check.stdout
    explain = spikelint("explain", "SPK101")
    assert explain.returncode == 0, explain.stderr
    assert "mutable-image-tag" in explain.stdout


@pytest.mark.slow
def test_wheel_installs_in_a_fresh_virtualenv(built: tuple[Path, Path], tmp_path: Path) -> None:
    """What a team's ``pip install`` does: a new environment, the dependencies from the index."""
    _, wheel = built
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                             capture_output=True, text=True, timeout=600, check=False)
    if install.returncode != 0:
        pytest.skip(f"cannot install the dependencies here (no package index): {install.stderr.strip()[-300:]}")
    rules = subprocess.run([str(python), "-m", "spikelint", "rules", "--format", "json"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, check=False)
    assert rules.returncode == 0, rules.stderr
    assert '"SPK101"' in rules.stdout
    typed = subprocess.run([str(python), "-c", "import pathlib, spikelint; "
                            "print((pathlib.Path(spikelint.__file__).parent / 'py.typed').is_file())"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    assert typed.stdout.strip() == "True"


def test_pre_commit_hooks_are_declared() -> None:
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["id"] for hook in hooks} == {"spikelint", "spikelint-secrets", "spikelint-policy", "spikelint-fix",
                                              "spikelint-history"}
    entries = {"spikelint-fix": "spikelint fix", "spikelint-history": "spikelint history"}
    assert all(hook["entry"].startswith(entries.get(hook["id"], "spikelint check")) and hook["language"] == "python"
               for hook in hooks)
