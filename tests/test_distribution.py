"""What a team adopts from the README: install and hook snippets, CI snippets, the Action, the image.

Each snippet is run here as far as it can run without the hosted service: commands are parsed
by spikelint's own parser, shell steps are executed in a shallow clone like the one
``actions/checkout`` makes, the pre-commit steps run with the real pre-commit, and every pin names
something that exists in this repository (a commit, a tag once published) or the ``<commit>``
placeholder that the Install section fills.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from spikelint import __version__

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TAG = f"v{__version__}"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
LATEST = "replicaCount: 1\nimage: busybox:latest\n"
FLOATING = "replicaCount: 1\nimage: busybox:1.2\n"


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def check_commands() -> list[str]:
    """Every ``spikelint check …`` command line in the README's bash and YAML blocks."""
    commands = []
    for block in code_blocks("yaml") + code_blocks("bash"):
        commands += [match.group(0) for match in re.finditer(r"spikelint check[^\n&|]*", block)]
    return commands


# --------------------------------------------------------------------------- versions and tags


def test_changelog_has_the_version_and_the_tag_policy() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[?{re.escape(__version__)}\]?", changelog, flags=re.M)
    assert "vX.Y.Z" in changelog and "## Unreleased" in changelog


PLACEHOLDER = "<commit>"
# what a user copies to install or pin spikelint: pip's Git URL, pre-commit's rev:, the Action's uses:
PIN = re.compile(r"(?:github\.com/spikelint/spikelint(?:\.git)?@|^\s*rev:\s*|uses:\s*spikelint/spikelint@)"
                 r"[\"']?([^\s\"'#]+)", re.M)
# installs from a package index: spikelint is on none yet (a clone or a Git URL, with extras, instead)
INDEX_INSTALL = re.compile(r"pip install (?:--?[\w-]+ )*[\"']?spikelint(?:\[[\w,]+\])?(?:[\"'\s]|$)(?!\s*@)", re.M)


def _git_lines(*arguments: str) -> set[str] | None:
    if shutil.which("git") is None:
        return None
    result = subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    return set(result.stdout.split()) if result.returncode == 0 else None


def pins_that_cannot_exist(text: str) -> list[str]:
    """Every pin of ``text`` that names neither the placeholder, nor a commit or tag of this repository."""
    wrong = []
    tags = _git_lines("tag", "--list")
    for pin in PIN.findall(text):
        if pin == PLACEHOLDER or pin.startswith("$"):
            continue
        if re.fullmatch(r"[0-9a-f]{40}", pin) and _git_lines("cat-file", "-t", pin) == {"commit"}:
            continue
        if tags is not None and pin in tags:
            continue
        wrong.append(pin)
    return wrong + [match.group(0).strip() for match in INDEX_INSTALL.finditer(text)]


def user_documents() -> dict[str, str]:
    return {"README.md": README, **{f"docs/{path.name}": path.read_text(encoding="utf-8")
                                    for path in sorted((ROOT / "docs").glob("*.md"))}}


@pytest.mark.parametrize("name", sorted(user_documents()))
def test_every_pin_a_user_copies_exists(name: str) -> None:
    assert pins_that_cannot_exist(user_documents()[name]) == []


@pytest.mark.parametrize("text", [
    'pip install "git+https://github.com/spikelint/spikelint@v0.2.0"',  # a tag nobody published
    "    rev: v0.2.0",
    "      - uses: spikelint/spikelint@v9.9.9",
    "      - uses: spikelint/spikelint@" + "0123456789" * 4,  # commit-shaped, in no history
    'pip install "spikelint[smoke]"',  # from an index that does not hold it
    "pip install spikelint",
])
def test_a_pin_that_cannot_exist_is_found(text: str) -> None:
    assert pins_that_cannot_exist(text) != []


@pytest.mark.skipif(_git_lines("rev-parse", "HEAD") is None, reason="not a Git checkout")
def test_the_placeholder_a_commit_of_this_repository_and_installs_from_a_clone_pass() -> None:
    (head,) = _git_lines("rev-parse", "HEAD") or ()
    text = (f'pip install "spikelint[smoke] @ git+https://github.com/spikelint/spikelint@{PLACEHOLDER}"\n'
            f"    rev: {head}\n      - uses: spikelint/spikelint@{head}\n"
            'pip install "./spikelint[smoke]"\npip install ./spikelint\npip install ".[smoke]"\n')
    assert pins_that_cannot_exist(text) == []


