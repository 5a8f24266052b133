"""First-run experience: default excludes outside Git, --exclude, --show-files, --statistics, concise, colour."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import run_process
from core_support import write

from spikelint.files import discover

LIMIT = 5 * 1024 * 1024


def _tree(root: Path) -> Path:
    return write(root, {
        "deploy/values.yaml": VALUES_LATEST,
        ".venv/lib/python3.11/site-packages/pkg/test_keys.yaml": VALUES_LATEST,
        "env311/pyvenv.cfg": "home = /usr/bin\n",
        "env311/lib/values.yaml": VALUES_LATEST,
        "venv/x.yaml": VALUES_LATEST,
        "node_modules/pkg/values.yaml": VALUES_LATEST,
        "deploy/__pycache__/x.yaml": VALUES_LATEST,
        "build/lib/values.yaml": VALUES_LATEST,
        "dist/values.yaml": VALUES_LATEST,
        "pkg.egg-info/values.yaml": VALUES_LATEST,
        "lib/site-packages/values.yaml": VALUES_LATEST,
        "deploy/generated/values.yaml": VALUES_FLOATING,
    })


def test_default_excludes_outside_git(tmp_path: Path) -> None:
    result = discover(["."], cwd=_tree(tmp_path), max_file_size=LIMIT)
    assert sorted(source.path for source in result.files) == ["deploy/generated/values.yaml", "deploy/values.yaml"]
    left_out = {path for path, _ in result.excluded}
    assert {".venv/", "env311/", "venv/", "node_modules/", "deploy/__pycache__/", "build/", "dist/",
            "pkg.egg-info/", "lib/site-packages/"} <= left_out


def test_a_folder_named_explicitly_is_still_checked(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = discover(["build"], cwd=tmp_path, max_file_size=LIMIT)
    assert [source.path for source in result.files] == ["build/lib/values.yaml"]


def test_exclude_on_the_command_line_is_repeatable(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path)
    outcome = run_cli(["check", "--format", "json", "--exclude", "deploy/generated/**", "--exclude", "nothing*", "."],
                      cwd=tmp_path)
    assert {finding["path"] for finding in outcome.json()["findings"]} == {"deploy/values.yaml"}
    outcome = run_cli(["check", "--format", "json", "--exclude", "values.yaml", "."], cwd=tmp_path)
    assert outcome.json()["findings"] == [] and outcome.code == 0


def test_show_files_lists_kinds_and_reasons(run_cli, tmp_path: Path) -> None:
    _tree(tmp_path)
    write(tmp_path, {"deploy/logo.png": b"\x89PNG\r\n", "scripts/launch": "#!/usr/bin/env bash\necho hi\n"})
    outcome = run_cli(["check", "--show-files", "--exclude", "deploy/generated/**", "."], cwd=tmp_path)
    assert outcome.code == 0
    lines = outcome.out.splitlines()
    assert "deploy/values.yaml\tyaml" in lines and "scripts/launch\tshell" in lines
    assert ".venv/\tleft out: default exclude outside Git" in lines
    assert "deploy/generated/values.yaml\tleft out: matches an exclude pattern" in lines
    assert "deploy/logo.png\tleft out: binary file" in lines
    assert "2 files to check" in outcome.err


def test_show_files_names_what_git_ignores(run_cli, tmp_path: Path) -> None:
    """Inside Git an untracked file .gitignore matches is not checked: --show-files says so, instead of leaving
    a user to wonder why their .env was never read."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    write(tmp_path, {".gitignore": "*.env\nbuild/\n", "prod.env": "TOKEN=x\n", "build/job.yaml": "a: 1\n",
                     "k8s/values.yaml": VALUES_LATEST})
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    outcome = run_cli(["check", "--show-files", "."], cwd=tmp_path)
    lines = outcome.out.splitlines()
    assert outcome.code == 0 and "k8s/values.yaml\tyaml" in lines
    assert "prod.env\tleft out: ignored by Git (an untracked file .gitignore matches; git add -f to have it " \
           "checked)" in lines
    assert any(line.startswith("build/\tleft out: ignored by Git") for line in lines)
    assert "2 files to check, 2 left out" in outcome.err
    from_below = run_cli(["check", "--show-files", ".."], cwd=tmp_path / "k8s")
    assert "../prod.env\tleft out: ignored by Git (an untracked file .gitignore matches; git add -f to have it " \
           "checked)" in from_below.out.splitlines()


def test_statistics_counts_per_rule_with_how_to_tune(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {f"v{n}/values.yaml": VALUES_LATEST for n in range(3)} | {"w/values.yaml": VALUES_FLOATING})
    outcome = run_cli(["check", "--statistics", "."], cwd=tmp_path)
    assert outcome.code == 1
    lines = outcome.out.splitlines()
    assert lines[0].split()[:3] == ["3", "SPK101", "error"] and "(3 files)" in lines[0]
    assert lines[1].split()[:2] == ["1", "SPK102"]
    assert "--ignore ID" in lines[-2] and "severity:" in lines[-1]  # the tuning hint, on two lines
    assert outcome.err.strip().splitlines()[-1].startswith("3 errors, 1 warning, 0 info in 4 files")


def test_long_text_runs_end_with_the_per_rule_table(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {f"v{n}/values.yaml": VALUES_LATEST for n in range(10)} | {"w/values.yaml": VALUES_FLOATING})
    outcome = run_cli(["check", "."], cwd=tmp_path)
    err = outcome.err.strip().splitlines()
    assert "by rule:" in err and err[err.index("by rule:") + 1].split()[:2] == ["10", "SPK101"]
    assert err[-1].startswith("10 errors, 1 warning")


def test_no_code_frame_prints_one_line_per_finding(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"a/values.yaml": VALUES_LATEST, "b/values.yaml": VALUES_FLOATING})
    for flag in ("--no-code-frame", "--concise"):
        outcome = run_cli(["check", flag, "."], cwd=tmp_path)
        assert len(outcome.out.splitlines()) == 2 and " | " not in outcome.out


@pytest.mark.parametrize(("env", "colored"), [({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "0"}, False),
                                              ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False), ({}, False)])
def test_force_color_and_no_color(tmp_path: Path, env: dict[str, str], colored: bool) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_process(["check", "values.yaml"], cwd=tmp_path, **env)
    assert ("\x1b[" in outcome.out) is colored


def test_go_vendor_folders_are_third_party_code(tmp_path: Path) -> None:
    """``go mod vendor`` copies every dependency, test keys included, under a folder holding modules.txt; a folder
    merely called vendor is the team's own, and a vendor folder named on the command line is checked."""
    write(tmp_path, {"go.mod": "module example.org/x\n", "vendor/modules.txt": "# example.org/dep v1.0.0\n",
                     "vendor/example.org/dep/key_test.go": "package dep\n", "tests/vendor/modules.txt": "\n",
                     "tests/vendor/a/b.go": "package b\n", "web/vendor/app.js": "var x = 1\n",
                     "deploy/values.yaml": "image: x\n"})
    result = discover(["."], cwd=tmp_path, max_file_size=LIMIT)
    paths = {source.path for source in result.files}
    assert "web/vendor/app.js" in paths and "deploy/values.yaml" in paths
    assert not any(path.startswith(("vendor/", "tests/vendor/")) for path in paths)
    assert {(path, reason.split(" (")[0]) for path, reason in result.excluded} >= {
        ("vendor/", "vendored Go modules"), ("tests/vendor/", "vendored Go modules")}
    named = discover(["vendor"], cwd=tmp_path, max_file_size=LIMIT)
    assert "vendor/example.org/dep/key_test.go" in {source.path for source in named.files}
