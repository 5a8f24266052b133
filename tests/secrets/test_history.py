"""``spikelint history`` on real temporary Git repositories: a token edited away, a deleted
file, a renamed file and a merged branch are each found once, at the commit that added them,
with the path at that commit; baselines, ``--since``, ranges, ``--jobs`` and every format."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from fakes import Fakes

from spikelint.cli import main
from spikelint.history import command as history_command
from spikelint.history.gitlog import parse_patch

FAKE = Fakes(2222)
FORMATS = ("text", "json", "sarif", "junit", "gitlab", "github")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *arguments: str, date: str = "2026-01-01T12:00:00+00:00") -> str:
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "PATH": "/usr/bin:/bin:/usr/local/bin",
           "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    result = subprocess.run(["git", "-c", "user.email=ci@example.org", "-c", "user.name=CI", "-c",
                             "commit.gpgsign=false", "-c", "init.defaultBranch=main", *arguments],
                            cwd=root, capture_output=True, text=True, check=True, env=env)
    return result.stdout.strip()


def commit(root: Path, files: dict[str, str | None], message: str, date: str = "2026-01-01T12:00:00+00:00") -> str:
    """Write (``None``: delete) ``files`` and commit them; returns the new commit's sha."""
    for name, body in files.items():
        path = root / name
        if body is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, date=date)
    return git(root, "rev-parse", "HEAD")


def new_repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


def lose(root: Path, sha: str, name: str) -> str:
    """Delete the object of ``name`` as commit ``sha`` holds it (a broken or partial clone); returns the object."""
    blob = git(root, "rev-parse", f"{sha}:{name}")
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return blob