def test_readme_says_how_to_fill_the_placeholder() -> None:
    assert PLACEHOLDER in README
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "SPIKELINT_REV=$(git -C spikelint rev-parse HEAD)" in install
    assert "spikelint[smoke] @ git+https://github.com/spikelint/spikelint@<commit>" in install


def test_readme_starts_with_the_two_commands() -> None:
    first = code_blocks("bash")[0].splitlines()
    assert first[0].startswith("pip install . && spikelint check examples/")
    assert first[1].startswith('pip install torch==2.13.0 -e ".[test,smoke,integrations]" && python -m pytest')


def test_the_readmes_example_output_is_what_the_first_command_prints() -> None:
    """Each run of lines the README shows between its ``…`` is printed, in that order, by ``spikelint check
    examples/`` in a clone (findings on standard output, then the table and summary on standard error)."""
    block = next(block for block in code_blocks("console") if block.startswith("$ spikelint check examples/"))
    shown = [part.strip("\n") for part in block.split("\n", 1)[1].split("…\n") if part.strip()]
    run = subprocess.run([sys.executable, "-m", "spikelint", "check", "examples/"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "100"})
    printed = run.stdout + run.stderr
    assert run.returncode == 1
    position = 0
    for part in shown:
        found = printed.find(part, position)
        assert found >= 0, f"the README shows lines spikelint does not print:\n{part}"
        position = found + len(part)


# --------------------------------------------------------------------------- snippets parse


def test_every_yaml_snippet_is_yaml() -> None:
    for block in code_blocks("yaml"):
        yaml.safe_load(block)


@pytest.mark.parametrize("command", check_commands())
def test_every_check_command_in_the_readme_is_accepted(command: str) -> None:
    from spikelint.cli import build_parser

    words = shlex.split(re.sub(r"\$\{\{[^}]*\}\}|\$\w+", "X", command.split("#")[0]))
    args = build_parser().parse_args(words[1:])
    assert args.command == "check"


def test_the_pre_commit_snippet_uses_shipped_hooks_without_duplicates() -> None:
    manifest = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))}
    (config,) = [yaml.safe_load(block) for block in code_blocks("yaml") if "pre-commit" in block or "rev:" in block]
    (repo,) = config["repos"]
    ids = [hook["id"] for hook in repo["hooks"]]
    assert set(ids) <= manifest and repo["rev"] == PLACEHOLDER
    assert not {"spikelint", "spikelint-secrets"} <= set(ids)  # spikelint already runs SPK2
    assert "spikelint-history" in ids and {"pre-commit", "pre-push"} <= set(config["default_install_hook_types"])


def _readme_pre_commit_steps(tmp_path: Path, config: str) -> tuple[Path, str]:
    """The README's Install and Pre-commit steps in a new repository beside a clone of spikelint
    (a one-commit stand-in: no network here), with the real pre-commit; the repository and the commit."""
    pytest.importorskip("pre_commit")
    clone = tmp_path / "spikelint"
    clone.mkdir()
    _git(clone, "init", "-q")
    _git(clone, "commit", "-q", "--allow-empty", "-m", "stand-in")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout.strip()
    team = tmp_path / "team"
    team.mkdir()
    _git(team, "init", "-q")
    (team / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    install = code_blocks("bash")[[i for i, block in enumerate(code_blocks("bash")) if "git clone" in block][0]]
    (remember,) = [line for line in install.splitlines() if line.startswith("SPIKELINT_REV=")]
    (steps,) = [block for block in code_blocks("bash") if "pre-commit install" in block]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "pre-commit").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pre_commit "$@"\n', encoding="utf-8")
    (shim / "pre-commit").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    script = f"set -e\ncd {shlex.quote(str(tmp_path))}\n{remember}\ncd team\n{steps}"
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return team, commit


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("perl") is None, reason="needs git and perl")
def test_the_readme_pre_commit_steps_install_the_pre_push_hook(tmp_path: Path) -> None:
    (snippet,) = [block for block in code_blocks("yaml") if "rev:" in block]
    team, commit = _readme_pre_commit_steps(tmp_path, snippet)
    assert (team / ".git" / "hooks" / "pre-commit").is_file()
    assert (team / ".git" / "hooks" / "pre-push").is_file()  # spikelint-history runs at push time
    from pre_commit.clientlib import load_config

    (repo,) = load_config(str(team / ".pre-commit-config.yaml"))["repos"]
    assert repo["rev"] == commit  # the placeholder became the commit installed, which exists


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("perl") is None, reason="needs git and perl")
def test_without_the_install_hook_types_the_pre_push_hook_is_not_installed(tmp_path: Path) -> None:
    (snippet,) = [block for block in code_blocks("yaml") if "rev:" in block]
    plain = "\n".join(line for line in snippet.splitlines() if not line.startswith("default_install_hook_types"))
    team, _ = _readme_pre_commit_steps(tmp_path, plain + "\n")
    assert (team / ".git" / "hooks" / "pre-commit").is_file()
    assert not (team / ".git" / "hooks" / "pre-push").exists()  # what the README's steps did before


