"""spikelint as a real pre-commit hook: a commit with a leaked token or a mutable tag is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]
SPIKELINT = f"{sys.executable} -m spikelint"
ROOT = Path(__file__).resolve().parents[1]


def git(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True, env=environment,
                          timeout=300, check=False)


def local_hooks(*ids: str) -> str:
    """The shipped hooks (file selection, arguments) as ``repo: local`` hooks running this checkout."""
    import json

    import yaml

    manifest = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))}
    lines = ["repos:", "  - repo: local", "    hooks:"]
    for hook_id in ids:
        hook = manifest[hook_id]
        entry = hook["entry"].replace("spikelint", SPIKELINT, 1)
        lines += [f"      - id: {hook_id}", f"        name: {hook['name']}", f"        entry: {entry}",
                  "        language: system", f"        require_serial: {json.dumps(hook.get('require_serial', False))}"]
        for key in ("types", "types_or", "files", "exclude", "exclude_types", "stages"):
            if key in hook:
                lines.append(f"        {key}: {json.dumps(hook[key])}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    pytest.importorskip("pre_commit")
    assert git(tmp_path, "init", "-q").returncode == 0
    (tmp_path / ".pre-commit-config.yaml").write_text(local_hooks("spikelint"), encoding="utf-8")
    git(tmp_path, "add", ".pre-commit-config.yaml")
    assert git(tmp_path, "commit", "-q", "-m", "config").returncode == 0
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / ".cache")}
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=tmp_path, capture_output=True,
                               text=True, env=environment, timeout=300, check=False)
    assert installed.returncode == 0, installed.stderr
    return tmp_path


def test_commit_with_mutable_image_is_refused_and_fixed_one_passes(repository: Path) -> None:
    job = repository / "job.yaml"
    job.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec:\n  containers:\n"
                   "    - name: t\n      image: busybox:latest\n      command: [sleep, '1']\n", encoding="utf-8")
    git(repository, "add", "job.yaml")
    refused = git(repository, "commit", "-q", "-m", "add job")
    assert refused.returncode != 0
    assert "SPK101" in refused.stdout + refused.stderr
    job.write_text(job.read_text(encoding="utf-8").replace(
        "busybox:latest", "busybox:1.36.1@sha256:" + "a" * 64), encoding="utf-8")
    git(repository, "add", "job.yaml")
    accepted = git(repository, "commit", "-q", "-m", "add pinned job")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n"
       "      restartPolicy: Never\n      volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]\n"
       "      containers:\n        - name: train\n          image: busybox:1.36.1@sha256:" + "a" * 64 + "\n"
       "          command: [python, -u, train.py, --config, /workspace/configs/train.yaml]\n"
       "          volumeMounts: [{name: ckpt, mountPath: /ckpt}]\n")


def test_a_staged_config_is_judged_by_the_workload_that_runs_it(repository: Path) -> None:
    (repository / "k8s").mkdir()
    (repository / "configs").mkdir()
    (repository / "k8s" / "job.yaml").write_text(JOB, encoding="utf-8")
    config = repository / "configs" / "train.yaml"
    config.write_text("seed: 1\ncode_revision: abc1234\ndataset_version: v1\noutput_dir: /ckpt/run\n",
                      encoding="utf-8")
    git(repository, "add", ".")
    accepted = git(repository, "commit", "-q", "-m", "job and config")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    # only the config changes, and is the only file pre-commit passes: the job that reads it must be re-judged
    config.write_text(config.read_text(encoding="utf-8").replace("/ckpt/run", "/tmp/out"), encoding="utf-8")
    git(repository, "add", "configs/train.yaml")
    refused = git(repository, "commit", "-q", "-m", "write to /tmp")
    assert refused.returncode != 0
    assert "k8s/job.yaml" in refused.stdout + refused.stderr and "SPK301" in refused.stdout + refused.stderr


WIP_SBATCH = ("#!/bin/bash\n#SBATCH --gres=gpu:8\n"
              "python train.py --config configs/train.yaml 2>&1 | tee /tmp/wip.log\n")


def test_a_config_commit_is_not_judged_by_files_outside_it(repository: Path) -> None:
    """An untracked work-in-progress script that references the config, and a finding the job already
    had, are not the commit's: it passes; a value of the commit that breaks the job still fails it."""
    (repository / "k8s").mkdir()
    (repository / "configs").mkdir()
    (repository / "k8s" / "job.yaml").write_text(JOB.replace("busybox:1.36.1@sha256:" + "a" * 64, "busybox:latest"),
                                                  encoding="utf-8")  # SPK101, an error committed before the hook
    config = repository / "configs" / "train.yaml"
    config.write_text("seed: 1\ncode_revision: abc1234\ndataset_version: v1\noutput_dir: /ckpt/run\n",
                      encoding="utf-8")
    git(repository, "add", ".")
    assert git(repository, "commit", "-q", "--no-verify", "-m", "job and config").returncode == 0
    (repository / "wip.sbatch").write_text(WIP_SBATCH, encoding="utf-8")  # never added
    config.write_text(config.read_text(encoding="utf-8").replace("seed: 1", "seed: 2"), encoding="utf-8")
    git(repository, "add", "configs/train.yaml")
    accepted = git(repository, "commit", "-q", "-m", "another seed")
    output = accepted.stdout + accepted.stderr
    assert accepted.returncode == 0, output
    assert "wip.sbatch" not in output and "SPK101" not in output
    # near miss: checked as a work tree (no hook), the untracked script is read and the job's tag fails it
    by_hand = subprocess.run([sys.executable, "-m", "spikelint", "check", "configs/train.yaml"], cwd=repository,
                             capture_output=True, text=True, timeout=300, check=False,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert by_hand.returncode == 1 and "wip.sbatch" in by_hand.stdout and "SPK101" in by_hand.stdout


def test_scripts_without_a_known_suffix_and_image_tarballs_reach_the_hook(repository: Path) -> None:
    (repository / "jobs").mkdir()
    (repository / "jobs" / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --gres=gpu:8\npython -u train.py 2>&1 | tee train.log\n", encoding="utf-8")
    (repository / "image.tar").write_bytes(b"not a tar archive at all")
    git(repository, "add", ".")
    refused = git(repository, "commit", "-q", "-m", "sbatch and image")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "jobs/train.sbatch:3:" in output and "SPK501" in output  # not executable, no .sh: the shebang says
    assert "image.tar" in output  # the (broken) image tarball was read


def test_a_configured_baseline_lets_an_edit_of_a_baselined_file_through(repository: Path) -> None:
    """README's "baseline first, gate on what is new" with the hook unchanged: ``baseline:`` in the configuration."""
    job = repository / "job.yaml"
    job.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec:\n  containers:\n"
                   "    - name: t\n      image: busybox:latest\n      command: [sleep, '1']\n", encoding="utf-8")
    (repository / ".spikelint.yaml").write_text("baseline: .spikelint-baseline.json\n", encoding="utf-8")
    git(repository, "add", "job.yaml")  # what is already there: a file Git does not track is left out of a baseline
    written = subprocess.run([sys.executable, "-m", "spikelint", "check", "--write-baseline", ".spikelint-baseline.json",
                              "."], cwd=repository, capture_output=True, text=True, timeout=300, check=False,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert written.returncode == 0, written.stderr
    git(repository, "add", ".")
    adopted = git(repository, "commit", "-q", "-m", "adopt spikelint")
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    job.write_text(job.read_text(encoding="utf-8").replace("{name: t}", "{name: t, labels: {team: nlp}}"),
                   encoding="utf-8")
    git(repository, "add", "job.yaml")
    edited = git(repository, "commit", "-q", "-m", "label the pod")
    assert edited.returncode == 0, edited.stdout + edited.stderr
    job.write_text(job.read_text(encoding="utf-8") + "    - name: u\n      image: alpine:latest\n"
                   "      command: [sleep, '1']\n", encoding="utf-8")
    git(repository, "add", "job.yaml")
    refused = git(repository, "commit", "-q", "-m", "a second container")
    assert refused.returncode != 0 and "job.yaml:10:" in refused.stdout + refused.stderr


def test_the_shipped_hooks_file_is_a_valid_manifest_without_duplicate_secret_hooks() -> None:
    pytest.importorskip("pre_commit")
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert set(hooks) == {"spikelint", "spikelint-secrets", "spikelint-policy", "spikelint-fix", "spikelint-history"}
    assert hooks["spikelint-fix"]["entry"] == "spikelint fix --hook"  # pre-commit fails a hook that changed files
    assert hooks["spikelint"]["entry"] == "spikelint check --hook"  # the commit's files, not the work tree's
    assert hooks["spikelint-secrets"]["entry"].endswith("--select SPK2")
    assert hooks["spikelint-policy"]["entry"].endswith("--ignore SPK2")  # pairs with spikelint-secrets
    history = hooks.pop("spikelint-history")  # pre-push, over the commits being pushed, not over files
    assert history["stages"] == ["pre-push"] and not history["pass_filenames"] and history["always_run"]
    assert all(hook["types"] == ["file"] and hook["require_serial"] for hook in hooks.values())
    # the file hooks run at commit time: installing pre-push for the history hook does not lint files twice
    assert all("pre-push" not in hook["stages"] and "pre-commit" in hook["stages"] for hook in hooks.values())