class Story:
    """The four held-out shapes of a leak, each in its own commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir()
        git(root, "init", "-q")
        self.edited, self.deleted, self.renamed, self.merged = FAKE.hf(), FAKE.github(), FAKE.aws_key_id(), FAKE.slack()
        self.shas: dict[str, str] = {}
        self.shas["base"] = commit(root, {"README.md": "# demo\n", "deploy/values.yaml": "image: busybox:1.36.1\n"},
                                   "base", "2026-01-01T10:00:00+00:00")
        self.shas["edited"] = commit(root, {"deploy/values.yaml": f"image: busybox:1.36.1\nhfToken: {self.edited}\n"},
                                     "add a token", "2026-01-02T10:00:00+00:00")
        commit(root, {"deploy/values.yaml": "image: busybox:1.36.1\nhfToken: ''\n"}, "edit it away",
               "2026-01-03T10:00:00+00:00")
        self.shas["deleted"] = commit(root, {"scripts/push.sh": f"#!/bin/sh\nexport GITHUB_TOKEN={self.deleted}\n"},
                                      "a script", "2026-01-04T10:00:00+00:00")
        commit(root, {"scripts/push.sh": None}, "delete it", "2026-01-05T10:00:00+00:00")
        self.shas["renamed"] = commit(root, {"conf/old.env": f"AWS_ACCESS_KEY_ID={self.renamed}\nREGION=eu-west-1\n"},
                                      "credentials", "2026-01-06T10:00:00+00:00")
        git(root, "mv", "conf/old.env", "conf/new.env")
        git(root, "commit", "-q", "-m", "rename", date="2026-01-07T10:00:00+00:00")
        git(root, "checkout", "-q", "-b", "feature")
        self.shas["merged"] = commit(root, {"notify.py": f"SLACK = '{self.merged}'\n"}, "branch work",
                                     "2026-01-08T10:00:00+00:00")
        git(root, "checkout", "-q", "main")
        commit(root, {"README.md": "# demo\n\nmore\n"}, "main work", "2026-01-09T10:00:00+00:00")
        git(root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature", date="2026-01-10T10:00:00+00:00")
        self.shas["merge"] = git(root, "rev-parse", "HEAD")

    @property
    def secrets(self) -> list[str]:
        return [self.edited, self.deleted, self.renamed, self.merged]


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    return Story(tmp_path_factory.mktemp("history") / "repo")


def run(arguments: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    capsys.readouterr()
    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def findings(arguments: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out, err = run(["history", "--format", "json", *arguments], cwd, monkeypatch, capsys)
    assert code in (0, 1), err
    return list(json.loads(out)["findings"])


def test_four_of_four_with_their_commits_and_paths(story: Story, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    found = findings([], story.root, monkeypatch, capsys)
    assert sorted((f["path"], f["line"], f["commit"]) for f in found) == sorted([
        ("deploy/values.yaml", 2, story.shas["edited"]), ("scripts/push.sh", 2, story.shas["deleted"]),
        ("conf/old.env", 1, story.shas["renamed"]), ("notify.py", 1, story.shas["merged"])])
    dates = {f["path"]: f["date"] for f in found}
    assert dates["deploy/values.yaml"].startswith("2026-01-02") and dates["notify.py"].startswith("2026-01-08")
    assert all(f["rule"] == "SPK201" and f["commit"][:12] in f["message"] for f in found)


def test_check_sees_only_what_the_tree_still_holds(story: Story, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", "--format", "json", "--select", "SPK2", "."], story.root, monkeypatch, capsys)
    # the edited-away and the deleted tokens are gone from the tree; the renamed file and the merged branch remain
    assert [f["path"] for f in json.loads(out)["findings"]] == ["conf/new.env", "notify.py"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_raw_token_in_any_format(fmt: str, story: Story, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["history", "--format", fmt], story.root, monkeypatch, capsys)
    assert code == 1
    assert not [secret for secret in story.secrets if secret in out + err]
    report = tmp_path / "report"
    run(["history", "--format", fmt, "--output", str(report)], story.root, monkeypatch, capsys)
    written = report.read_text(encoding="utf-8")
    assert not [secret for secret in story.secrets if secret in written]
    if fmt in ("json", "sarif", "gitlab"):
        data = json.loads(written)
        if fmt == "sarif":
            assert {result["properties"]["commit"] for result in data["runs"][0]["results"]} == {
                story.shas[name] for name in ("edited", "deleted", "renamed", "merged")}
    elif fmt == "junit":
        ElementTree.fromstring(written)
    elif fmt == "text":
        assert f"conf/old.env:1:19: SPK201 [error] hardcoded AKIA… (AWS access key ID) added in commit " \
               f"{story.shas['renamed'][:12]} (2026-01-06)" in written


def test_history_writes_repeated_reports_from_one_scan(story: Story, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    sarif, junit = tmp_path / "h.sarif", tmp_path / "h.xml"
    code, out, err = run(["history", "--format", "sarif", "--output", str(sarif), "--format", "junit", "--output",
                          str(junit), "--format", "json"], story.root, monkeypatch, capsys)
    assert code == 1 and err.count("commits scanned") == 1
    assert len(json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]) == 4
    ElementTree.fromstring(junit.read_text(encoding="utf-8"))
    assert len(json.loads(out)["findings"]) == 4


def test_a_history_baseline_silences_the_old_and_reports_the_new(story: Story, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(story.root), str(clone)], check=True, capture_output=True)
    baseline = tmp_path / "history-baseline.json"
    code, _, err = run(["history", "--write-baseline", str(baseline)], clone, monkeypatch, capsys)
    assert code == 0 and "wrote 4 findings" in err
    assert "rotate it (spikelint history --baseline none --ignore SPK207 lists them)" in err
    assert not [secret for secret in story.secrets if secret in baseline.read_text(encoding="utf-8")]
    code, out, _ = run(["history", "--baseline", "none", "--ignore", "SPK207", "--format", "json"], clone,
                       monkeypatch, capsys)  # the command the warning names lists the four
    assert code == 1 and len(json.loads(out)["findings"]) == 4
    code, out, _ = run(["history", "--baseline", str(baseline), "--format", "json"], clone, monkeypatch, capsys)
    assert code == 0 and json.loads(out)["findings"] == [] and json.loads(out)["summary"]["baselined"] == 4
    fresh = FAKE.openai()
    sha = commit(clone, {"later.env": f"OPENAI_API_KEY={fresh}\n"}, "a new leak", "2026-02-01T10:00:00+00:00")
    code, out, _ = run(["history", "--baseline", str(baseline), "--format", "json"], clone, monkeypatch, capsys)
    assert code == 1 and [(f["path"], f["commit"]) for f in json.loads(out)["findings"]] == [("later.env", sha)]


def test_ranges_and_since(story: Story, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pushed = findings([f"{story.shas['deleted']}..HEAD"], story.root, monkeypatch, capsys)
    assert sorted(f["path"] for f in pushed) == ["conf/old.env", "notify.py"]
    assert [f["path"] for f in findings(["--since", "2026-01-07"], story.root, monkeypatch, capsys)] == ["notify.py"]
    assert findings([f"{story.shas['merge']}^1..{story.shas['merge']}^1"], story.root, monkeypatch, capsys) == []


def test_jobs_give_the_same_findings(story: Story, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    alone = findings(["--jobs", "1"], story.root, monkeypatch, capsys)
    monkeypatch.setattr(history_command, "MIN_COMMITS_PER_WORKER", 2)  # split these few commits over workers
    assert findings(["--jobs", "3"], story.root, monkeypatch, capsys) == alone


def test_a_token_added_again_by_a_later_edit_is_one_finding_and_pragmas_hold(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    token, allowed = FAKE.hf(), FAKE.github()
    first = commit(root, {"run.sh": f"export HF_TOKEN={token}\n"}, "one")
    commit(root, {"run.sh": f"export HF_TOKEN={token}  # still here\n",
                  "ok.sh": f"export GITHUB_TOKEN={allowed}  # pragma: allowlist secret\n"}, "two")
    assert [(f["path"], f["commit"]) for f in findings([], root, monkeypatch, capsys)] == [("run.sh", first)]


def test_outside_git_and_a_bad_revision_are_usage_errors(tmp_path: Path, story: Story,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["history"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "not a git repository" in err.lower() and "Traceback" not in err
    code, _, err = run(["history", "no-such-branch"], story.root, monkeypatch, capsys)
    assert code == 2 and "no-such-branch" in err and "Traceback" not in err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_object_the_clone_lacks_leaves_out_one_file_not_the_scan(jobs: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A broken or partial clone: Git cannot read one file's content. That file is named on stderr; the same
    commit's other files, the commits before and after, and a later deletion of the file are still read."""
    monkeypatch.setattr(history_command, "MIN_COMMITS_PER_WORKER", 1)  # --jobs 2: two workers for three commits
    root = new_repository(tmp_path)
    before, beside, after = FAKE.hf(), FAKE.github(), FAKE.slack()
    commit(root, {"a.env": f"HF_TOKEN={before}\n"}, "first")
    broken = commit(root, {"clip.mov": "binary-ish content\n", "b.env": f"GITHUB_TOKEN={beside}\n"}, "second")
    commit(root, {"clip.mov": None, "c.env": f"SLACK_TOKEN={after}\n"}, "third")
    blob = lose(root, broken, "clip.mov")
    code, out, err = run(["history", "--format", "json", "--jobs", jobs], root, monkeypatch, capsys)
    assert code == 2 and "Traceback" not in err  # a secret gate fails closed: the file may have held one
    assert sorted(f["path"] for f in json.loads(out)["findings"]) == ["a.env", "b.env", "c.env"]
    assert f"commit {broken[:12]}: clip.mov was not read: Git cannot read object {blob[:12]}" in err
    assert err.count("was not read") == 1  # deleting it added nothing: nothing of the third commit is lost
    assert "the scan is incomplete: 1 file could not be read" in err
    (root / ".spikelint.yaml").write_text("exclude: ['**/*.mov']\n")
    code, out, err = run(["history", "--format", "json", "--jobs", jobs], root, monkeypatch, capsys)
    assert code == 1 and "incomplete" not in err and len(json.loads(out)["findings"]) == 3


