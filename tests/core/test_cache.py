"""The result cache: unchanged files are not checked again, and anything a result depends on invalidates it."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import VALUES_LATEST
from core_support import VALUES_PINNED
from core_support import write

from spikelint import engine as engine_module
from spikelint.pipeline.cache import FOLDER
from spikelint.config import Config
from spikelint.engine import check_paths

JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: ft}
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: busybox:1.36.1@sha256:%s
          args: ["--config", "/workspace/configs/exp-7.yaml"]
""" % ("a" * 64)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the engine actually checked (not taken from the cache), run after run."""
    seen: list[str] = []
    real = engine_module._check_sources

    def spy(engine: engine_module.Engine, plan: engine_module._Plan, jobs: int | None) -> list[engine_module.FileResult]:
        seen.extend(source.path for source in plan.sources[:plan.first_dependent])
        return real(engine, plan, jobs)

    monkeypatch.setattr(engine_module, "_check_sources", spy)
    return seen


def run(root: Path):
    return check_paths(["."], Config(), cwd=root, jobs=1, cache=True).report


def test_a_second_run_checks_only_what_changed(tmp_path: Path, checked: list[str]) -> None:
    write(tmp_path, {"a/values.yaml": VALUES_LATEST, "b/values.yaml": VALUES_PINNED})
    first = run(tmp_path)
    assert sorted(checked) == ["a/values.yaml", "b/values.yaml"]
    checked.clear()
    second = run(tmp_path)
    assert checked == [] and second.findings == first.findings and second.sources == first.sources
    (tmp_path / "b/values.yaml").write_text(VALUES_LATEST, encoding="utf-8")
    third = run(tmp_path)
    assert checked == ["b/values.yaml"] and len(third.findings) == 2 * len(first.findings)
    assert (tmp_path / FOLDER / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_a_new_file_a_workload_refers_to_invalidates_it(tmp_path: Path, checked: list[str]) -> None:
    write(tmp_path, {"k8s/job.yaml": JOB, "other.yaml": "a: 1\n"})
    run(tmp_path)
    checked.clear()
    write(tmp_path, {"configs/exp-7.yaml": "lr: 0.1\n"})
    run(tmp_path)
    assert sorted(checked) == ["configs/exp-7.yaml", "k8s/job.yaml"]  # other.yaml came from the cache
    checked.clear()
    (tmp_path / "configs/exp-7.yaml").write_text("lr: 0.2\n", encoding="utf-8")
    run(tmp_path)
    assert sorted(checked) == ["configs/exp-7.yaml", "k8s/job.yaml"]


SCRIPT_JOB = JOB.replace('args: ["--config", "/workspace/configs/exp-7.yaml"]',
                         'command: [torchrun, train.py, --output_dir, /out]')


def test_every_workload_that_runs_a_script_depends_on_the_modules_it_imports(tmp_path: Path,
                                                                             checked: list[str]) -> None:
    """Two jobs run one script, read once per run: both are re-checked when a module it imports changes."""
    write(tmp_path, {"k8s/a.yaml": SCRIPT_JOB, "k8s/b.yaml": SCRIPT_JOB.replace("name: ft", "name: ft2"),
                     "train.py": "from trainer.loop import fit\n", "trainer/loop.py": "def fit():\n    pass\n",
                     "other.yaml": "a: 1\n"})
    run(tmp_path)
    checked.clear()
    (tmp_path / "trainer/loop.py").write_text("def fit():\n    get_last_checkpoint(out)\n", encoding="utf-8")
    run(tmp_path)
    assert sorted(checked) == ["k8s/a.yaml", "k8s/b.yaml", "trainer/loop.py"]
    checked.clear()
    write(tmp_path, {"src/trainer/loop.py": "x = 1\n"})  # a second module of that name: a resolution may change
    run(tmp_path)
    assert sorted(checked) == ["k8s/a.yaml", "k8s/b.yaml", "src/trainer/loop.py"]


def test_other_settings_do_not_reuse_results(tmp_path: Path, checked: list[str]) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    run(tmp_path)
    checked.clear()
    report = check_paths(["."], Config(select=("SPK2",)), cwd=tmp_path, jobs=1, cache=True).report
    assert checked == ["values.yaml"] and report.findings == []


def test_a_damaged_cache_is_ignored_and_never_linted(tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    first = run(tmp_path)
    for stored in (tmp_path / FOLDER).glob("*.json"):
        stored.write_text("{not json", encoding="utf-8")
    second = run(tmp_path)
    assert second.findings == first.findings and set(second.sources) == {"values.yaml"}


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    check_paths(["."], Config(), cwd=tmp_path, jobs=1)
    assert not (tmp_path / FOLDER).exists()
