"""Writes through committed links and crafted file names: a contribution controls both."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from core_support import VALUES_LATEST
from core_support import write

from spikelint.util.escape import printable
from spikelint.util.escape import shell_inert_path
from spikelint.report.github import escape_data
from spikelint.report.github import escape_property
from spikelint.util.safe_write import UnsafeTarget
from spikelint.util.safe_write import write_text_safely

pytestmark = pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("precious\n", encoding="utf-8")
    return victim


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "gitlab", "github"])
def test_output_refuses_a_committed_link(run_cli, tmp_path: Path, fmt: str) -> None:
    victim = _victim(tmp_path)
    repo = write(tmp_path / "repo", {"values.yaml": VALUES_LATEST})
    (repo / "spikelint.sarif").symlink_to(victim)
    outcome = run_cli(["check", "--format", fmt, "--output", "spikelint.sarif", "."], cwd=repo)
    assert outcome.code == 2
    assert "symbolic link" in outcome.err and "spikelint.sarif" in outcome.err
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (repo / "spikelint.sarif").is_symlink()


def test_output_refuses_a_linked_folder(run_cli, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    repo = write(tmp_path / "repo", {"values.yaml": VALUES_LATEST})
    (repo / "reports").symlink_to(victim.parent, target_is_directory=True)
    outcome = run_cli(["check", "--format", "json", "--output", "reports/victim.txt", "."], cwd=repo)
    assert outcome.code == 2 and "symbolic link" in outcome.err
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_write_baseline_refuses_a_link(run_cli, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    repo = write(tmp_path / "repo", {"values.yaml": VALUES_LATEST})
    (repo / ".spikelint-baseline.json").symlink_to(victim)
    outcome = run_cli(["check", "--write-baseline", ".spikelint-baseline.json", "."], cwd=repo)
    assert outcome.code == 2 and "symbolic link" in outcome.err
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_a_dangling_link_is_refused_too(run_cli, tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {"values.yaml": VALUES_LATEST})
    (repo / "out.json").symlink_to(tmp_path / "would-be-created.json")
    outcome = run_cli(["check", "--format", "json", "--output", "out.json", "."], cwd=repo)
    assert outcome.code == 2
    assert not (tmp_path / "would-be-created.json").exists()


def test_ordinary_writes_replace_the_file_and_leave_no_temporary(run_cli, tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {"values.yaml": VALUES_LATEST, "out.json": "old"})
    outcome = run_cli(["check", "--format", "json", "--output", "out.json", "."], cwd=repo)
    assert outcome.code == 1
    assert json.loads((repo / "out.json").read_text(encoding="utf-8"))["findings"]
    outcome = run_cli(["check", "--write-baseline", "base.json", "."], cwd=repo)
    assert outcome.code == 0 and json.loads((repo / "base.json").read_text(encoding="utf-8"))["findings"]
    assert sorted(path.name for path in repo.iterdir()) == ["base.json", "out.json", "values.yaml"]


def test_write_text_safely_refuses_a_folder_and_absolute_links(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(UnsafeTarget):
        write_text_safely(tmp_path / "folder", "x")
    victim = _victim(tmp_path)
    (tmp_path / "link").symlink_to(victim)
    with pytest.raises(UnsafeTarget):
        write_text_safely(tmp_path / "link", "x")
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_precheck_init_refuses_a_linked_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.run.manifest import write_json_atomic

    victim = _victim(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").symlink_to(victim)
    with pytest.raises(OSError, match="symbolic link"):
        write_json_atomic(tmp_path / "run" / "manifest.json", {"a": 1})
    assert victim.read_text(encoding="utf-8") == "precious\n"


# --------------------------------------------------------------------------- crafted names


NASTY = "a\n::error file=x.py::forged\r\x1b[2J$(touch PWNED).yaml"


def test_no_raw_control_character_from_a_name_in_text() -> None:
    shown = shell_inert_path(NASTY)
    assert "\n" not in shown and "\r" not in shown and "\x1b" not in shown
    assert shown.startswith("'") and shown.endswith("'")
    assert shell_inert_path("deploy/train job.yaml") == "deploy/train job.yaml"
    assert shell_inert_path("deploy/train.yaml") == "deploy/train.yaml"
    assert printable("tab\there") == "tab\\there"


def test_github_escaping_of_data_and_properties() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c\nd%") == "a%3Ab%2Cc%0Ad%25"


@pytest.mark.skipif(os.name == "nt", reason="newlines in names are POSIX only")
@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_name_with_a_newline_forges_no_line(run_cli, tmp_path: Path, fmt: str) -> None:
    name = "x\n::error file=forged.py,line=1::forged\n$(touch PWNED)/values.yaml"
    repo = write(tmp_path / "repo", {name: VALUES_LATEST})
    outcome = run_cli(["check", "--format", fmt, "."], cwd=repo)
    assert outcome.code == 1
    lines = (outcome.out + outcome.err).splitlines()
    assert not any(line.startswith("::error file=forged") for line in lines)
    assert not any(line.startswith("$(touch") for line in lines)
    if fmt == "text":
        assert lines[0].startswith("'x\\n::error")


def test_internal_error_messages_escape_the_name(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import spikelint.engine as engine

    name = "bad\n::error::forged/values.yaml"
    repo = write(tmp_path / "repo", {name: VALUES_LATEST})

    def crash(document, config):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom\n::error::forged")

    monkeypatch.setattr(engine, "workloads_in", crash)
    outcome = run_cli(["check", "--jobs", "1", "."], cwd=repo)
    assert outcome.code == 2 and "internal error" in outcome.err
    assert not any(line.startswith("::error") for line in outcome.err.splitlines())
