"""Expected findings written into the fixtures themselves (pylint/pycodestyle style).

``# expect: SPK101,SPK202`` on a line means exactly those rules fire on that line;
``# expect+1: SPK101`` says it for the next line (where a comment cannot sit).  JSON and
notebook fixtures carry a sidecar ``NAME.expect`` with ``LINE RULE`` lines.  A sidecar
``NAME.config.yaml`` holds configuration keys for that fixture.  Every fixture is compared on
the exact set of (line, rule) pairs; the other files of its folder form its repository (so
referenced configs are found).
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
import yaml

from spikelint.engine import lint_snippet

FIXTURES = Path(__file__).parent / "fixtures"
SIDECARS = (".expect", ".config.yaml")
MARKER = re.compile(r"expect(\+\d+)?:\s*(SPK\d{3}(?:\s*,\s*SPK\d{3})*)")
TODAY = date(2026, 11, 29)


def fixture_files() -> list[Path]:
    return sorted(path for path in FIXTURES.rglob("*")
                  if path.is_file() and not path.name.endswith(SIDECARS) and "__pycache__" not in path.parts)


def expected(path: Path, text: str) -> set[tuple[int, str]]:
    sidecar = path.with_name(path.name + ".expect")
    found: set[tuple[int, str]] = set()
    if sidecar.exists():
        for line in sidecar.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                number, rule = line.split()[:2]
                found.add((int(number), rule))
        return found
    for number, line in enumerate(text.splitlines(), start=1):
        for match in MARKER.finditer(line):
            offset = int(match.group(1)[1:]) if match.group(1) else 0
            found.update((number + offset, rule.strip()) for rule in match.group(2).split(","))
    return found


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    config_file = path.with_name(path.name + ".config.yaml")
    config = yaml.safe_load(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
    folder = path.parent
    extra = {
        str(other.relative_to(FIXTURES)): other.read_text(encoding="utf-8", errors="replace")
        for other in folder.iterdir()
        if other.is_file() and other != path and not other.name.endswith(SIDECARS)
    }
    name = str(path.relative_to(FIXTURES))
    findings = lint_snippet(name, text, config or {}, extra_files=extra, today=TODAY)
    got = {(finding.line, finding.rule) for finding in findings}
    want = expected(path, text)
    missing = sorted(want - got)
    unexpected = sorted(got - want)
    details = "\n".join(f"  {f.line}:{f.column} {f.rule} {f.message}" for f in findings)
    assert not missing and not unexpected, (
        f"{name}\n  missing: {missing}\n  unexpected: {unexpected}\n  all findings:\n{details}")
