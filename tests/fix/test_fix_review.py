"""What running ``fix`` on real repositories turned up: a diff of a file without its last newline,
a tag written apart from its image name (kustomize), a computed reference quoted whole, and the
user's own tokens left exactly as written in the files a fix edits."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fix_support import rules
from fix_support import findings
from fix_support import run
from fix_support import write

DIGEST = "sha256:" + "cd" * 32
KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - job.yaml
images:
  # the trainer's base, pinned by the release job
  - name: trainer
    newName: nvcr.io/nvidia/pytorch
    newTag: 24.01-py3
"""


# --------------------------------------------------------------------------- --dry-run diffs


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to apply the diff")
def test_dry_run_diff_of_a_file_without_final_newline_applies(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = "#!/bin/bash\ntorchrun train.py | tee /ckpt/log"
    write(tmp_path, {"run.sh": text})
    ran = run(tmp_path, capsys, "fix", "--dry-run", ".")
    assert ran.code == 1
    assert ran.out.endswith(" torchrun train.py | tee /ckpt/log\n\\ No newline at end of file\n")
    (tmp_path / "change.diff").write_text(ran.out, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "change.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "run.sh").read_text(encoding="utf-8") == (
        "#!/bin/bash\nset -o pipefail\ntorchrun train.py | tee /ckpt/log")


def test_dry_run_diff_of_a_file_with_its_newline_has_no_marker(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"run.sh": "#!/bin/bash\ntorchrun train.py | tee /ckpt/log\n"})
    ran = run(tmp_path, capsys, "fix", "--dry-run", ".")
    assert ran.code == 1 and "+set -o pipefail\n" in ran.out
    assert "No newline" not in ran.out
    assert ran.err.endswith("spikelint: exit 1: a file would change (--dry-run wrote nothing; run without it to apply)\n")


def test_dry_run_with_nothing_to_change_exits_0_without_the_reason(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"run.sh": "#!/bin/bash\nset -o pipefail\ntorchrun train.py | tee /ckpt/log\n"})
    ran = run(tmp_path, capsys, "fix", "--dry-run", ".")
    assert ran.code == 0 and ran.out == ""
    assert "exit 1" not in ran.err


# --------------------------------------------------------------------------- pins by whole reference


def test_kustomize_new_tag_is_pinned_from_the_whole_reference(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"kustomization.yaml": KUSTOMIZATION,
                     "pins.txt": f"nvcr.io/nvidia/pytorch:24.01-py3: {DIGEST}\n"})
    assert rules(findings(tmp_path, capsys))["SPK102"] == 1
    ran = run(tmp_path, capsys, "fix", "--unsafe", "--pins", "pins.txt", "--fail-on", "never", ".")
    assert ran.code == 0, ran.err
    fixed = (tmp_path / "kustomization.yaml").read_text(encoding="utf-8")
    assert fixed == KUSTOMIZATION.replace("newTag: 24.01-py3", f"newTag: 24.01-py3@{DIGEST}")
    assert "nvcr.io/nvidia/pytorch:24.01-py3 pinned to" in ran.err
    assert rules(findings(tmp_path, capsys))["SPK102"] == 0


def test_kustomize_new_tag_missing_from_the_pins_names_the_whole_reference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"kustomization.yaml": KUSTOMIZATION,
                     "pins.txt": f"nvcr.io/nvidia/pytorch:23.10-py3: {DIGEST}\n"})
    ran = run(tmp_path, capsys, "fix", "--unsafe", "--pins", "pins.txt", "--fail-on", "never", ".")
    assert (tmp_path / "kustomization.yaml").read_text(encoding="utf-8") == KUSTOMIZATION
    assert "nvcr.io/nvidia/pytorch:24.01-py3 is not in the pins file (add " \
           "'nvcr.io/nvidia/pytorch:24.01-py3: sha256:…'" in ran.err


