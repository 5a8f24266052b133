"""Baselines (fingerprints survive unrelated edits) and the ``--diff`` merge-request gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import commit_all
from core_support import init_repo
from core_support import write

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

TWO_IMAGES = "replicaCount: 1\nimage: busybox:latest\nsidecar:\n  image: alpine:3.1\n"


# --------------------------------------------------------------------------- baseline


def test_baseline_round_trip(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"deploy/values.yaml": TWO_IMAGES})
    written = run_cli(["check", "--write-baseline", "baseline.json"], cwd=tmp_path)
    assert written.code == 0 and "2 findings" in written.err
    data = json.loads((tmp_path / "baseline.json").read_text())
    assert data["version"] == 1 and len(data["findings"]) == 2
    assert all(set(entry) == {"fingerprint", "rule", "path", "source"} for entry in data["findings"])
    assert {entry["source"] for entry in data["findings"]} == {"check"}  # history writes "history" beside them

    again = run_cli(["check", "--baseline", "baseline.json", "--format", "json"], cwd=tmp_path)
    assert again.code == 0 and again.json()["findings"] == []
    assert again.json()["summary"]["baselined"] == 2


def test_baselined_findings_survive_edits_above_them(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": TWO_IMAGES})
    run_cli(["check", "--write-baseline", "baseline.json"], cwd=tmp_path)
    edited = "# owner: ml-platform\n# reviewed 2026-05\n\nreplicaCount: 3\nimage:   busybox:latest\nsidecar:\n" \
             "    image: alpine:3.1\n"
    write(tmp_path, {"values.yaml": edited})
    outcome = run_cli(["check", "--baseline", "baseline.json", "--format", "json"], cwd=tmp_path)
    assert outcome.code == 0 and outcome.json()["findings"] == []


def test_new_findings_are_reported_despite_the_baseline(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    run_cli(["check", "--write-baseline", "baseline.json"], cwd=tmp_path)
    write(tmp_path, {"values.yaml": VALUES_LATEST + "worker:\n  image: busybox:latest\n",
                     "other/values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--baseline", "baseline.json", "--format", "json"], cwd=tmp_path)
    assert outcome.code == 1
    assert outcome.pairs() == {("values.yaml", 4, "SPK101"), ("other/values.yaml", 2, "SPK101")}
    assert outcome.json()["summary"]["baselined"] == 1


def test_changed_offending_value_is_a_new_finding(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    run_cli(["check", "--write-baseline", "baseline.json"], cwd=tmp_path)
    write(tmp_path, {"values.yaml": VALUES_LATEST.replace("busybox", "alpine")})
    assert run_cli(["check", "--baseline", "baseline.json"], cwd=tmp_path).code == 1


def test_identical_findings_get_distinct_fingerprints(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": "a:\n  image: busybox:latest\nb:\n  image: busybox:latest\n"})
    outcome = run_cli(["check", "--format", "json"], cwd=tmp_path)
    prints = [f["fingerprint"] for f in outcome.json()["findings"]]
    assert len(prints) == 2 and len(set(prints)) == 2


def test_baseline_never_holds_the_offending_text(run_cli, tmp_path: Path) -> None:
    token = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmPlOkMnIj"
    write(tmp_path, {"train.yaml": f"hub:\n  token: {token}\n", "values.yaml": VALUES_LATEST})
    run_cli(["check", "--write-baseline", "baseline.json"], cwd=tmp_path)
    text = (tmp_path / "baseline.json").read_text()
    assert {entry["rule"][:4] for entry in json.loads(text)["findings"]} == {"SPK1", "SPK2"}
    assert token not in text and token[4:12] not in text and "busybox" not in text


@pytest.mark.parametrize(("content", "words"), [(None, "cannot read"), ("{not json", "not valid JSON"),
                                                 ('{"findings": 3}', "findings")])
def test_bad_baseline_exits_2(run_cli, tmp_path: Path, content: str | None, words: str) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    if content is not None:
        write(tmp_path, {"baseline.json": content})
    outcome = run_cli(["check", "--baseline", "baseline.json"], cwd=tmp_path)
    assert outcome.code == 2 and words in outcome.err


# --------------------------------------------------------------------------- --diff


@needs_git
def test_diff_reports_only_changed_lines_and_new_files(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"values.yaml": VALUES_LATEST, "old/values.yaml": VALUES_FLOATING})
    commit_all(repo, "base")
    write(repo, {"values.yaml": "# new header\n" + VALUES_LATEST + "worker:\n  image: alpine:3.1\n",
                 "new/values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--diff", "HEAD", "--format", "json"], cwd=repo)
    assert outcome.pairs() == {("values.yaml", 5, "SPK102"), ("new/values.yaml", 2, "SPK101")}
    assert outcome.code == 1
    full = run_cli(["check", "--format", "json"], cwd=repo)
    assert ("values.yaml", 3, "SPK101") in full.pairs() and ("old/values.yaml", 2, "SPK102") in full.pairs()


@needs_git
def test_diff_against_an_older_commit_and_from_a_subfolder(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"deploy/values.yaml": "replicaCount: 1\n"})
    commit_all(repo, "first")
    write(repo, {"deploy/values.yaml": VALUES_LATEST})
    commit_all(repo, "second")
    outcome = run_cli(["check", "--diff", "HEAD~1", "--format", "json", "."], cwd=repo / "deploy")
    assert outcome.pairs() == {("values.yaml", 2, "SPK101")}
    assert run_cli(["check", "--diff", "HEAD", "."], cwd=repo / "deploy").code == 0


@needs_git
def test_diff_with_an_unknown_revision_exits_2(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"values.yaml": VALUES_LATEST})
    commit_all(repo)
    outcome = run_cli(["check", "--diff", "no-such-branch"], cwd=repo)
    assert outcome.code == 2 and "no-such-branch" in outcome.err


@needs_git
def test_diff_outside_git_exits_2(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    assert run_cli(["check", "--diff", "HEAD"], cwd=tmp_path).code == 2


@needs_git
def test_diff_catches_a_deleted_protective_line(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    script = "#!/bin/bash\nset -euo pipefail\necho start\npython train.py | tee train.log\n"
    write(repo, {"train.sh": script})
    commit_all(repo, "base")
    assert run_cli(["check", "--diff", "HEAD", "--format", "json", "."], cwd=repo).pairs() == set()
    write(repo, {"train.sh": script.replace("set -euo pipefail\n", "")})
    outcome = run_cli(["check", "--diff", "HEAD", "--format", "json", "."], cwd=repo)
    assert ("train.sh", 3, "SPK501") in outcome.pairs(), "the finding sits on an unchanged line but is new"
    assert outcome.code == 1


@needs_git
def test_diff_catches_a_removed_volume_and_ignores_old_findings(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
           "      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox:latest\n"
           "        command: [python, train.py, --output_dir, /ckpt]\n"
           "        volumeMounts:\n        - name: data\n          mountPath: /ckpt\n"
           "      volumes:\n      - name: data\n        persistentVolumeClaim:\n          claimName: ckpt\n")
    write(repo, {"job.yaml": job})
    commit_all(repo, "base")
    before = run_cli(["check", "--format", "json", "."], cwd=repo).pairs()
    assert ("job.yaml", 11, "SPK101") in before
    cut = job[:job.index("        volumeMounts:")]
    write(repo, {"job.yaml": cut})
    outcome = run_cli(["check", "--diff", "HEAD", "--format", "json", "."], cwd=repo)
    rules = {rule for _, _, rule in outcome.pairs()}
    assert "SPK101" not in rules, "the mutable tag was there before"
    assert rules & {"SPK301", "SPK302"}, outcome.out


@needs_git
def test_diff_from_a_folder_that_is_new(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"README.md": "x\n"})
    commit_all(repo, "base")
    write(repo, {"deploy/values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--diff", "HEAD", "--format", "json", "."], cwd=repo / "deploy")
    assert outcome.pairs() == {("values.yaml", 2, "SPK101")}
