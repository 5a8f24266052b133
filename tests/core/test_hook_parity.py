"""Hook = CI: ``check FILE`` (what pre-commit runs) reports for FILE exactly what ``check .`` reports.

Referenced configs and scripts resolve against the whole work tree whatever files are given,
and a given config or script re-checks the workloads that reference it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from core_support import REPOSITORY
from core_support import commit_all
from core_support import init_repo
from core_support import write

from spikelint.config import Config
from spikelint.engine import check_paths

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
DIGEST = "registry.example.org/team/train:1.4.2@sha256:" + "ab" * 32

JOB = f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: {DIGEST}
          command: [python, -u, train.py, --config, /workspace/configs/train.yaml]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
SCRIPT_JOB = JOB.replace("command: [python, -u, train.py, --config, /workspace/configs/train.yaml]",
                         "command: [bash, /workspace/scripts/launch_pretrain.sh]").replace("name: train}", "name: pre}")
TRAIN_CONFIG = "seed: 7\ncode_revision: abc1234\ndataset_version: v3\noutput_dir: /tmp/out\n"
LAUNCH = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain.py --output_dir /tmp/pretrain 2>&1 | tee run.log\n"
UNRELATED = "learning_rate: 0.1\n"


def _repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"k8s/job.yaml": JOB, "k8s/pretrain.yaml": SCRIPT_JOB, "configs/train.yaml": TRAIN_CONFIG,
                 "scripts/launch_pretrain.sh": LAUNCH, "configs/other.yaml": UNRELATED})
    commit_all(repo)
    return repo


def _findings(repo: Path, paths: list[str], cwd: Path | None = None) -> list[tuple[str, str, int, str, str]]:
    result = check_paths(paths, Config(), cwd=cwd or repo, jobs=1)
    assert not result.internal_errors
    return sorted((f.path, f.rule, f.line, f.message, f.fingerprint) for f in result.report.findings)


def _parity(repo: Path, cwd: Path) -> None:
    everything = _findings(repo, ["."], cwd)
    for source in check_paths(["."], Config(), cwd=cwd, jobs=1).discovery.files:
        alone = _findings(repo, [source.path], cwd)
        assert [f for f in alone if f[0] == source.path] == [f for f in everything if f[0] == source.path], source.path


@needs_git
def test_check_file_reports_what_check_dot_reports_for_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    everything = _findings(repo, ["."])
    assert ("k8s/job.yaml", "SPK301") in {(f[0], f[1]) for f in everything}  # the config's /tmp/out
    assert ("k8s/pretrain.yaml", "SPK301") in {(f[0], f[1]) for f in everything}  # the script's /tmp/pretrain
    _parity(repo, repo)


@needs_git
def test_parity_from_a_sub_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _parity(repo, repo / "k8s")


@needs_git
def test_a_given_workload_reads_its_config_from_the_work_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    alone = {(f[1], f[2]) for f in _findings(repo, ["k8s/job.yaml"])}
    assert ("SPK301", 12) in alone
    assert not any(rule == "SPK604" for rule, _ in alone)  # seed etc. are in the config: no false "no seed"


@needs_git
@pytest.mark.parametrize(("given", "dependent"), [("configs/train.yaml", "k8s/job.yaml"),
                                                  ("scripts/launch_pretrain.sh", "k8s/pretrain.yaml")])
def test_a_given_config_or_script_rechecks_the_workloads_that_reference_it(tmp_path: Path, given: str,
                                                                           dependent: str) -> None:
    repo = _repo(tmp_path)
    result = check_paths([given], Config(), cwd=repo, jobs=1)
    assert result.dependents == [dependent]
    everything = _findings(repo, ["."])
    assert {f for f in _findings(repo, [given]) if f[0] == dependent} == {f for f in everything if f[0] == dependent}
    assert result.report.files_checked == 2


@needs_git
def test_an_unrelated_config_brings_in_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = check_paths(["configs/other.yaml"], Config(), cwd=repo, jobs=1)
    assert result.dependents == [] and result.report.findings == []


def test_outside_git_the_configuration_folder_is_the_work_tree(tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "select: [SPK3]\n", "k8s/job.yaml": JOB, "configs/train.yaml": TRAIN_CONFIG})
    from spikelint.config import load_config

    config = load_config(None, tmp_path)
    alone = check_paths(["k8s/job.yaml"], config, cwd=tmp_path, jobs=1).report.findings
    assert ("SPK301", 12) in {(f.rule, f.line) for f in alone}


@needs_git
def test_parity_on_the_bundled_example_repository(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "example")
    shutil.copytree(REPOSITORY / "examples", repo, dirs_exist_ok=True)
    commit_all(repo)
    _parity(repo, repo)


@needs_git
def test_cli_names_the_workloads_it_also_checked(run_cli, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    outcome = run_cli(["check", "configs/train.yaml"], cwd=repo)
    assert outcome.code == 1 and "k8s/job.yaml:12:" in outcome.out
    assert "also checked 1 file referencing the given files: k8s/job.yaml" in outcome.err


@needs_git
def test_a_name_inside_a_longer_name_is_not_a_reference(tmp_path: Path) -> None:
    """``finetune-1`` is not named by a job that runs ``finetune-12.yaml`` (nor ``my_finetune-1``)."""
    repo = init_repo(tmp_path / "repo")
    longer = JOB.replace("configs/train.yaml", "configs/finetune-12.yaml")
    prefixed = JOB.replace("configs/train.yaml", "configs/my_finetune-1.yaml").replace("name: train}", "name: b}")
    exact = JOB.replace("configs/train.yaml", "configs/finetune-1.yaml").replace("name: train}", "name: c}")
    write(repo, {"configs/finetune-1.yaml": TRAIN_CONFIG, "k8s/longer.yaml": longer, "k8s/prefixed.yaml": prefixed,
                 "k8s/exact.yaml": exact})
    commit_all(repo)
    assert check_paths(["configs/finetune-1.yaml"], Config(), cwd=repo, jobs=1).dependents == ["k8s/exact.yaml"]


@needs_git
def test_a_folder_of_many_configs_finds_the_same_referrers_by_whole_name(tmp_path: Path) -> None:
    """Past a few given names the referrers are found from each file's words, not one scan per name:
    the same files, whole names only (``finetune-1`` is not in ``finetune-12``), a dotted short name
    (``a.yaml``, matched as a file name) included."""
    from spikelint.discovery.workspace import FEW_NAMES

    repo = init_repo(tmp_path / "repo")
    configs = {f"configs/finetune-{number}.yaml": TRAIN_CONFIG for number in range(FEW_NAMES + 4)}
    jobs = {
        "k8s/exact.yaml": JOB.replace("configs/train.yaml", "configs/finetune-3.yaml").replace("name: train}", "name: a}"),
        "k8s/longer.yaml": JOB.replace("configs/train.yaml", "configs/finetune-300.yaml").replace("name: train}",
                                                                                                  "name: b}"),
        "k8s/short.yaml": JOB.replace("configs/train.yaml", "configs/a.yaml").replace("name: train}", "name: c}"),
        "k8s/key.yaml": "finetune-5: 1\n",  # a key, not a reference
    }
    write(repo, {**configs, "configs/a.yaml": TRAIN_CONFIG, **jobs})
    commit_all(repo)
    result = check_paths(["configs"], Config(), cwd=repo, jobs=1)
    assert result.dependents == ["k8s/exact.yaml", "k8s/short.yaml"]


@needs_git
def test_the_note_on_referrers_names_a_few_and_counts_the_rest(run_cli, tmp_path: Path) -> None:
    from spikelint.cli import NAMED_DEPENDENTS

    repo = init_repo(tmp_path / "repo")
    jobs = {f"k8s/job-{number}.yaml": JOB.replace("name: train}", f"name: t{number}}}") for number in range(8)}
    write(repo, {"configs/train.yaml": TRAIN_CONFIG, **jobs})
    commit_all(repo)
    outcome = run_cli(["check", "configs/train.yaml"], cwd=repo)
    note = next(line for line in outcome.err.splitlines() if "also checked" in line)
    assert note.startswith("spikelint: also checked 8 files referencing the given files: k8s/job-0.yaml, ")
    assert note.count("k8s/job-") == NAMED_DEPENDENTS and note.endswith(f" and {8 - NAMED_DEPENDENTS} more")


@needs_git
def test_files_above_the_current_folder_are_shown_relative_to_it(tmp_path: Path) -> None:
    """Discovering the repository root from a sub-folder shows that folder's files without ``../``."""
    from spikelint.files import discover

    repo = _repo(tmp_path)
    shown = {source.path for source in discover([str(repo)], cwd=repo / "k8s", max_file_size=1 << 20).files}
    assert {"job.yaml", "pretrain.yaml", "../configs/train.yaml"} <= shown