def test_ci_snippets_fetch_the_base_before_diffing() -> None:
    for block in code_blocks("yaml"):
        if "--diff" in block:
            assert block.index("git fetch") < block.index("spikelint check --diff" if "check --diff" in block else "--diff \"")


# --------------------------------------------------------------------------- shell steps, run here


@pytest.fixture
def spikelint_bin(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "spikelint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m spikelint "$@"\n', encoding="utf-8")
    (folder / "spikelint").chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    env["PATH"] = f"{folder}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=CI", "-c", "user.email=ci@example.org", "-c", "commit.gpgsign=false",
                    *arguments], cwd=cwd, check=True, capture_output=True)


def shallow_pull_request(tmp_path: Path) -> Path:
    """A depth-1 clone of branch ``feature`` whose base ``main`` is not fetched (as actions/checkout does)."""
    origin = tmp_path / "origin"
    (origin / "deploy").mkdir(parents=True)
    _git(origin, "init", "-q", "-b", "main")
    (origin / "deploy" / "values.yaml").write_text(FLOATING, encoding="utf-8")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "base")
    _git(origin, "checkout", "-q", "-b", "feature")
    (origin / "deploy" / "new").mkdir()
    (origin / "deploy" / "new" / "values.yaml").write_text(LATEST, encoding="utf-8")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "feature")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(clone))
    return clone


def _readme_pull_request_step() -> str:
    (block,) = [block for block in code_blocks("yaml") if "upload-sarif" in block and "actions/checkout" in block
                and "run: |" in block]
    steps = yaml.safe_load(block)
    (step,) = [step for step in steps if "--diff" in str(step.get("run", ""))]
    return step["run"]


@needs_git
def test_the_readme_pull_request_step_runs_in_a_shallow_clone(tmp_path: Path, spikelint_bin: dict[str, str]) -> None:
    clone = shallow_pull_request(tmp_path)
    result = subprocess.run(["bash", "-e", "-c", _readme_pull_request_step()], cwd=clone, capture_output=True,
                            text=True, env={**spikelint_bin, "BASE": "main"}, timeout=300)
    assert result.returncode == 1, result.stderr  # the new line's finding fails the gate …
    assert result.stdout.startswith("::error file=deploy/new/values.yaml,")  # … and only the new line's
    assert "deploy/values.yaml" not in result.stdout


# --------------------------------------------------------------------------- action.yml


def _action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def test_action_structure() -> None:
    action = _action()
    assert action["name"] and action["description"] and action["runs"]["using"] == "composite"
    declared = set(action["inputs"])
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert set(re.findall(r"inputs\.([\w-]+)", text)) <= declared
    steps = action["runs"]["steps"]
    for step in steps:
        assert ("uses" in step) != ("run" in step), step
        if "run" in step:
            assert step.get("shell") == "bash"
            assert "${{" not in step["run"], "expressions go through env, never into the script"
    uses = [step["uses"] for step in steps if "uses" in step]
    assert any(use.startswith("github/codeql-action/upload-sarif@") for use in uses)
    names = [step["name"] for step in steps]
    assert names.index("Fetch the pull request's base") < names.index("Gate") < names.index("Upload SARIF to code scanning")
    by_name = dict(zip(names, steps))
    assert "--format sarif" in by_name["Lint to SARIF"]["run"]
    # the gate runs whatever happened before it; a failed upload does not fail the job
    assert by_name["Gate"]["if"].startswith("always()")
    assert by_name["Upload SARIF to code scanning"]["continue-on-error"] is True
    # one lint of the checkout: both runs share options, so the gate reads the SARIF run's cache
    for name in ("Lint to SARIF", "Gate"):
        assert "spikelint check --cache " in by_name[name]["run"] and '--fail-on "$FAIL_ON"' in by_name[name]["run"]
        assert '--baseline "$BASELINE"' in by_name[name]["run"]
    assert "baseline" in action["inputs"]


