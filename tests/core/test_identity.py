"""Finding identities are keyed on the repository-root-relative path, whatever the current folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from core_support import commit_all
from core_support import init_repo
from core_support import write

from spikelint.pipeline.fingerprint import identity_path
from spikelint.pipeline.fingerprint import root_prefix

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
TWO_IMAGES = "replicaCount: 1\nimage: busybox:latest\nsidecar:\n  image: alpine:3.1\n"


def _fingerprints(outcome) -> set[str]:
    return {finding["fingerprint"] for finding in outcome.json()["findings"]}


@pytest.mark.parametrize(("path", "prefix", "expected"), [
    ("values.yaml", "", "values.yaml"),
    ("values.yaml", "deploy/", "deploy/values.yaml"),
    ("../other/a.yaml", "deploy/", "other/a.yaml"),
    ("../../outside.yaml", "deploy/", "../../outside.yaml"),
])
def test_identity_path(path: str, prefix: str, expected: str) -> None:
    assert identity_path(path, prefix) == expected


def test_root_prefix(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert root_prefix(tmp_path / "a" / "b", tmp_path) == "a/b/"
    assert root_prefix(tmp_path, tmp_path) == ""
    assert root_prefix(tmp_path, tmp_path / "a") == ""


@needs_git
def test_baseline_written_at_the_root_matches_from_a_sub_folder(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"deploy/values.yaml": TWO_IMAGES, "README.md": "x\n"})
    commit_all(repo)
    written = run_cli(["check", "--write-baseline", "baseline.json"], cwd=repo)
    assert written.code == 0 and "2 findings" in written.err
    from_sub = run_cli(["check", "--baseline", "../baseline.json", "--format", "json", "."], cwd=repo / "deploy")
    assert from_sub.code == 0, from_sub.out
    assert from_sub.json()["findings"] == [] and from_sub.json()["summary"]["baselined"] == 2
    # and the other way round: written in the sub-folder, used from the root
    run_cli(["check", "--write-baseline", "../sub-baseline.json", "."], cwd=repo / "deploy")
    from_root = run_cli(["check", "--baseline", "sub-baseline.json", "--format", "json"], cwd=repo)
    assert from_root.code == 0 and from_root.json()["summary"]["baselined"] == 2


@needs_git
@pytest.mark.parametrize("fmt", ["sarif", "gitlab"])
def test_sarif_and_gitlab_fingerprints_do_not_depend_on_the_folder(run_cli, tmp_path: Path, fmt: str) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"deploy/values.yaml": TWO_IMAGES})
    commit_all(repo)

    def prints(cwd: Path) -> tuple[set[str], set[str]]:
        data = json.loads(run_cli(["check", "--format", fmt, "."], cwd=cwd).out)
        if fmt == "sarif":
            results = data["runs"][0]["results"]
            return ({r["partialFingerprints"]["spikelint/v1"] for r in results},
                    {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results})
        return {issue["fingerprint"] for issue in data}, {issue["location"]["path"] for issue in data}

    at_root, in_sub = prints(repo), prints(repo / "deploy")
    assert at_root == in_sub and at_root[1] == {"deploy/values.yaml"}


def test_outside_git_the_configuration_folder_is_the_root(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "select: [SPK1]\n", "deploy/values.yaml": TWO_IMAGES})
    at_root = run_cli(["check", "--format", "json", "."], cwd=tmp_path)
    in_sub = run_cli(["check", "--format", "json", "."], cwd=tmp_path / "deploy")
    assert _fingerprints(at_root) == _fingerprints(in_sub) and len(_fingerprints(at_root)) == 2