@needs_git
def test_a_given_manifest_brings_back_no_dependents(tmp_path: Path) -> None:
    """Workloads name Kubernetes objects, not their files: a CRD whose name other files mention
    (an install bundle, a kustomization) is checked alone."""
    repo = init_repo(tmp_path / "repo")
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: trainers.example.org}\n"
    bundle = JOB.replace("name: train}", "name: bundle}") + "# see crds/trainers.yaml\n"
    write(repo, {"crds/trainers.yaml": crd, "install/bundle.yaml": bundle,
                 "crds/kustomization.yaml": "resources: [trainers.yaml]\n"})
    commit_all(repo)
    assert check_paths(["crds"], Config(), cwd=repo, jobs=1).dependents == []
    result = check_paths(["crds/kustomization.yaml", "crds/trainers.yaml"], Config(), cwd=repo, jobs=1)
    assert result.dependents == [] and result.report.files_checked == 2


# --------------------------------------------------------------------------- hook mode: the files of a commit

WIP_SBATCH = ("#!/bin/bash\n#SBATCH --gres=gpu:8\n"
              "srun --container-image=nvcr.example.org/team/trainer:latest python -u train.py "
              "--config configs/train.yaml 2>&1 | tee /tmp/wip.log\n")
OWN_FINDING_JOB = JOB.replace(DIGEST, "registry.example.org/team/train:latest")  # a tag the commit did not touch
QUIET_CONFIG = "seed: 7\ncode_revision: abc1234\ndataset_version: v3\nlearning_rate: 0.1\n"  # nothing to report


