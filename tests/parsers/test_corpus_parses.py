"""Every example launch script and Dockerfile of the shared corpus parses without errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from spikelint.documents.dockerfile import parse_dockerfile
from spikelint.documents.shell import parse_shell

CORPUS = Path("/work/shared/corpus")


def corpus_files(*patterns: str) -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(path for pattern in patterns for path in CORPUS.rglob(pattern) if path.is_file())


SCRIPTS = corpus_files("*.sh", "*.bash")
DOCKERFILES = corpus_files("*Dockerfile*", "*.dockerfile", "Containerfile*")


@pytest.mark.skipif(not SCRIPTS, reason="needs the workload corpus of spikelint's development workspace, which a clone does not include")
@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: path.name)
def test_corpus_script_parses_without_errors(path: Path) -> None:
    script = parse_shell(path.read_text(encoding="utf-8"))
    assert script.errors == []
    assert script.pipelines
    for inner in script.scripts():
        assert inner.errors == []


@pytest.mark.skipif(not DOCKERFILES, reason="needs the workload corpus of spikelint's development workspace, which a clone does not include")
@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda path: path.name)
def test_corpus_dockerfile_parses_without_errors(path: Path) -> None:
    dockerfile = parse_dockerfile(path.read_text(encoding="utf-8"))
    assert dockerfile.errors == []
    assert dockerfile.stages
    for instruction in dockerfile.instructions:
        if instruction.script is not None:
            assert instruction.script.errors == []


def test_corpus_examples_are_the_expected_ones() -> None:
    if not CORPUS.is_dir():
        pytest.skip("needs the workload corpus of spikelint's development workspace, which a clone does not include")
    names = {path.name for path in SCRIPTS + DOCKERFILES}
    assert {"01-runai-cli-good.sh", "02-runai-cli-bad.sh", "13-Dockerfile.good", "14-Dockerfile.bad"} <= names
