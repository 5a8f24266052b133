"""Helpers for the adapter tests: parse a snippet as a named file and normalise it."""

from __future__ import annotations

from typing import Any
from typing import Callable

import pytest

from spikelint.adapters import workloads_in
from spikelint.config import Config
from spikelint.documents import parse_text
from spikelint.files import detect_kind
from spikelint.model import SourceFile
from spikelint.model import Workload


def load(filename: str, text: str, config: Config | None = None, strict: bool = True) -> list[Workload]:
    """The workloads of ``text`` read as file ``filename`` (``strict``: it must parse)."""
    document = parse_text(SourceFile(filename, filename, detect_kind(filename, text[:128])), text)
    assert not strict or not [p for p in document.problems if p.rule == "SPK001"], document.problems
    return workloads_in(document, config or Config())


def one(filename: str, text: str, config: Config | None = None) -> Workload:
    found = load(filename, text, config)
    assert len(found) == 1, found
    return found[0]


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the ``occurrence``-th line containing ``needle``."""
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in text")


def column_of(text: str, needle: str, occurrence: int = 1) -> int:
    line = text.splitlines()[line_of(text, needle, occurrence) - 1]
    return line.index(needle) + 1


@pytest.fixture
def workloads() -> Callable[..., list[Workload]]:
    return load


@pytest.fixture
def workload() -> Callable[..., Workload]:
    return one


def summary(workload: Workload) -> dict[str, Any]:
    """The policy-relevant facts of a workload, independent of the format it was written in."""
    main = workload.main_containers()[0]
    return {
        "image": main.image.value if main.image else None,
        "gpus_total": workload.gpus_total.value if workload.gpus_total else None,
        "pods": workload.pods,
        "env": sorted((str(v.name.value), v.value.value if v.value else None, v.reference is not None)
                      for v in main.env),
        "mounts": sorted((str(m.path.value), bool(m.volume and m.volume.persistent), m.read_only)
                         for m in main.mounts),
        "retries": workload.retries.value if workload.retries else workload.default_retries,
        "grace": workload.grace_period.value if workload.grace_period else None,
        "working_dir": main.working_dir.value if main.working_dir else None,
        "words": [str(w.value) for w in main.command + main.args],
        "is_training": workload.is_training,
        "preemptible": workload.preemptible,
    }
