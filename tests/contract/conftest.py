"""Helpers for the run-contract tests: run the commands in-process, build run folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from typing import Callable
from typing import NamedTuple

import pytest

from spikelint.run import precheck
from spikelint.run import verify

HF_TOKEN = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm13572468"


class Outcome(NamedTuple):
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def run_precheck(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                 tmp_path: Path) -> Callable[..., Outcome]:
    monkeypatch.chdir(tmp_path)

    def call(*argv: str) -> Outcome:
        capsys.readouterr()
        code = precheck.main(list(argv))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return call


@pytest.fixture
def run_verify(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
               tmp_path: Path) -> Callable[..., Outcome]:
    monkeypatch.chdir(tmp_path)

    def call(*argv: str) -> Outcome:
        capsys.readouterr()
        code = verify.main(list(argv))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return call


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def contract_config(folder: Path, name: str = "run.json", **overrides: Any) -> Path:
    data: dict[str, Any] = {"schema_version": 1, "input": "prompts.jsonl", "batch_size": 4, "device": "cuda"}
    data.update(overrides)
    for key in [key for key, value in data.items() if value is ...]:
        del data[key]
    return write_json(folder / name, data)


def inputs(folder: Path, ids: list[Any], name: str = "prompts.jsonl") -> Path:
    return write_jsonl(folder / name, [{"id": identity, "text": f"prompt {identity}"} for identity in ids])


class RunFolder(NamedTuple):
    folder: Path
    config: Path
    input: Path

    def results(self, ids: list[Any]) -> Path:
        return write_jsonl(self.folder / "results.jsonl", [{"id": identity, "output": f"answer {identity}"}
                                                            for identity in ids])

    def errors(self, ids: list[Any], reason: str = "prompt too long") -> Path:
        return write_jsonl(self.folder / "errors.jsonl", [{"id": identity, "reason": reason, "stage": "validate"}
                                                           for identity in ids])

    def summary(self, **values: Any) -> Path:
        return write_json(self.folder / "summary.json", values)

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))

    def write_manifest(self, data: Any) -> Path:
        return write_json(self.folder / "manifest.json", data)


@pytest.fixture
def make_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., RunFolder]:
    """A run folder created by ``precheck --init``, then completed like a well-behaved run."""
    monkeypatch.chdir(tmp_path)

    def make(ids: list[Any] | None = None, rejected: list[Any] | None = None, complete: bool = True,
             name: str = "run") -> RunFolder:
        ids = ["p1", "p2", "p3", "p4"] if ids is None else ids
        rejected = ["p4"] if rejected is None else rejected
        source = inputs(tmp_path, ids)
        config = contract_config(tmp_path)
        code = precheck.main(["--config", str(config), "--run-dir", str(tmp_path / name), "--init"])
        capsys.readouterr()
        assert code == 0
        run = RunFolder(tmp_path / name, config, source)
        if complete:
            succeeded = [identity for identity in ids if identity not in rejected]
            run.results(succeeded)
            run.errors(rejected)
            run.summary(status="completed", received=len(ids), succeeded=len(succeeded), rejected=len(rejected),
                        pending=0, started="2024-05-01T12:00:00Z", finished="2024-05-01T12:30:00Z",
                        files=["results.jsonl", "errors.jsonl"])
        return run

    return make