def test_a_computed_reference_is_quoted_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "ARG SGLANG_VERSION=latest\nFROM lmsysorg/sglang:${SGLANG_VERSION}\nRUN echo ok\n"
    write(tmp_path, {"Dockerfile": text, "pins.txt": f"lmsysorg/sglang:latest: {DIGEST}\n"})
    ran = run(tmp_path, capsys, "fix", "--unsafe", "--pins", "pins.txt", "--fail-on", "never", ".")
    assert (tmp_path / "Dockerfile").read_text(encoding="utf-8") == text
    assert "is computed (lmsysorg/sglang:${SGLANG_VERSION}): pin its parts by hand" in ran.err


# --------------------------------------------------------------------------- the user's own tokens


def _token() -> str:
    """A Hugging Face token shape made at test time (a keyboard walk, not a counting-up fake)."""
    return "hf_" + "qwertyuiopasdfghjklzxcvbnmQWERTYUIOP"[:34]


JOB_WITH_TOKEN = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations:
    # rotated weekly: {token}
    team/hub-token: {token}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.01-py3@sha256:{digest}
          command: ["python", "-u", "train.py"]
"""


def test_fix_keeps_the_users_token_as_written_and_masks_it_in_its_own_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = _token()
    script = f"#!/bin/bash\nexport HF_TOKEN={token}\ntorchrun train.py | tee /ckpt/log\n"
    job = JOB_WITH_TOKEN.format(token=token, digest="ef" * 32)
    write(tmp_path, {"run.sh": script, "job.yaml": job})
    before = rules(findings(tmp_path, capsys))
    assert before["SPK201"] >= 2 and before["SPK501"] == 1 and before["SPK702"] == 1
    ran = run(tmp_path, capsys, "fix", "--fail-on", "never", ".")
    assert ran.code == 0, ran.err
    fixed_script = (tmp_path / "run.sh").read_text(encoding="utf-8")
    fixed_job = (tmp_path / "job.yaml").read_text(encoding="utf-8")
    assert fixed_script == script.replace("#!/bin/bash\n", "#!/bin/bash\nset -o pipefail\n")
    assert f"    # rotated weekly: {token}\n    team/hub-token: {token}\n" in fixed_job
    assert fixed_job.count(token) == 2 and "ttlSecondsAfterFinished" in fixed_job
    assert token not in ran.out + ran.err  # the mask is for spikelint's own output
    after = rules(findings(tmp_path, capsys))
    assert after["SPK201"] == before["SPK201"] and after["SPK501"] == after["SPK702"] == 0


def test_dry_run_masks_the_token_in_the_diff_but_not_in_the_file(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    token = _token()
    script = f"#!/bin/bash\ntorchrun train.py --hub-token {token} | tee /ckpt/log\n"
    write(tmp_path, {"run.sh": script})
    ran = run(tmp_path, capsys, "fix", "--dry-run", ".")
    assert ran.code == 1 and "+set -o pipefail\n" in ran.out
    assert token not in ran.out + ran.err
    assert (tmp_path / "run.sh").read_text(encoding="utf-8") == script


# --------------------------------------------------------------------------- --dry-run shows no secret


def test_a_dry_run_diff_masks_the_values_the_secret_rules_found(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``value:`` under ``- name: DB_PASSWORD`` is a secret by structure only: no token shape for the
    final mask to see, so the diff masks what the secret rules found in the file."""
    import random
    import string

    rng = random.Random(5)
    password = "".join(rng.choice(string.ascii_letters) for _ in range(7)) + "".join(rng.choice(string.digits) for _ in range(4))
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: c\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n"
        f"        env:\n        - name: DB_PASSWORD\n          value: {password}\n"
    )
    write(tmp_path, {"job.yaml": job})
    ran = run(tmp_path, capsys, "fix", "--dry-run", "--unsafe", ".")
    assert ran.code == 1 and "--- a/job.yaml" in ran.out
    assert password not in ran.out + ran.err
    assert (tmp_path / "job.yaml").read_text(encoding="utf-8") == job  # a dry run changes nothing