def _run_step(name: str, cwd: Path, env: dict[str, str], **values: str) -> subprocess.CompletedProcess[str]:
    """One ``run:`` step of action.yml, its env filled from ``values`` (expressions) or the inputs' defaults."""
    action = _action()
    (step,) = [step for step in action["runs"]["steps"] if step["name"] == name]
    defaults = {key: str(spec.get("default", "")) for key, spec in action["inputs"].items()}
    step_env = {}
    for key, expression in step.get("env", {}).items():
        inner = re.fullmatch(r"\$\{\{\s*(.+?)\s*\}\}", str(expression)).group(1)  # type: ignore[union-attr]
        step_env[key] = values.get(inner, defaults.get(inner.removeprefix("inputs."), ""))
    output = cwd.parent / "github_output"
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**env, **step_env, "GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(cwd.parent)})


@needs_git
def test_action_steps_run_on_a_pull_request(tmp_path: Path, spikelint_bin: dict[str, str]) -> None:
    clone = shallow_pull_request(tmp_path)
    sarif = _run_step("Lint to SARIF", clone, spikelint_bin)
    assert sarif.returncode == 0, sarif.stderr
    written = (tmp_path / "github_output").read_text(encoding="utf-8").strip().removeprefix("file=")
    assert Path(written).is_file() and not Path(written).is_relative_to(clone)  # not linted by the gate
    fetched = _run_step("Fetch the pull request's base", clone, spikelint_bin, **{"github.base_ref": "main"})
    assert fetched.returncode == 0, fetched.stderr
    gate = _run_step("Gate", clone, spikelint_bin, **{"github.base_ref": "main"})
    assert gate.returncode == 1 and gate.stdout.startswith("::error file=deploy/new/values.yaml,")
    assert "deploy/values.yaml," not in gate.stdout
    on_push = _run_step("Gate", clone, spikelint_bin, **{"inputs.args": "--exclude deploy/new/** --fail-on warning"})
    assert on_push.returncode == 1 and "deploy/values.yaml" in on_push.stdout  # no base: the whole tree
    assert "deploy/new/" not in on_push.stdout  # the glob reached spikelint unexpanded
    assert (clone / ".spikelint_cache").is_dir()  # the SARIF run's results, read again by the gate


@needs_git
def test_action_gate_with_a_baseline_passes_on_existing_findings(tmp_path: Path, spikelint_bin: dict[str, str]) -> None:
    """Adopting on an existing repository: the baseline written first keeps the first push green."""
    clone = shallow_pull_request(tmp_path)
    baseline = tmp_path / "spikelint-baseline.json"
    written = subprocess.run([sys.executable, "-m", "spikelint", "check", "--write-baseline", str(baseline), "."],
                             cwd=clone, capture_output=True, text=True, env=spikelint_bin, timeout=300)
    assert written.returncode == 0, written.stderr
    without = _run_step("Gate", clone, spikelint_bin)
    assert without.returncode == 1 and "::error file=deploy/new/values.yaml," in without.stdout
    sarif = _run_step("Lint to SARIF", clone, spikelint_bin, **{"inputs.baseline": str(baseline)})
    assert sarif.returncode == 0, sarif.stderr
    gate = _run_step("Gate", clone, spikelint_bin, **{"inputs.baseline": str(baseline)})
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "::error" not in gate.stdout


# --------------------------------------------------------------------------- Dockerfile


def _instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_dockerfile_structure() -> None:
    instructions = _instructions()
    assert instructions[0][0] == "FROM"
    assert re.fullmatch(r"python:[\d.]+-slim@sha256:[0-9a-f]{64}", instructions[0][1])  # the base pinned by digest
    assert ("ENTRYPOINT", '["spikelint-entrypoint"]') in instructions and ("WORKDIR", "/src") in instructions
    assert ("CMD", '["check", "."]') in instructions
    assert any(kind == "RUN" and "git" in body for kind, body in instructions)  # ls-files and --diff need git
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    for kind, body in instructions:
        if kind == "COPY":
            for source in body.split()[:-1]:
                assert (ROOT / source).exists(), source
                assert f"!{source}" in ignored or f"!{source}/" in ignored, f".dockerignore keeps {source}"


