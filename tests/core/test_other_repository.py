"""``spikelint check ../other-repo``: judged in that repository, as ``cd ../other-repo && spikelint check .``.

A new user checked a clone from another folder: the clone's configuration was not read, its baseline
matched nothing (fingerprints keyed on paths from the wrong root), ``--diff HEAD~1`` compared against the
current folder's repository and SARIF named the wrong root.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from core_support import commit_all
from core_support import init_repo
from core_support import write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: ft}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: reg.example.org/team/train:latest
          command: [python, train.py]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _theirs(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "clone")
    write(repo, {".spikelint.yaml": "ignore: [SPK702, SPK704]\n", "k8s/job.yaml": JOB})
    commit_all(repo)
    return repo


def _findings(out: str) -> list[tuple[str, str, int]]:
    return sorted((f["path"], f["rule"], f["line"]) for f in json.loads(out)["findings"])


@pytest.mark.parametrize("from_a_repository", [True, False])
def test_another_repository_is_judged_by_its_own_configuration_and_baseline(run_cli, tmp_path: Path,
                                                                           from_a_repository: bool) -> None:
    theirs = _theirs(tmp_path)
    inside = run_cli(["check", ".", "--format", "json"], cwd=theirs)
    assert not any(rule in ("SPK702", "SPK704") for _, rule, _ in _findings(inside.out))  # its configuration
    assert run_cli(["check", ".", "--write-baseline", "baseline.json"], cwd=theirs).code == 0
    here = init_repo(tmp_path / "mine") if from_a_repository else tmp_path / "elsewhere"
    here.mkdir(exist_ok=True)
    write(here, {"k8s/unrelated.yaml": JOB.replace("name: ft", "name: other")})
    outside = run_cli(["check", "../clone", "--format", "json"], cwd=here)
    assert _findings(outside.out) == _findings(inside.out)
    assert f"checking in {theirs.resolve()}, the Git repository of the given paths" in outside.err
    gated = run_cli(["check", str(theirs / "k8s"), "--baseline", "../clone/baseline.json"], cwd=here)
    assert gated.code == 0 and "baselined" in gated.err
    sarif = run_cli(["check", "../clone", "--format", "sarif", "--output", "report.sarif"], cwd=here)
    assert sarif.code == 1 and (here / "report.sarif").is_file()  # the report lands where the user said
    run = json.loads((here / "report.sarif").read_text(encoding="utf-8"))["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == theirs.resolve().as_uri() + "/"
    assert Path.cwd() == here  # the run leaves the current folder as it found it


def test_diff_compares_with_a_revision_of_the_repository_checked(run_cli, tmp_path: Path) -> None:
    theirs = _theirs(tmp_path)
    write(theirs, {"k8s/new.yaml": JOB.replace("name: ft", "name: new")})
    commit_all(theirs)
    here = init_repo(tmp_path / "mine")
    write(here, {"README.md": "mine\n"})
    commit_all(here)  # one commit: HEAD~1 does not exist here
    diffed = run_cli(["check", "../clone", "--diff", "HEAD~1", "--format", "json"], cwd=here)
    assert {path for path, _, _ in _findings(diffed.out)} == {"k8s/new.yaml"}


def test_paths_inside_the_current_repository_are_checked_where_they_are(run_cli, tmp_path: Path) -> None:
    theirs = _theirs(tmp_path)
    sub = run_cli(["check", "k8s", "--format", "json"], cwd=theirs)
    assert "checking in" not in sub.err and {path for path, _, _ in _findings(sub.out)} == {"k8s/job.yaml"}
    nested = run_cli(["check", "job.yaml", "--format", "json"], cwd=theirs / "k8s")
    assert "checking in" not in nested.err and {path for path, _, _ in _findings(nested.out)} == {"job.yaml"}


LAUNCH = "#!/bin/bash\nset -o pipefail\npython train.py | tee /shared/logs/run.log\n"


def test_fix_is_judged_in_the_other_repository_too(run_cli, tmp_path: Path) -> None:
    """``fix --dry-run ../clone/launch.sh`` offered a fix the clone's configuration ignores, counted findings its
    configuration ignores, and printed a diff whose paths (``a/../../clone/…``) applied nowhere."""
    theirs = _theirs(tmp_path)
    write(theirs, {"launch.sh": LAUNCH, ".spikelint.yaml": "ignore: [SPK702, SPK704, SPK502]\n"})
    commit_all(theirs)
    here = init_repo(tmp_path / "mine")
    ignored = run_cli(["fix", "--dry-run", "../clone/launch.sh"], cwd=here)
    assert ignored.code == 0 and ignored.out == "" and "checking in" in ignored.err  # SPK502 is ignored there
    write(theirs, {".spikelint.yaml": "ignore: [SPK702, SPK704]\n"})
    diffed = run_cli(["fix", "--dry-run", "../clone/launch.sh"], cwd=here)
    assert diffed.code == 1 and diffed.out.startswith("--- a/launch.sh\n+++ b/launch.sh\n")


def test_paths_in_two_repositories_are_refused_with_the_reason(run_cli, tmp_path: Path) -> None:
    theirs = _theirs(tmp_path)
    here = init_repo(tmp_path / "mine")
    write(here, {"k8s/job.yaml": JOB})
    mixed = run_cli(["check", "k8s", "../clone/k8s"], cwd=here)
    assert mixed.code == 2 and "the given paths are in 2 Git repositories" in mixed.err
    assert "check one repository at a time" in mixed.err and str(theirs.resolve()) in mixed.err
