"""Worker processes: how many the work is worth, and the same findings whichever way it is split."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Iterable

import pytest

from core_support import VALUES_LATEST
from core_support import VALUES_PINNED
from core_support import write

from spikelint.config import Config
from spikelint.engine import Engine
from spikelint.engine import _Plan
from spikelint.engine import build_report
from spikelint.engine import check_paths
from spikelint.engine import check_sources
from spikelint.pipeline.workers import batches_by_cost
from spikelint.pipeline.workers import even_shares
from spikelint.pipeline.workers import run_split
from spikelint.pipeline.workers import worker_count
from spikelint.files import discover
from spikelint.model import FileKind
from spikelint.model import SourceFile
from spikelint.discovery.project import Project


def test_a_hook_sized_run_stays_in_process() -> None:
    assert worker_count(None, 1, 2_000, cpus=8) == 1
    assert worker_count(None, 72, 72 * 40, cpus=2) == 1  # start-up would cost more than it saves
    assert worker_count(8, 3, 9_000, cpus=8) == 1


def test_a_large_repository_uses_the_free_cpus() -> None:
    assert worker_count(None, 5_000, 3_000_000, cpus=2) == 2
    assert worker_count(None, 50_000, 30_000_000, cpus=8) == 8
    assert worker_count(None, 1, 4_000_000, cpus=8) == 1  # one file cannot be split


def test_jobs_is_an_upper_bound() -> None:
    assert worker_count(1, 50_000, 30_000_000, cpus=8) == 1
    assert worker_count(3, 50_000, 30_000_000, cpus=8) == 3
    assert worker_count(16, 50_000, 30_000_000, cpus=2) == 2  # never more workers than free CPUs


def test_two_workers_find_what_one_finds(tmp_path: Path) -> None:
    files = {f"svc{index:02d}/values.yaml": (VALUES_LATEST, VALUES_PINNED)[index % 2] for index in range(12)}
    write(tmp_path, files)
    engine = Engine.create(Config(), cwd=tmp_path)
    sources = discover(["."], cwd=tmp_path, max_file_size=1 << 20).files
    plan = _Plan(sources, sources, len(sources), frozenset(source.path for source in sources))
    serial = build_report(engine, check_sources(engine, plan, 1), len(sources))
    parallel = build_report(engine, check_sources(engine, plan, 2), len(sources))
    assert serial.findings == parallel.findings and len(serial.findings) == 6
    assert serial.sources == parallel.sources


def test_the_report_keeps_lines_only_where_a_finding_is_shown(tmp_path: Path) -> None:
    write(tmp_path, {"bad/values.yaml": VALUES_LATEST, "good/values.yaml": VALUES_PINNED})
    report = check_paths(["."], Config(), cwd=tmp_path, jobs=1).report
    assert set(report.sources) == {"bad/values.yaml", "good/values.yaml"}  # JUnit lists every checked file
    shown = {finding.line for finding in report.findings}
    expected = [line if number in shown else "" for number, line in enumerate(VALUES_LATEST.splitlines(), 1)]
    assert report.sources["bad/values.yaml"] == expected[:max(shown)]  # nothing after the last finding's line
    assert any(report.sources["bad/values.yaml"])
    assert report.sources["good/values.yaml"] == []


def test_a_checked_document_is_forgotten_unless_referenced(tmp_path: Path) -> None:
    write(tmp_path, {"a.yaml": "a: 1\n", "configs/exp-1.yaml": "lr: 0.1\n"})
    sources = [SourceFile("a.yaml", str(tmp_path / "a.yaml"), FileKind.YAML),
               SourceFile("configs/exp-1.yaml", str(tmp_path / "configs/exp-1.yaml"), FileKind.YAML)]
    project = Project(sources)
    project.document(sources[0])
    assert project.find_config("/workspace/configs/exp-1.yaml") is not None
    project.release("a.yaml")
    project.release("configs/exp-1.yaml")
    assert list(project.parsed) == ["configs/exp-1.yaml"]


def test_shares_are_even_by_cost_and_keep_index_order() -> None:
    shares = even_shares([5.0, 1.0, 1.0, 1.0, 1.0, 1.0], 2)
    assert shares == [[0], [1, 2, 3, 4, 5]]
    assert even_shares([1.0, 1.0, 1.0], 8) == [[0], [1], [2]]  # never an empty share
    assert even_shares([], 2) == []


def test_batches_put_the_costliest_first_and_a_large_file_alone() -> None:
    batches = batches_by_cost([1.0] * 30 + [50.0], 2, per_worker=4)
    assert batches[0] == [30]  # more than a batch's worth of work on its own
    assert sorted(index for batch in batches for index in batch) == list(range(31))
    assert all(batch == sorted(batch) for batch in batches)


def _squares(indices: Iterable[int]) -> list[int]:
    return [index * index for index in indices]


def test_every_index_is_checked_once_whichever_process_takes_it() -> None:
    assert sorted(run_split(_squares, [1.0] * 40, 3)) == [index * index for index in range(40)]
    assert run_split(_squares, [1.0] * 5, 1) == [0, 1, 4, 9, 16]


def test_the_batches_of_a_worker_that_fails_are_checked_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    parent = os.getpid()

    def only_here(indices: Iterable[int]) -> list[int]:
        found = []
        for index in indices:
            if os.getpid() != parent:
                raise MemoryError("a worker ran out of memory")
            time.sleep(0.02)  # slow enough here that the worker takes batches too
            found.append(index * index)
        return found

    assert sorted(run_split(only_here, [1.0] * 20, 2)) == [index * index for index in range(20)]
    assert "a worker process stopped early; checking its files in-process" in capsys.readouterr().err


def test_without_fork_a_process_pool_runs_even_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert sorted(run_split(_squares, [1.0, 1.0, 1.0], 2)) == [0, 1, 4]


def test_free_cpus_counts_what_runs_now_not_the_last_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.pipeline import workers

    monkeypatch.setattr(workers, "usable_cpus", lambda: 2)
    monkeypatch.setattr(workers, "_others_running", lambda: 0)
    assert workers.free_cpus() == 2  # a busy minute just ended: both CPUs are free now
    monkeypatch.setattr(workers, "_others_running", lambda: 1)
    assert workers.free_cpus() == 1
    monkeypatch.setattr(workers, "_others_running", lambda: 7)
    assert workers.free_cpus() == 1  # never fewer than this process


def test_a_process_with_other_threads_checks_in_process() -> None:
    import threading

    release = threading.Event()
    helper = threading.Thread(target=release.wait)
    helper.start()
    try:
        parent = os.getpid()
        seen: set[int] = set()

        def where(indices: Iterable[int]) -> list[int]:
            seen.add(os.getpid())
            return list(indices)

        assert sorted(run_split(where, [1.0] * 10, 2)) == list(range(10))
        assert seen == {parent}
    finally:
        release.set()
        helper.join()