@needs_git
def test_hook_mode_never_reads_an_untracked_file_as_a_referrer(tmp_path: Path) -> None:
    """A config-only commit is not judged by a work-in-progress script nobody has added."""
    repo = _repo(tmp_path)
    write(repo, {"jobs/wip.sbatch": WIP_SBATCH})  # untracked, unstaged, references the config
    hooked = check_paths(["configs/train.yaml"], Config(), cwd=repo, jobs=1, hook=True)
    assert "jobs/wip.sbatch" not in hooked.dependents and hooked.dependents == ["k8s/job.yaml"]
    assert not any(f.path == "jobs/wip.sbatch" for f in hooked.report.findings)
    # near miss: as a command on the work tree (no --hook), the untracked script is a referrer like any file
    plain = check_paths(["configs/train.yaml"], Config(), cwd=repo, jobs=1)
    assert "jobs/wip.sbatch" in plain.dependents
    assert any(f.path == "jobs/wip.sbatch" for f in plain.report.findings)


@needs_git
def test_hook_mode_keeps_a_referrers_finding_that_comes_from_the_commit(tmp_path: Path) -> None:
    """The job's SPK301 names the committed config's value: it fails the commit (the config writes to /tmp)."""
    repo = _repo(tmp_path)
    result = check_paths(["configs/train.yaml"], Config(), cwd=repo, jobs=1, hook=True)
    assert ("k8s/job.yaml", "SPK301", 12) in {(f.path, f.rule, f.line) for f in result.report.findings}
    (finding,) = [f for f in result.report.findings if f.rule == "SPK301"]
    assert "configs/train.yaml:4" in finding.message


@needs_git
def test_hook_mode_leaves_out_a_referrers_own_findings(tmp_path: Path) -> None:
    """A mutable tag already in the job is not the config commit's: reported by ``check .``, not by the hook."""
    repo = init_repo(tmp_path / "repo")
    write(repo, {"k8s/job.yaml": OWN_FINDING_JOB, "configs/train.yaml": QUIET_CONFIG})
    commit_all(repo)
    hooked = check_paths(["configs/train.yaml"], Config(), cwd=repo, jobs=1, hook=True)
    assert hooked.dependents == ["k8s/job.yaml"]
    assert not any(f.rule == "SPK101" for f in hooked.report.findings) and hooked.outside > 0
    plain = check_paths(["configs/train.yaml"], Config(), cwd=repo, jobs=1)  # near miss: without --hook
    assert ("k8s/job.yaml", "SPK101") in {(f.path, f.rule) for f in plain.report.findings} and plain.outside == 0
    # the job itself in the commit: its own findings are the commit's
    staged = check_paths(["k8s/job.yaml", "configs/train.yaml"], Config(), cwd=repo, jobs=1, hook=True)
    assert ("k8s/job.yaml", "SPK101") in {(f.path, f.rule) for f in staged.report.findings}


