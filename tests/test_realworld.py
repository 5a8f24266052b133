"""Held-out realistic files: what spikelint must report on repositories it was not built from.

Every top-level folder of ``tests/realworld/`` is one pretend repository (Kubeflow examples,
Run:ai submissions, plain Kubernetes, Dockerfiles, launch scripts, trainer configs, Helm and
kustomize, notebooks, training code, CI files).  Expectations are written into the files with
the fixture convention of ``test_fixtures.py`` (``# expect: SPK101`` on the line, ``# expect+N:``
above, ``NAME.expect`` sidecars for JSON and notebooks) and were decided from the rule catalog,
not from the tool's output.  Each file is compared on the exact set of (line, rule) over all
rules, and no finding may be reported twice at one position.  A repository's
``.spikelint.yaml`` applies to its files, as it does for ``spikelint check`` run inside it.  Files are read as bytes so CRLF line endings reach the parsers unchanged.

Where the tool still disagrees with the catalog, that one file is marked ``xfail`` below with
the disagreement spelled out; ``docs/accuracy.md`` lists them with the measured scores.
"""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from _pytest.mark.structures import ParameterSet

from spikelint.engine import lint_snippet
from test_fixtures import SIDECARS
from test_fixtures import expected

REALWORLD = Path(__file__).parent / "realworld"
TODAY = date(2026, 11, 29)

# file (relative to tests/realworld) -> why the tool's output differs from the catalog
KNOWN_DISAGREEMENTS: dict[str, str] = {}


class Case(NamedTuple):
    """One realistic file, the repository it belongs to, and what the catalog says it holds."""

    name: str  # relative to tests/realworld, the path spikelint sees
    text: str
    config: dict[str, object]
    extra_files: dict[str, str]
    expected: set[tuple[int, str]]


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def realworld_files() -> list[Path]:
    return sorted(path for path in REALWORLD.rglob("*")
                  if path.is_file() and not path.name.endswith(SIDECARS) and "__pycache__" not in path.parts)


def repository_of(path: Path) -> Path:
    return REALWORLD / path.relative_to(REALWORLD).parts[0]


def repository_config(repository: Path) -> dict[str, object]:
    """The repository's own ``.spikelint.yaml``, as ``spikelint check`` run inside it would find."""
    config_file = repository / ".spikelint.yaml"
    loaded = yaml.safe_load(config_file.read_text(encoding="utf-8")) if config_file.exists() else None
    return dict(loaded or {})


def load_case(path: Path) -> Case:
    text = read(path)
    repository = repository_of(path)
    config = repository_config(repository)
    config_file = path.with_name(path.name + ".config.yaml")
    if config_file.exists():
        config.update(yaml.safe_load(config_file.read_text(encoding="utf-8")) or {})
    extra = {
        other.relative_to(REALWORLD).as_posix(): read(other)
        for other in repository.rglob("*")
        if other.is_file() and other != path and not other.name.endswith(SIDECARS)
    }
    return Case(path.relative_to(REALWORLD).as_posix(), text, config or {}, extra, expected(path, text))


def case_params() -> list[ParameterSet]:
    params = []
    for path in realworld_files():
        name = path.relative_to(REALWORLD).as_posix()
        reason = KNOWN_DISAGREEMENTS.get(name)
        marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
        params.append(pytest.param(path, id=name, marks=marks))
    return params


def test_disagreements_name_existing_files() -> None:
    names = {path.relative_to(REALWORLD).as_posix() for path in realworld_files()}
    assert set(KNOWN_DISAGREEMENTS) <= names


@pytest.mark.parametrize("path", case_params())
def test_realworld_file(path: Path) -> None:
    case = load_case(path)
    findings = lint_snippet(case.name, case.text, case.config, extra_files=case.extra_files, today=TODAY)
    got = {(finding.line, finding.rule) for finding in findings}
    positions = [(finding.line, finding.column, finding.rule) for finding in findings]
    repeated = sorted({position for position in positions if positions.count(position) > 1})
    missing = sorted(case.expected - got)
    unexpected = sorted(got - case.expected)
    details = "\n".join(f"  {f.line}:{f.column} {f.rule} {f.message}" for f in findings)
    assert not missing and not unexpected and not repeated, (
        f"{case.name}\n  missing: {missing}\n  unexpected: {unexpected}\n  reported twice: {repeated}\n"
        f"  all findings:\n{details}")


INSERTIONS = ("{", "[", '"', "'", "\\", "$(", "`", "<<EOF", "\t", ":", "- ", "&a", "*a", "!!", "\x00", "\ufeff",
              "\r", "#", "|", "}}", "{{", "\\\n", "---\n", "]}")


def mutate(text: str, rng: random.Random) -> str:
    """One damaged copy: cut short, a stray token inserted, lines shuffled, or a span dropped."""
    operation = rng.randrange(4)
    cut = rng.randrange(len(text) + 1)
    if operation == 0:
        return text[:cut]
    if operation == 1:
        return text[:cut] + rng.choice(INSERTIONS) + text[cut:]
    if operation == 2:
        lines = text.splitlines(keepends=True)
        rng.shuffle(lines)
        return "".join(lines)
    other = rng.randrange(len(text) + 1)
    return text[:min(cut, other)] + text[max(cut, other):]


def test_damaged_copies_never_crash() -> None:
    """Half-edited files are what a pre-commit hook sees: none may raise (lint_snippet raises on a crash)."""
    rng = random.Random(20261129)
    paths = realworld_files()
    for _ in range(300):
        path = rng.choice(paths)
        case = load_case(path)
        text = mutate(case.text, rng)
        findings = lint_snippet(case.name, text, case.config, today=TODAY)
        last = text.count("\n") + 1
        assert all(finding.path == case.name and 1 <= finding.line <= last for finding in findings), case.name
