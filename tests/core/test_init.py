"""``spikelint init`` writes a starter configuration the checker accepts, never overwrites one,
and excludes the generated and vendored paths it finds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from spikelint.cli import main
from spikelint.config import config_from_mapping
from spikelint.config import load_config_file
from spikelint.commands.init import generated_globs


def make(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")


def test_writes_a_valid_starter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make(tmp_path, "train.py", "k8s/job.yaml")
    assert main(["init", str(tmp_path)]) == 0
    written = tmp_path / ".spikelint.yaml"
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert data == {"max_gpus": 1, "required_run_identity": ["seed", "code_revision", "dataset_version"]}
    config = load_config_file(written)  # validated against the shipped schema
    assert config.max_gpus == 1 and config.exclude == ()
    text = written.read_text(encoding="utf-8")
    assert "# persistent_paths:" in text and "# allowed_registries:" in text and "# exclude:" in text
    assert "wrote" in capsys.readouterr().err


def test_excludes_what_it_sees(tmp_path: Path) -> None:
    make(tmp_path, "train.py", "vendor/lib/a.go", "ui/third_party/chart.js", "web/dist/app.js",
         "web/static/app.min.js", "api/service_pb2.py", "web/node_modules/x/index.js")
    assert main(["init", str(tmp_path)]) == 0
    config = load_config_file(tmp_path / ".spikelint.yaml")
    # outside Git, discovery never enters dist/ or node_modules/: only what a first run would show
    assert config.exclude == ("**/third_party/**", "**/vendor/**", "*.min.js", "*_pb2.py")


def test_the_excludes_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = "ghp_" + "".join("0123456789abcdefghijklmnopqrstuvwxyzAB"[(i * 7) % 38] for i in range(36))
    make(tmp_path, "train.py")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "lib.py").write_text(f"TOKEN = '{secret}'\n", encoding="utf-8")
    (tmp_path / "empty.yaml").write_text("{}\n", encoding="utf-8")
    assert main(["check", str(tmp_path), "--config", str(tmp_path / "empty.yaml")]) == 1  # the vendored token
    assert main(["init", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["check", str(tmp_path), "--config", str(tmp_path / ".spikelint.yaml")]) == 0


def test_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".spikelint.yaml").write_text("max_gpus: 8\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / ".spikelint.yaml").read_text(encoding="utf-8") == "max_gpus: 8\n"


@pytest.mark.parametrize(("name", "text"), [(".spikelint.yml", "ignore: [SPK702]\n"),
                                            ("pyproject.toml", "[tool.spikelint]\nmax_gpus = 8\n")])
def test_an_existing_configuration_in_another_file_blocks_it(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert not (tmp_path / ".spikelint.yaml").exists()


def test_a_missing_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_inside_git_ignored_folders_are_not_listed(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
    make(tmp_path, "train.py", "node_modules/x/index.js", "third_party/y/z.py", "web/dist/app.js")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", "web/dist/app.js"], check=True)
    assert main(["init", str(tmp_path)]) == 0
    # a committed dist/ is listed by git and so excluded; an ignored node_modules/ is never seen
    assert load_config_file(tmp_path / ".spikelint.yaml").exclude == ("**/dist/**", "**/third_party/**")


def test_globs_only_for_what_is_there() -> None:
    assert generated_globs(["src/train.py", "docs/index.md"]) == ()
    assert generated_globs(["a/vendor/b/c.go", "vendor/d.go"]) == ("**/vendor/**",)
    assert generated_globs(["dist.py", "vendor.yaml"]) == ()  # names, not folders
    config_from_mapping({"exclude": list(generated_globs(["x/node_modules/y.js"]))}, source="t", root=".")


PVC_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: sft}
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: [torchrun, train.py]
        volumeMounts:
        - {name: ckpt, mountPath: /ckpt}
        - {name: cfg, mountPath: /etc/cfg}
        - {name: fsx, mountPath: /fsx}
        - {name: scratch, mountPath: /scratch}
      - name: sidecar
        image: ghcr.io/acme/uploader:1.2.3
      volumes:
      - {name: ckpt, persistentVolumeClaim: {claimName: ckpt}}
      - {name: cfg, configMap: {name: cfg}}
      - {name: fsx, hostPath: {path: /fsx}}
      - {name: scratch, emptyDir: {}}
"""


def test_init_proposes_persistent_paths_and_registries(tmp_path: Path) -> None:
    """PVC and shared-filesystem mounts become persistent_paths, image hosts allowed_registries — commented."""
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "job.yaml").write_text(PVC_JOB, encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 0
    text = (tmp_path / ".spikelint.yaml").read_text(encoding="utf-8")
    assert '# persistent_paths: ["/ckpt", "/fsx"]' in text  # not the configMap, not the emptyDir
    assert '# allowed_registries: ["ghcr.io", "nvcr.io"]' in text
    data = yaml.safe_load(text)
    assert "persistent_paths" not in data and "allowed_registries" not in data  # for the team to confirm


def test_init_without_workloads_keeps_the_placeholders(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 0
    text = (tmp_path / ".spikelint.yaml").read_text(encoding="utf-8")
    assert '# persistent_paths: ["/data", "/ckpt"]' in text
    assert '# allowed_registries: ["registry.example.org"]' in text


def test_a_starter_under_a_team_configuration_warns_that_its_keys_replace_the_teams(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``max_gpus: 1`` in a new sub-folder file silently undid the team's ``max_gpus: 2`` there."""
    (tmp_path / ".spikelint.yaml").write_text("max_gpus: 2\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    assert main(["init", str(tmp_path / "sub")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {tmp_path / '.spikelint.yaml'} configures the folders above" in err and "max_gpus" in err


def test_a_pyproject_that_holds_the_table_is_named_for_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.spikelint]\nfail_on = "error"\n', encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert "pyproject.toml already holds [tool.spikelint]; edit it instead" in capsys.readouterr().err