def _entrypoint_script() -> str:
    """The entrypoint the image's RUN writes with ``printf '%s\\n' LINE…``, as the shell would write it."""
    (body,) = [body for kind, body in _instructions() if kind == "RUN" and "spikelint-entrypoint" in body]
    words = shlex.split(body)
    start = words.index("printf") + 2
    return "\n".join(words[start:words.index(">", start)]) + "\n"


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
@pytest.mark.parametrize(("arguments", "expected"), [
    (["check", "."], "spikelint check ."),                           # the image's CMD
    (["--version"], "spikelint --version"),
    (["rules"], "spikelint rules"),
    (["sh", "-c", "echo from-the-shell"], "from-the-shell"),          # what a GitLab image: job starts
    (["no-such-command-here", "x"], "spikelint no-such-command-here x"),  # spikelint says what is wrong
])
def test_the_image_entrypoint_runs_spikelint_or_a_shell(tmp_path: Path, arguments: list[str], expected: str) -> None:
    script = tmp_path / "spikelint-entrypoint"
    script.write_text(_entrypoint_script(), encoding="utf-8")
    fake = tmp_path / "bin" / "spikelint"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho spikelint "$@"\n', encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(["sh", str(script), *arguments], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_dockerfile_and_action_pass_spikelint_itself(tmp_path: Path) -> None:
    from spikelint.config import Config
    from spikelint.engine import check_paths

    result = check_paths(["Dockerfile", "action.yml", ".pre-commit-hooks.yaml"], Config(), cwd=ROOT, jobs=1)
    assert [finding for finding in result.report.findings if finding.severity != "info"] == []


@pytest.mark.skipif(not os.environ.get("SPIKELINT_DOCKER_TEST") or shutil.which("docker") is None,
                    reason="set SPIKELINT_DOCKER_TEST=1 with docker available to build the image")
def test_the_image_runs_on_a_mounted_repository(tmp_path: Path) -> None:
    subprocess.run(["docker", "build", "-q", "-t", "spikelint:test", str(ROOT)], check=True, timeout=1800)
    (tmp_path / "values.yaml").write_text(LATEST, encoding="utf-8")
    result = subprocess.run(["docker", "run", "--rm", "-v", f"{tmp_path}:/src", "spikelint:test", "check", "."],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1 and "SPK101" in result.stdout


@needs_git
def test_the_readme_gitlab_script_runs_in_a_merge_request_clone(tmp_path: Path, spikelint_bin: dict[str, str]) -> None:
    (block,) = [block for block in code_blocks("yaml") if "codequality" in block]
    job = yaml.safe_load(block)["spikelint"]
    assert job["variables"]["GIT_DEPTH"] == 0 and job["artifacts"]["when"] == "always"
    script = [line for line in job["script"] if not line.startswith(("apt-get", "pip install"))]
    clone = shallow_pull_request(tmp_path)
    env = {**spikelint_bin, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_PROJECT_DIR": str(clone)}
    assert sum(line.startswith("spikelint check") for line in script) == 1  # one lint, both reports
    result = subprocess.run(["bash", "-e", "-c", "\n".join(script)], cwd=clone, capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 1, result.stderr  # the gate's verdict
    junit = (clone / "spikelint-junit.xml").read_text(encoding="utf-8")
    assert "deploy/new/values.yaml" in junit and 'file="deploy/values.yaml"' not in junit.split("<testsuite")[1]
    import json

    quality = json.loads((clone / "gl-code-quality.json").read_text(encoding="utf-8"))
    assert {issue["location"]["path"] for issue in quality} == {"deploy/new/values.yaml"}  # what the MR adds


# --------------------------------------------------------------------------- what a user's test run says

SKIP_REASON = re.compile(r"""(?:reason=|pytest\.skip\()f?(["'])(.*?)\1""")
DEVELOPMENT_FOLDER = re.compile(r"\.\./|/work/|\bshared\b|RULES_SPEC|\{[A-Z_]+\}")


def development_folders_named(text: str) -> list[str]:
    return [reason for _, reason in SKIP_REASON.findall(text) if DEVELOPMENT_FOLDER.search(reason)]


def test_skip_messages_say_what_is_missing_without_naming_a_development_folder() -> None:
    named = {str(path.relative_to(ROOT)): development_folders_named(path.read_text(encoding="utf-8"))
             for path in sorted((ROOT / "tests").rglob("*.py")) if path != Path(__file__).resolve()}  # not its examples
    assert {path: reasons for path, reasons in named.items() if reasons} == {}


@pytest.mark.parametrize(("line", "named"), [
    ('pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")', True),
    ('        pytest.skip("shared reference schemas are not available")', True),
    ('        pytest.skip(f"specification not found at {RULES_SPEC}")', True),
    ('@pytest.mark.skipif(not SCRIPTS, reason="needs the workload corpus, which a clone does not include")', False),
    ('needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")', False),
])
def test_a_skip_message_naming_a_development_folder_is_found(line: str, named: bool) -> None:
    assert bool(development_folders_named(line)) is named
