"""Discovery: Git listing vs tree walk, excludes, symlinks, special files, size limit, kinds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from core_support import VALUES_LATEST
from core_support import commit_all
from core_support import init_repo
from core_support import write

from spikelint.files import detect_kind
from spikelint.files import discover
from spikelint.files import matches_glob
from spikelint.model import FileKind

LIMIT = 5 * 1024 * 1024
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def found(root: Path, *paths: str, cwd: Path | None = None, **options: object) -> list[str]:
    result = discover(list(paths) or ["."], cwd=cwd or root, max_file_size=options.pop("max_file_size", LIMIT),
                      **options)  # type: ignore[arg-type]
    return sorted(source.path for source in result.files)


def skipped(root: Path, *paths: str, **options: object) -> dict[str, str]:
    result = discover(list(paths) or ["."], cwd=root, max_file_size=options.pop("max_file_size", LIMIT),
                      **options)  # type: ignore[arg-type]
    return dict(result.skipped)


# --------------------------------------------------------------------------- outside Git


def test_walk_outside_git_includes_dotfiles_and_skips_dot_git(tmp_path: Path) -> None:
    write(tmp_path, {"job.yaml": "a: 1\n", ".hidden/run.sh": "echo\n", ".env.yaml": "a: 1\n",
                     ".git/config": "[core]\n", "sub/.git/HEAD": "ref\n", "deep/er/x.json": "{}"})
    assert found(tmp_path) == [".env.yaml", ".hidden/run.sh", "deep/er/x.json", "job.yaml"]


def test_paths_are_relative_to_the_current_folder_and_slash_separated(tmp_path: Path) -> None:
    write(tmp_path, {"repo/k8s/job.yaml": "a: 1\n"})
    assert found(tmp_path / "repo", "k8s") == ["k8s/job.yaml"]
    assert found(tmp_path, "repo") == ["repo/k8s/job.yaml"]
    assert found(tmp_path / "repo" / "k8s", "../k8s/job.yaml") == ["job.yaml"]


def test_a_file_named_twice_is_checked_once(tmp_path: Path) -> None:
    write(tmp_path, {"a.yaml": "a: 1\n"})
    assert found(tmp_path, "a.yaml", ".", "./a.yaml") == ["a.yaml"]


def test_missing_paths_are_reported(tmp_path: Path) -> None:
    result = discover(["nope", "also/nope.yaml"], cwd=tmp_path, max_file_size=LIMIT)
    assert result.missing == ["nope", "also/nope.yaml"] and not result.files


def test_exclude_globs(tmp_path: Path) -> None:
    write(tmp_path, {"third_party/lib/job.yaml": "a: 1\n", "k8s/job.yaml": "a: 1\n", "k8s/gen/x.yaml": "a: 1\n",
                     "notes.md": "x\n"})
    assert found(tmp_path, exclude=("third_party/**", "*.md", "k8s/gen")) == ["k8s/job.yaml"]


@pytest.mark.parametrize(("path", "pattern", "matches"), [
    ("third_party/a/b.yaml", "third_party/**", True),
    ("src/third_party/b.yaml", "third_party/**", False),
    ("src/third_party/b.yaml", "**/third_party/**", True),
    ("a/b/c.json", "*.json", True),
    ("a/b/c.json", "a/*.json", False),
    ("a/b/c.json", "a/**/*.json", True),
    ("a/c.json", "a/**/*.json", True),
    ("vendor/x.yaml", "vendor", True),
    ("vendor/x.yaml", "vendor/", True),
    ("my-vendor/x.yaml", "vendor", False),
    ("examples/a.yaml", "/examples/**", True),
])
def test_glob_semantics(path: str, pattern: str, matches: bool) -> None:
    assert matches_glob(path, pattern) is matches


# --------------------------------------------------------------------------- symlinks and special files


def test_symlink_out_of_the_tree_is_skipped_and_said(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"secret.yaml": "token: x\n"})
    repo = write(tmp_path / "repo", {"job.yaml": "a: 1\n"})
    (repo / "leak.yaml").symlink_to(outside / "secret.yaml")
    (repo / "leakdir").symlink_to(outside, target_is_directory=True)
    assert found(repo) == ["job.yaml"]
    reasons = skipped(repo)
    assert "outside the scanned tree" in reasons["leak.yaml"]
    assert "leakdir/secret.yaml" not in found(repo)


def test_symlink_inside_the_tree_is_read(tmp_path: Path) -> None:
    repo = write(tmp_path, {"base/job.yaml": "a: 1\n"})
    (repo / "alias.yaml").symlink_to(repo / "base" / "job.yaml")
    assert found(repo) == ["alias.yaml", "base/job.yaml"]
    assert skipped(repo) == {}


def test_broken_and_looping_symlinks_do_not_crash(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "missing.yaml")
    (tmp_path / "loop1.yaml").symlink_to(tmp_path / "loop2.yaml")
    (tmp_path / "loop2.yaml").symlink_to(tmp_path / "loop1.yaml")
    assert found(tmp_path) == []
    assert set(skipped(tmp_path)) == {"broken.yaml", "loop1.yaml", "loop2.yaml"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_skipped_without_being_opened(tmp_path: Path) -> None:
    write(tmp_path, {"job.yaml": "a: 1\n"})
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it for reading would block forever
    assert found(tmp_path) == ["job.yaml"]
    assert skipped(tmp_path) == {"pipe.yaml": "not a regular file"}
    assert "pipe.yaml" in skipped(tmp_path, "pipe.yaml")


def test_unix_socket_is_skipped(tmp_path: Path) -> None:
    import socket

    short = Path("/tmp") / f"spk-sock-{os.getpid()}"
    short.mkdir(exist_ok=True)
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(short / "s.sock"))
        try:
            assert found(short) == []
            assert skipped(short) == {"s.sock": "not a regular file"}
        finally:
            server.close()
    finally:
        shutil.rmtree(short, ignore_errors=True)


# --------------------------------------------------------------------------- size limit and binaries


def test_files_above_the_size_limit_are_not_parsed(tmp_path: Path) -> None:
    write(tmp_path, {"big.yaml": "a: 1\n" * 20, "small.yaml": "a: 1\n"})
    assert found(tmp_path, max_file_size=50) == ["small.yaml"]
    result = discover(["."], cwd=tmp_path, max_file_size=50)
    assert [(source.path, size) for source, size in result.oversized] == [("big.yaml", 100)]


def test_media_and_archives_are_not_read_but_serialised_data_is_scanned(tmp_path: Path) -> None:
    write(tmp_path, {"model.pt": b"\x80\x02" + b"\0" * 10, "logo.png": b"\x89PNG\r\n", "job.yaml": "a: 1\n",
                     "image.tar": b"\0" * 1024, "wheel.whl": b"PK\0"})
    assert found(tmp_path) == ["image.tar", "job.yaml", "model.pt"]


# --------------------------------------------------------------------------- inside Git


@needs_git
def test_git_work_tree_honours_gitignore_and_keeps_untracked(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {".gitignore": "outputs/\n*.log\n", "k8s/job.yaml": "a: 1\n", "outputs/run.yaml": "a: 1\n",
                 "train.log": "x\n", "scripts/run.sh": "echo\n"})
    commit_all(repo)
    write(repo, {"new/untracked.yaml": "a: 1\n", "outputs/later.yaml": "a: 1\n"})
    assert found(repo) == [".gitignore", "k8s/job.yaml", "new/untracked.yaml", "scripts/run.sh"]


@needs_git
def test_git_subfolder_lists_only_that_folder(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"k8s/job.yaml": "a: 1\n", "other/x.yaml": "a: 1\n"})
    commit_all(repo)
    assert found(repo, "k8s") == ["k8s/job.yaml"]
    assert found(repo / "k8s", ".", cwd=repo / "k8s") == ["job.yaml"]


@needs_git
def test_git_deleted_but_tracked_file_is_not_an_error(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": "a: 1\n", "b.yaml": "a: 1\n"})
    commit_all(repo)
    (repo / "b.yaml").unlink()
    assert found(repo) == ["a.yaml"]
    assert skipped(repo) == {}


@needs_git
def test_git_symlink_out_of_the_tree_is_skipped(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"secret.yaml": "a: 1\n"})
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": "a: 1\n"})
    (repo / "leak.yaml").symlink_to(outside / "secret.yaml")
    commit_all(repo)
    assert found(repo) == ["a.yaml"]
    assert "outside the scanned tree" in skipped(repo)["leak.yaml"]


@needs_git
def test_git_submodule_folder_is_not_reported_as_a_special_file(tmp_path: Path) -> None:
    inner = init_repo(tmp_path / "inner")
    write(inner, {"x.yaml": "a: 1\n"})
    commit_all(inner)
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": "a: 1\n"})
    import subprocess

    subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "vendored"],
                   cwd=repo, check=True, capture_output=True)
    commit_all(repo)
    assert found(repo) == [".gitmodules", "a.yaml"]
    assert skipped(repo) == {}


@needs_git
def test_git_ignored_file_named_explicitly_is_still_checked(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {".gitignore": "*.yaml\n", "job.yaml": VALUES_LATEST})
    assert found(repo, "job.yaml") == ["job.yaml"]


# --------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(("name", "first_line", "kind"), [
    ("job.yaml", "", FileKind.YAML),
    ("job.YML", "", FileKind.YAML),
    ("body.json", "", FileKind.JSON),
    ("nb.ipynb", "", FileKind.NOTEBOOK),
    ("torchtitan.toml", "", FileKind.TOML),
    ("pyproject.toml", "", FileKind.TOML),
    ("train.py", "", FileKind.PYTHON),
    ("run.sh", "", FileKind.SHELL),
    ("run.bash", "", FileKind.SHELL),
    ("Dockerfile", "", FileKind.DOCKERFILE),
    ("dockerfile", "", FileKind.DOCKERFILE),
    ("train.Dockerfile", "", FileKind.DOCKERFILE),
    ("Dockerfile.cuda", "", FileKind.DOCKERFILE),
    ("Containerfile", "", FileKind.DOCKERFILE),
    ("image.tar", "", FileKind.IMAGE),
    ("launch", "#!/bin/bash", FileKind.SHELL),
    ("launch", "#!/usr/bin/env bash", FileKind.SHELL),
    ("launch", "#!/usr/bin/env -S bash -eu", FileKind.SHELL),
    ("launch", "#! /bin/sh -e", FileKind.SHELL),
    ("train", "#!/usr/bin/env python3", FileKind.PYTHON),
    ("Makefile", "all:", FileKind.TEXT),
    ("README.md", "", FileKind.TEXT),
    ("job.sbatch", "#!/bin/bash", FileKind.SHELL),
    ("README.md", "# Title", FileKind.TEXT),
    (".env", "", FileKind.TEXT),
])
def test_kind_detection(name: str, first_line: str, kind: str) -> None:
    assert detect_kind(name, first_line) == kind


def test_extensionless_script_kind_comes_from_its_shebang(tmp_path: Path) -> None:
    write(tmp_path, {"bin/launch": "#!/usr/bin/env bash\nset -euo pipefail\n", "bin/notes": "just text\n",
                     "slurm/train.sbatch": "#!/bin/bash\n#SBATCH --gres=gpu:8\n", "bin/train": "#!/usr/bin/python3\n"})
    kinds = {source.path: source.kind for source in discover(["."], cwd=tmp_path, max_file_size=LIMIT).files}
    assert kinds == {"bin/launch": FileKind.SHELL, "bin/notes": FileKind.TEXT, "slurm/train.sbatch": FileKind.SHELL,
                     "bin/train": FileKind.PYTHON}


FORMATS_WRITTEN = {"r.sarif": "sarif", "r.json": "json", "gl-code-quality-report.json": "gitlab", "j.xml": "junit",
                   "r.html": "html", "findings.txt": "text", "gh.log": "github"}


def test_reports_spikelint_wrote_are_left_out_and_said_so(tmp_path: Path, run_cli) -> None:
    """``check -o r.sarif`` inside the tree: the next run must not lint its own report (its rule help quotes
    suppression comments: SPK002 on each). Another tool's SARIF, which may hold a raw secret, is still read."""
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    for name, fmt in FORMATS_WRITTEN.items():
        assert run_cli(["check", "--format", fmt, "--output", name, "values.yaml"], cwd=tmp_path).code == 1
    write(tmp_path, {"gitleaks.sarif": '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "gitleaks"}}}]}\n',
                     "notes.txt": "values.yaml:1:1: a note that only looks like a finding\n"})
    result = discover(["."], cwd=tmp_path, max_file_size=LIMIT)
    assert sorted(source.path for source in result.files) == ["gitleaks.sarif", "notes.txt", "values.yaml"]
    assert {path for path, why in result.excluded if "a report spikelint wrote" in why} == set(FORMATS_WRITTEN)
    outcome = run_cli(["check", "."], cwd=tmp_path)
    assert "SPK002" not in outcome.out and "(3 files checked)" in outcome.err