def test_several_objects_one_commit_lacks_are_each_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = new_repository(tmp_path)
    token = FAKE.hf()
    commit(root, {"README.md": "# x\n"}, "first")
    broken = commit(root, {"a.bin": "one\n", "b.bin": "two\n", "m.env": f"HF_TOKEN={token}\n"}, "second")
    for name in ("a.bin", "b.bin"):
        lose(root, broken, name)
        (root / name).unlink()  # nor in the work tree, where Git would read it instead
    code, out, err = run(["history", "--format", "json"], root, monkeypatch, capsys)
    assert code == 2 and [f["path"] for f in json.loads(out)["findings"]] == ["m.env"]
    assert f"{broken[:12]}: a.bin was not read" in err and f"{broken[:12]}: b.bin was not read" in err
    assert "2 files could not be read" in err


def test_an_empty_repository_has_no_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    git(tmp_path, "init", "-q")
    code, _, err = run(["history"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "0 commits scanned" in err


def test_the_patch_parser_keeps_header_lookalikes_and_odd_paths() -> None:
    """An added line starting with ``++`` is content, not a header; C-quoted paths are decoded."""
    import io

    patch = ("\x1e" + "a" * 40 + " 2026-01-01T00:00:00+00:00\n\n"
             'diff --git "a/caf\\303\\251 x.txt" "b/caf\\303\\251 x.txt"\nnew file mode 100644\n'
             "--- /dev/null\n" '+++ "b/caf\\303\\251 x.txt"\n' "@@ -0,0 +1,2 @@\n+one\n+++ b/not-a-header\n"
             "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-old\n"
             "diff --git a/k.txt b/k.txt\n--- a/k.txt\n+++ b/k.txt\n@@ -3,0 +4 @@ ctx\n+four\n\\ No newline at end of file\n")
    runs = list(parse_patch(io.BytesIO(patch.encode("utf-8"))))
    assert [(run.path, run.line, run.lines) for run in runs] == [
        ("café x.txt", 1, ("one", "++ b/not-a-header")), ("k.txt", 4, ("four",))]


def test_added_python_lines_count_quoted_literals_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Without the rest of the file, ``one_ring_pass = partial(ring_pass, 1)`` is no password; a quoted one is."""
    root = new_repository(tmp_path)
    password = FAKE.password()
    sha = commit(root, {"ring.py": "one_ring_pass = partial(ring_pass, 1)\nrotary_part, pass_through = t[:2], t[2:]\n"
                                   f"db_password = \"{password}\"\n",
                        "settings.env": "DB_PASSWORD=${DB_PASSWORD}\n"}, "code")
    assert [(f["path"], f["line"], f["commit"]) for f in findings([], root, monkeypatch, capsys)] == [
        ("ring.py", 3, sha)]


def test_revision_options_that_select_commits_only(story: Story, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``HEAD --not --remotes`` (what a pre-push hook scans) works; ``--output=FILE`` never reaches Git."""
    assert len(findings(["--", "HEAD", "--not", "--remotes"], story.root, monkeypatch, capsys)) == 4
    target = tmp_path / "written"
    code, _, err = run(["history", "--", f"--output={target}"], story.root, monkeypatch, capsys)
    assert code == 2 and "not a revision" in err and not target.exists()


def test_a_bare_mirror_is_scanned_like_its_clone(story: Story, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(story.root), str(mirror)], check=True, capture_output=True)
    assert len(findings([], mirror, monkeypatch, capsys)) == 4


def test_a_token_written_while_resolving_a_merge_conflict_is_found_at_the_merge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """What the merge itself wrote (new against both parents) is read there; the rest never twice."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    commit(root, {"run.env": "MODE=a\n"}, "base")
    git(root, "checkout", "-q", "-b", "side")
    side_token = FAKE.github()
    side = commit(root, {"run.env": "MODE=side\n", "side.env": f"GITHUB_TOKEN={side_token}\n"}, "side")
    git(root, "checkout", "-q", "main")
    commit(root, {"run.env": "MODE=main\n"}, "main")
    subprocess.run(["git", "merge", "-q", "side"], cwd=root, capture_output=True, check=False)  # conflicts
    resolved = FAKE.hf()
    (root / "run.env").write_text(f"MODE=both\nHF_TOKEN={resolved}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-edit")
    merge = git(root, "rev-parse", "HEAD")
    assert sorted((f["path"], f["line"], f["commit"]) for f in findings([], root, monkeypatch, capsys)) == [
        ("run.env", 2, merge), ("side.env", 1, side)]


def test_the_patch_parser_reads_a_combined_diff_by_its_columns() -> None:
    import io

    patch = ("\x1e" + "b" * 40 + " 2026-01-01T00:00:00+00:00\n\n"
             "diff --cc run.env\nindex 1,1..2\n--- a/run.env\n+++ b/run.env\n"
             "@@@ -1,1 -1,1 +1,3 @@@\n- MODE=main\n -MODE=side\n++MODE=both\n++TOKEN=new\n + FROM_SIDE=1\n")
    runs = list(parse_patch(io.BytesIO(patch.encode("utf-8"))))
    assert [(run.path, run.line, run.lines) for run in runs] == [("run.env", 1, ("MODE=both", "TOKEN=new"))]


# --------------------------------------------------------------------------- one baseline for check and history


class Team:
    """A repository whose secrets ``check`` reports under four different rules (SPK201-SPK204)."""

    def __init__(self, root: Path) -> None:
        root.mkdir()
        git(root, "init", "-q")
        self.root = root
        self.tokens = {"SPK202": FAKE.hf(), "SPK203": FAKE.wandb(), "SPK204": FAKE.github(), "SPK201": FAKE.slack()}
        notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
            {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {}, "source": ["print(token)"],
             "outputs": [{"output_type": "stream", "name": "stdout", "text": [self.tokens["SPK204"] + "\n"]}]}]}
        self.files = {
            "k8s/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: sft}\nspec:\n  template:\n    spec:\n"
                            "      restartPolicy: Never\n      containers:\n        - name: t\n"
                            "          image: busybox:1.36.1\n          command: [sleep, '1']\n          env:\n"
                            f"            - name: HF_TOKEN\n              value: {self.tokens['SPK202']}\n",
            "scripts/launch.sh": f"#!/bin/bash\nset -euo pipefail\npython -u train.py --wandb_key {self.tokens['SPK203']}\n",
            "notebooks/explore.ipynb": json.dumps(notebook, indent=1) + "\n",
            "deploy/.env": f"SLACK_TOKEN={self.tokens['SPK201']}\n",
        }
        commit(root, self.files, "the team's first commit")


def secret_rules(arguments: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> tuple[int, list[tuple[str, str]], int]:
    """Exit code, (path, rule) of the secret findings, and how many were baselined."""
    code, out, err = run([arguments[0], "--format", "json", *arguments[1:]], cwd, monkeypatch, capsys)
    assert code in (0, 1), err
    data = json.loads(out)
    found = sorted((f["path"], f["rule"]) for f in data["findings"] if f["rule"] != "SPK207")
    return code, found, data["summary"]["baselined"]


def test_a_check_baseline_silences_the_same_secrets_in_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    team = Team(tmp_path / "team")
    code, found, _ = secret_rules(["check", "--select", "SPK2"], team.root, monkeypatch, capsys)
    assert {rule for _, rule in found} == {"SPK201", "SPK202", "SPK203", "SPK204"}
    assert run(["check", "--write-baseline", "baseline.json"], team.root, monkeypatch, capsys)[0] == 0
    code, found, baselined = secret_rules(["history", "--baseline", "baseline.json"], team.root, monkeypatch, capsys)
    assert (code, found, baselined) == (0, [], 4)  # was 1 of 4: only the SPK201 fingerprint matched
    fresh = FAKE.openai()
    commit(team.root, {"scripts/eval.sh": f"export OPENAI_API_KEY={fresh}\n"}, "a new leak")
    code, found, baselined = secret_rules(["history", "--baseline", "baseline.json"], team.root, monkeypatch, capsys)
    assert (code, found, baselined) == (1, [("scripts/eval.sh", "SPK201")], 4)
    assert not [token for token in [*team.tokens.values(), fresh] if token in (team.root / "baseline.json").read_text()]


def test_a_history_baseline_silences_the_same_secrets_in_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    team = Team(tmp_path / "team")
    assert run(["history", "--write-baseline", "history.json"], team.root, monkeypatch, capsys)[0] == 0
    code, found, baselined = secret_rules(["check", "--select", "SPK2", "--baseline", "history.json"], team.root,
                                          monkeypatch, capsys)
    assert (code, found, baselined) == (0, [], 4)
    # the same token twice in one file is one secret there; another token is new
    write_env = team.files["deploy/.env"] + f"BACKUP_SLACK_TOKEN={team.tokens['SPK201']}\nBOT_TOKEN={FAKE.slack()}\n"
    (team.root / "deploy" / ".env").write_text(write_env, encoding="utf-8")
    code, found, baselined = secret_rules(["check", "--select", "SPK2", "--baseline", "history.json"], team.root,
                                          monkeypatch, capsys)
    assert (code, found, baselined) == (1, [("deploy/.env", "SPK201")], 5)


def test_history_reads_the_configured_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The pre-push hook runs ``spikelint history -- HEAD --not --remotes``: the key is its only way to a baseline."""
    team = Team(tmp_path / "team")
    commit(team.root, {".spikelint.yaml": "baseline: .spikelint-baseline.json\n"}, "configure")
    code, _, err = run(["history", "--", "HEAD"], team.root, monkeypatch, capsys)
    assert code == 2 and ".spikelint.yaml" in err and "baseline: .spikelint-baseline.json" in err
    assert "--write-baseline" in err and "Traceback" not in err
    assert run(["check", "--write-baseline", ".spikelint-baseline.json"], team.root, monkeypatch, capsys)[0] == 0
    code, found, baselined = secret_rules(["history", "--", "HEAD"], team.root, monkeypatch, capsys)
    assert (code, found, baselined) == (0, [], 4)
    (team.root / "none.json").write_text('{"findings": []}', encoding="utf-8")
    code, found, _ = secret_rules(["history", "--baseline", "none.json", "--", "HEAD"], team.root, monkeypatch, capsys)
    assert code == 1 and len(found) == 4  # --baseline wins over the key


def test_a_baseline_written_before_one_fingerprint_per_secret_still_matches(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Entries of an older ``check`` baseline hashed the reporting rule's id: they still match in
    ``check`` where they did, and ``history`` now accepts them too."""
    import hashlib

    from spikelint.secrets.redact import secret_key

    team = Team(tmp_path / "team")
    places = {"SPK202": "k8s/job.yaml", "SPK203": "scripts/launch.sh", "SPK204": "notebooks/explore.ipynb",
              "SPK201": "deploy/.env"}
    entries = [{"fingerprint": hashlib.sha256("\0".join((rule, path, secret_key(team.tokens[rule]), "0")).encode())
                .hexdigest()[:32], "rule": rule, "path": path} for rule, path in places.items()]
    (team.root / "old.json").write_text(json.dumps({"version": 1, "findings": entries}), encoding="utf-8")
    for command in (["check", "--select", "SPK2"], ["history"]):
        code, found, baselined = secret_rules([*command, "--baseline", "old.json"], team.root, monkeypatch, capsys)
        assert (code, found, baselined) == (0, [], 4), command
    moved = {**places, "SPK202": "k8s/other-job.yaml"}  # an entry for another path matches nothing
    git(team.root, "mv", "k8s/job.yaml", moved["SPK202"])
    code, found, _ = secret_rules(["check", "--select", "SPK2", "--baseline", "old.json"], team.root, monkeypatch, capsys)
    assert (code, found) == (1, [("k8s/other-job.yaml", "SPK202")])


def test_check_and_history_write_one_baseline_without_dropping_each_others_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's one baseline for every command and hook: a token added and removed lives only in history,
    the notebook's tokens in both; writing either command's entries keeps the other's."""
    team = Team(tmp_path / "team")
    gone = FAKE.hf()
    commit(team.root, {"scripts/tmp.sh": f"export HF_TOKEN={gone}\n"}, "oops")
    commit(team.root, {"scripts/tmp.sh": None}, "remove it")
    assert run(["check", "--write-baseline", "baseline.json"], team.root, monkeypatch, capsys)[0] == 0
    code, _, err = run(["history", "--write-baseline", "baseline.json"], team.root, monkeypatch, capsys)
    assert code == 0 and "kept" in err and "check entries already in it" in err
    assert secret_rules(["history", "--baseline", "baseline.json"], team.root, monkeypatch, capsys)[0] == 0
    assert secret_rules(["check", "--baseline", "baseline.json"], team.root, monkeypatch, capsys)[0] == 0
    code, _, err = run(["check", "--write-baseline", "baseline.json"], team.root, monkeypatch, capsys)
    assert "history entries already in it" in err
    assert secret_rules(["history", "--baseline", "baseline.json"], team.root, monkeypatch, capsys)[0] == 0
    assert gone not in (team.root / "baseline.json").read_text(encoding="utf-8")


def test_a_baseline_leaves_out_untracked_work_in_progress_and_warns_of_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    team = Team(tmp_path / "team")
    (team.root / "scripts" / "wip.sh").write_text(f"#!/bin/bash\nexport HF_TOKEN={FAKE.hf()}\n", encoding="utf-8")
    code, _, err = run(["check", "--write-baseline", "baseline.json"], team.root, monkeypatch, capsys)
    assert code == 0 and "left out 1 finding of files Git does not track" in err
    assert "the baseline holds 4 secrets" in err and "rotate it" in err
    git(team.root, "add", "scripts/wip.sh")
    code, found, _ = secret_rules(["check", "--select", "SPK2", "--baseline", "baseline.json"], team.root,
                                  monkeypatch, capsys)
    assert (code, found) == (1, [("scripts/wip.sh", "SPK201")])  # committing the work in progress is new


def test_history_decodes_as_check_does_and_leaves_go_vendor_folders_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A token base64-encoded in a ConfigMap and hex-encoded in a .env is found in the commits that added it, with
    the fingerprint check gives it (one baseline serves both); a vendored dependency's test key is not."""
    import base64

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    hf, github = FAKE.hf(), FAKE.github()
    commit(root, {"k8s/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n"
                                        f"  blob: {base64.b64encode(hf.encode()).decode()}\n",
                  ".env": f"CREDS={github.encode().hex()}\n", "go.mod": "module example.org/x\n",
                  "vendor/modules.txt": "# example.org/dep v1.0.0\n",
                  "vendor/example.org/dep/key_test.go": f"package dep\n\nconst key = \"{FAKE.github()}\"\n"}, "add")
    code, found, _ = secret_rules(["history"], root, monkeypatch, capsys)
    assert (code, found) == (1, [(".env", "SPK201"), ("k8s/settings.yaml", "SPK201")])
    assert run(["check", "--write-baseline", "baseline.json"], root, monkeypatch, capsys)[0] == 0
    code, found, baselined = secret_rules(["history", "--baseline", "baseline.json"], root, monkeypatch, capsys)
    assert (code, found, baselined) == (0, [], 2)


@pytest.mark.parametrize("since", ["notadate", "2026-13-45", "now"])
def test_a_since_git_reads_as_now_or_later_is_an_error_not_a_pass(since: str, story: Story,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """git takes any text as a date (``notadate`` is now): the gate would pass having read no commit."""
    status, _, err = run(["history", "--since", since], story.root, monkeypatch, capsys)
    assert status == 2
    assert f"--since {since!r} is not a date in the past" in err and "2 weeks ago" in err


def test_one_secret_in_a_baseline_of_check_and_history_is_counted_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """SPK202 from ``check`` and SPK201 from ``history`` share the secret's fingerprint: one leak, said as one."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "job.yaml").write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n"
                                   "    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n"
                                   "        image: busybox@sha256:" + "0" * 64 + "\n        env:\n"
                                   f"        - name: HF_TOKEN\n          value: {FAKE.hf()}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    run(["check", "--write-baseline", "baseline.json"], root, monkeypatch, capsys)
    code, _, err = run(["history", "--write-baseline", "baseline.json"], root, monkeypatch, capsys)
    assert code == 0 and "the baseline holds 1 secret:" in err and "(kept 1 check entry already in it)" in err