@pytest.mark.parametrize(("message", "named"), [
    ("outputs written to '/tmp/out' (from output_dir in configs/train.yaml:4) land in /tmp", True),
    ("no setting resumes from them (its config configs/train.yaml read too): a relaunch", True),
    ("from configs/train.yaml.bak:4", False),
    ("from old-configs/train.yaml:4", False),
    ("from configs/train.yamlx", False),
    ("image 'busybox:latest' uses the mutable tag 'latest'", False),
])
def test_a_message_names_a_file_of_the_commit_as_a_whole_path(message: str, named: bool) -> None:
    from spikelint.pipeline.commit import names_any

    assert names_any(message, ["configs/train.yaml"]) is named


@needs_git
def test_cli_hook_says_what_it_left_out(run_cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"k8s/job.yaml": OWN_FINDING_JOB, "configs/train.yaml": QUIET_CONFIG})
    commit_all(repo)
    outcome = run_cli(["check", "--hook", "configs/train.yaml"], cwd=repo)
    assert outcome.code == 0 and "SPK101" not in outcome.out
    assert "of files outside the commit not reported" in outcome.err
    assert run_cli(["check", "configs/train.yaml"], cwd=repo).code == 1  # near miss: without --hook


@needs_git
def test_the_work_tree_is_listed_by_name_and_a_link_out_of_it_is_never_read(tmp_path: Path) -> None:
    """A hook run names the repository's files from Git's listing without looking at each on disk; a listed
    config that is a link out of the tree, a deleted file and a folder are refused when a workload asks."""
    repo = init_repo(tmp_path / "repo")
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(TRAIN_CONFIG, encoding="utf-8")
    write(repo, {"k8s/job.yaml": JOB, "configs/other.yaml": UNRELATED, "configs/gone.yaml": UNRELATED})
    (repo / "configs" / "train.yaml").symlink_to(outside)
    commit_all(repo)
    (repo / "configs" / "gone.yaml").unlink()
    result = check_paths(["k8s/job.yaml"], Config(), cwd=repo, jobs=1)
    assert not result.internal_errors
    assert "SPK301" not in {finding.rule for finding in result.report.findings}  # /tmp/out is outside: unread
    (repo / "configs" / "train.yaml").unlink()
    (repo / "configs" / "train.yaml").write_text(TRAIN_CONFIG, encoding="utf-8")
    result = check_paths(["k8s/job.yaml"], Config(), cwd=repo, jobs=1)
    assert ("SPK301", 12) in {(finding.rule, finding.line) for finding in result.report.findings}


@needs_git
def test_a_commit_of_a_go_vendor_update_is_judged_as_check_dot_judges_it(tmp_path: Path) -> None:
    """pre-commit names each file of a ``go mod vendor`` update; ``check .`` leaves vendor/ out, so the hook does."""
    repo = init_repo(tmp_path / "repo")
    write(repo, {"go.mod": "module example.org/x\n", "vendor/modules.txt": "# example.org/dep v1.0.0\n",
                 "vendor/example.org/dep/values.yaml": "image: busybox:latest\n", "k8s/job.yaml": JOB})
    commit_all(repo)
    given = ["vendor/example.org/dep/values.yaml", "k8s/job.yaml"]
    hook = check_paths(given, Config(), cwd=repo, jobs=1, hook=True)
    assert not [f for f in hook.report.findings if f.path.startswith("vendor/")]
    assert ("vendor/example.org/dep/values.yaml", "vendored Go modules") in {
        (path, reason.split(" (")[0]) for path, reason in hook.discovery.excluded}
    by_hand = check_paths(["vendor/example.org/dep/values.yaml"], Config(), cwd=repo, jobs=1)
    assert [f.rule for f in by_hand.report.findings] == ["SPK101"]  # named by a person, outside a hook: checked


@needs_git
@pytest.mark.parametrize("other_is_a_repository", [False, True])
def test_a_folder_outside_the_current_repository_is_judged_by_its_own_tree(tmp_path: Path,
                                                                            other_is_a_repository: bool) -> None:
    """``check ../other`` run from inside a repository: the current repository's config is not the other's."""
    here = _repo(tmp_path)  # its configs/train.yaml writes to /tmp/out
    other = init_repo(tmp_path / "other") if other_is_a_repository else tmp_path / "other"
    write(other, {"k8s/job.yaml": JOB, "configs/train.yaml": "seed: 7\noutput_dir: /shared/out\n"}
          if other_is_a_repository else {"k8s/job.yaml": JOB})
    result = check_paths([str(other / "k8s/job.yaml")], Config(), cwd=here, jobs=1)
    assert result.dependents == []
    messages = " ".join(f.message for f in result.report.findings)
    assert "/tmp/out" not in messages
    assert ("/shared/out" in messages) is other_is_a_repository  # its own config is read from its own tree
