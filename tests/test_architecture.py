"""The layout keeps the architecture: import contracts hold, the top level stays small, modules stay short.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``); ``lint-imports`` checks them
here so CI enforces the one-way flow, not only a reader of ``docs/architecture.md``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "spikelint"

#: Modules the spec wants at the top, next to ``__init__``, ``__main__`` and ``cli``.
TOP_LEVEL_LIMIT = 8
LINE_LIMIT = 600
#: Modules over the limit: none (the last were split by job); nothing may join this table.
OVERSIZED: dict[str, int] = {}


def test_import_contracts_are_kept(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cli = pytest.importorskip("importlinter.cli", reason="import-linter is in the test extra")
    monkeypatch.chdir(ROOT)
    code = cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    output = capsys.readouterr().out
    assert code == 0, output
    assert "0 broken" in output


def test_checks_never_ask_the_platform_and_read_only_typed_fields() -> None:
    """The model is a contract (docs/model.md): what is platform-specific, wording included, is the typed
    ``workload.platform`` record an adapter fills; a check that asks ``workload.source`` or reads an untyped
    dict would bring back the branches team rules cannot see."""
    import re

    asking = re.compile(r"\bworkload\.source\b|\.extra\b|\bplatform\.form\b")
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for folder in ("checks", "facts") for path in sorted((PACKAGE / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if asking.search(line)]
    assert found == []


def test_the_top_level_holds_only_the_recommended_modules() -> None:
    loose = sorted(path.name for path in PACKAGE.glob("*.py") if path.name not in {"__init__.py", "__main__.py", "cli.py"})
    assert len(loose) <= TOP_LEVEL_LIMIT, f"{len(loose)} loose modules at the top of spikelint/: {loose}; move new ones into a layer's package"


def test_every_package_folder_is_a_package() -> None:
    folders = [path for path in PACKAGE.rglob("*") if path.is_dir() and any(path.glob("*.py")) and "__pycache__" not in path.parts]
    missing = [str(path.relative_to(ROOT)) for path in folders if not (path / "__init__.py").is_file()]
    assert missing == []


def test_modules_stay_short() -> None:
    too_long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if name not in OVERSIZED and lines > LINE_LIMIT:
            too_long[name] = lines
    assert too_long == {}, f"modules over {LINE_LIMIT} lines: split them by job"


def test_ruff_is_clean() -> None:
    """The ``[tool.ruff]`` rules of pyproject.toml hold (CI runs only pytest, so pytest runs ruff)."""
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_project_runs_its_own_hooks() -> None:
    """``.pre-commit-config.yaml`` is a valid config whose first hook is spikelint itself."""
    clientlib = pytest.importorskip("pre_commit.clientlib", reason="pre-commit is in the test extra")
    config = clientlib.load_config(str(ROOT / ".pre-commit-config.yaml"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert [hook["id"] for hook in hooks] == ["spikelint", "ruff", "mypy", "import-contracts"]
    assert hooks[0]["entry"] == "python -m spikelint check --hook"


def test_spikelint_passes_on_its_own_repository() -> None:
    """What the self-hook sees: every tracked file outside the fixtures, the example and the catalog."""
    from spikelint.config import Config
    from spikelint.engine import check_paths

    git = shutil.which("git") or pytest.skip("git is not installed")
    listed = subprocess.run([git, "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    if listed.returncode != 0:
        pytest.skip("not a Git checkout")
    names = [name for name in listed.stdout.splitlines() if not name.startswith(("tests/", "examples/", "rules/"))]
    result = check_paths(names, Config(), cwd=ROOT, jobs=1)
    assert [f"{finding.path}:{finding.line} {finding.rule}" for finding in result.report.findings if finding.severity != "info"] == []
