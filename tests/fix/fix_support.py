"""Running ``spikelint fix``/``check`` in a folder of fixture files, for the fix tests."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

from spikelint.cli import main


class Ran(NamedTuple):
    code: int
    out: str
    err: str


def run(folder: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> Ran:
    here = os.getcwd()
    os.chdir(folder)
    try:
        code = main(list(argv))
    finally:
        os.chdir(here)
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


def findings(folder: Path, capsys: pytest.CaptureFixture[str], *paths: str) -> list[dict[str, object]]:
    ran = run(folder, capsys, "check", "--format", "json", "--fail-on", "never", *(paths or (".",)))
    assert ran.code == 0, ran.err
    return list(json.loads(ran.out)["findings"])


def rules(found: list[dict[str, object]]) -> Counter[str]:
    return Counter(str(item["rule"]) for item in found)


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
