"""`spikelint fix` on a small repository: YAML streams with comments, anchors, flow style and
odd quoting, a launch script, a Dockerfile and a notebook — the issue's 'done when' list."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fix_support import findings
from fix_support import rules
from fix_support import run
from fix_support import write

from spikelint.catalog import load_catalog

STREAM = """\
# two training jobs and a config map; comments everywhere
apiVersion: batch/v1
kind: Job  # the first
metadata:
  name: "train-a"
  labels: {team: 'nlp', tier: "gpu"}
spec:
  # retries are cheap here
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: harbor.example.org/nlp/bert:1.4.2@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
          command: ["bash", "-c", 'set -e; python train.py --epochs 3 | tee /ckpt/train.log']  # odd ''quote''
          volumeMounts: &mounts
            - {name: ckpt, mountPath: /ckpt}
      volumes:
        - name: ckpt
          persistentVolumeClaim: {claimName: ckpt}
---
# nothing to fix in this one
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data:
  note: 'it''s "quoted" # not a comment'
  folded: >-
    several
    lines
...
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ddp
spec:
  # the master replica
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: harbor.example.org/nlp/bert:1.4.2@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa
              command:
                - bash
                - -c
                - |
                  set -e
                  torchrun --nproc_per_node 8 train.py | tee /ckpt/ddp.log
              resources: {limits: {nvidia.com/gpu: 8}}
"""

SCRIPT = """\
#!/usr/bin/env bash
# launch the run
set -eu

python train.py --out /ckpt 2>&1 | tee /ckpt/log.txt
"""

DOCKERFILE = """\
FROM nvcr.io/nvidia/pytorch:24.01-py3@sha256:3f0c6b1b1d4e2f7a8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b AS base
# tools
RUN curl -fsSL https://example.org/install.sh | bash
FROM base AS train
RUN wget -qO- https://example.org/setup.sh | bash
CMD ["python", "train.py"]
"""


def _notebook() -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# notes"]},
             {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["print(1)"],
              "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=1) + "\n"


FILES = {"k8s/jobs.yaml": STREAM, "scripts/launch.sh": SCRIPT, "Dockerfile": DOCKERFILE,
         "notebooks/explore.ipynb": _notebook()}


def _documents(text: str) -> list[str]:
    return re.split(r"(?m)^---\n", text)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    write(tmp_path, FILES)
    return tmp_path


def test_one_fix_removes_every_safe_finding_and_nothing_else(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    safe = {rule_id for rule_id, rule in load_catalog().items() if rule.fix == "safe"}
    before = findings(repo, capsys)
    counts = rules(before)
    assert {rule: counts[rule] for rule in safe if counts[rule]} == {"SPK501": 5, "SPK502": 2, "SPK702": 2,
                                                                     "SPK207": 1}
    ran = run(repo, capsys, "fix", "--fail-on", "never")
    assert ran.code == 0, ran.err
    after = findings(repo, capsys)
    assert not [item for item in after if item["rule"] in safe]
    assert rules(after) == {rule: count for rule, count in counts.items() if rule not in safe}
    assert "fixed 10 findings in 4 files;" in ran.err and "not fixable" not in ran.err


def test_comments_and_untouched_documents_survive(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(repo, capsys, "fix")
    fixed = (repo / "k8s/jobs.yaml").read_text(encoding="utf-8")
    for line in STREAM.splitlines():
        if "#" in line:
            comment = line[line.index("#"):]
            assert comment in fixed, comment
    assert _documents(fixed)[1] == _documents(STREAM)[1]  # the ConfigMap, byte for byte
    assert "  labels: {team: 'nlp', tier: \"gpu\"}\n" in fixed
    assert "volumeMounts: &mounts\n" in fixed
    assert "spec:\n  ttlSecondsAfterFinished: 86400\n  # retries are cheap here\n" in fixed
    assert "  runPolicy:\n    ttlSecondsAfterFinished: 86400\n  # the master replica\n" in fixed
    assert "'set -o pipefail; set -e; python -u train.py --epochs 3 | tee /ckpt/train.log'" in fixed
    assert "                  set -o pipefail\n                  set -e\n" in fixed
    assert (repo / "scripts/launch.sh").read_text() == SCRIPT.replace(
        "set -eu\n", "set -eu\nset -o pipefail\n").replace("python train.py", "python -u train.py")
    assert (repo / "Dockerfile").read_text().count('SHELL ["/bin/bash", "-o", "pipefail", "-c"]') == 1
    notebook = json.loads((repo / "notebooks/explore.ipynb").read_text())
    assert notebook["cells"][1]["outputs"] == [] and notebook["cells"][1]["execution_count"] is None
    assert notebook["cells"][0]["source"] == ["# notes"]


def test_a_second_fix_changes_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(repo, capsys, "fix")
    once = {name: (repo / name).read_bytes() for name in FILES}
    ran = run(repo, capsys, "fix", "--fail-on", "never")
    assert ran.code == 0
    assert {name: (repo / name).read_bytes() for name in FILES} == once
    assert "fixed 0 findings in 0 files" in ran.err


def test_dry_run_prints_a_diff_changes_nothing_and_exits_1(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran = run(repo, capsys, "fix", "--dry-run")
    assert ran.code == 1
    assert "--- a/k8s/jobs.yaml\n+++ b/k8s/jobs.yaml\n" in ran.out
    assert "+  ttlSecondsAfterFinished: 86400\n" in ran.out
    assert {name: (repo / name).read_text(encoding="utf-8") for name in FILES} == FILES


LAUNCH_WITH_TOKEN = "#!/bin/bash\nexport HF_TOKEN=hf_" + "Xk29Qm7vLp3Rt8Wn5Yb2Hc6Jd4Fg1Sz0ab" + "\npython train.py | tee log.txt\n"


@pytest.mark.parametrize("token", [True, False])
def test_a_dry_run_diff_that_quotes_a_secret_says_it_will_not_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                      token: bool) -> None:
    """The secret on a context line is cut to four characters (as everything spikelint writes): git apply would
    refuse the patch without a word of why."""
    text = LAUNCH_WITH_TOKEN if token else "#!/bin/bash\npython train.py | tee log.txt\n"
    write(tmp_path, {"launch.sh": text})
    ran = run(tmp_path, capsys, "fix", "--dry-run")
    assert ran.code == 1 and "+set -o pipefail\n" in ran.out and "Xk29" not in ran.out + ran.err
    assert ("quotes a secret cut to four characters, so git apply and patch will not take it" in ran.err) is token
    assert ("1 finding has no mechanical fix (spikelint check lists it)" in ran.err) is token


def test_dry_run_on_a_clean_tree_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"k8s/cm.yaml": _documents(STREAM)[1]})
    ran = run(tmp_path, capsys, "fix", "--dry-run")
    assert (ran.code, ran.out) == (0, "")


def test_check_fix_fixes_then_reports_what_is_left(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran = run(repo, capsys, "check", "--fix", "--concise", "--fail-on", "never")
    assert ran.code == 0
    assert "SPK501" not in ran.out and "SPK702" not in ran.out
    assert "ttlSecondsAfterFinished: 86400" in (repo / "k8s/jobs.yaml").read_text()


def test_script_keeps_its_mode(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "scripts/launch.sh").chmod(0o755)
    run(repo, capsys, "fix")
    assert (repo / "scripts/launch.sh").stat().st_mode & 0o777 == 0o755
