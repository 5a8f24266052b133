"""The baseline as a gate: ``baseline:`` in the configuration for ``check`` and ``fix`` (and so
the hooks), and fingerprints keyed on the offending value, so that a ``fix`` editing a
baselined line keeps its other findings baselined; baselines written before still match.

``history`` with the configured baseline and one fingerprint per secret: tests/secrets/test_history.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from core_support import VALUES_LATEST
from core_support import write

SCRIPT = "#!/bin/bash\nset -eu\npython train.py --epochs 3 | tee /ckpt/train.log\n"
DIGEST = "sha256:" + "a" * 64
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: eval}\nspec:\n  restartPolicy: Never\n  containers:\n"
       f"    - name: eval\n      image: busybox:1.36.1@{DIGEST}\n"
       '      command: ["bash", "-c", "python eval.py --split dev | tee /ckpt/eval.log"]\n')
CONFIG = "baseline: .spikelint-baseline.json\n"
GATE = ("--baseline", ".spikelint-baseline.json")


def _old_fingerprint(rule: str, path: str, key: str, occurrence: int = 0) -> str:
    """The recipe baselines were written with before fingerprints keyed on the offending value."""
    material = "\0".join((rule, path, " ".join(key.split()), str(occurrence)))
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def _baseline(root: Path, name: str, entries: list[tuple[str, str, str]]) -> None:
    findings = [{"fingerprint": _old_fingerprint(rule, path, key), "rule": rule, "path": path}
                for rule, path, key in entries]
    write(root, {name: json.dumps({"version": 1, "tool": "spikelint", "findings": findings})})


# --------------------------------------------------------------------------- baseline: in the configuration


def test_the_configured_baseline_gates_check(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": CONFIG, "values.yaml": VALUES_LATEST, "run.sh": SCRIPT})
    # written while the configured file does not exist yet: writing it is how one starts
    assert run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path).code == 0
    gated = run_cli(["check", "--format", "json"], cwd=tmp_path)
    assert gated.code == 0 and gated.json()["findings"] == [] and gated.json()["summary"]["baselined"] == 3
    write(tmp_path, {"values.yaml": VALUES_LATEST + "worker:\n  image: alpine:latest\n"})
    new = run_cli(["check", "--format", "json"], cwd=tmp_path)
    assert new.code == 1 and new.pairs() == {("values.yaml", 4, "SPK101")}


def test_the_configured_baseline_is_found_from_a_sub_folder(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": CONFIG, "deploy/values.yaml": VALUES_LATEST})
    run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path)
    inside = run_cli(["check", "--format", "json", "."], cwd=tmp_path / "deploy")
    assert inside.code == 0 and inside.json()["summary"]["baselined"] == 1


def test_a_baseline_in_pyproject_works_like_the_yaml_key(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.spikelint]\nbaseline = "ci/baseline.json"\n', "values.yaml": VALUES_LATEST})
    (tmp_path / "ci").mkdir()
    run_cli(["check", "--write-baseline", "ci/baseline.json"], cwd=tmp_path)
    assert run_cli(["check"], cwd=tmp_path).code == 0
    assert run_cli(["check", "--baseline", "ci/missing.json"], cwd=tmp_path).code == 2


def test_hook_style_file_arguments_use_the_configured_baseline(run_cli, tmp_path: Path) -> None:
    """pre-commit runs ``spikelint check FILE…`` with no way to add --baseline: a one-line edit of a
    baselined file must not fail the commit on its old findings, while a new finding still does."""
    write(tmp_path, {".spikelint.yaml": CONFIG, "values.yaml": VALUES_LATEST, "run.sh": SCRIPT})
    run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path)
    write(tmp_path, {"values.yaml": "# owner: ml-platform\n" + VALUES_LATEST.replace("replicaCount: 1", "replicaCount: 2")})
    assert run_cli(["check", "values.yaml"], cwd=tmp_path).code == 0
    write(tmp_path, {"values.yaml": VALUES_LATEST + "worker:\n  image: alpine:latest\n"})
    edited = run_cli(["check", "--format", "json", "values.yaml"], cwd=tmp_path)
    assert edited.code == 1 and edited.pairs() == {("values.yaml", 4, "SPK101")}


def test_the_command_line_baseline_wins(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "baseline: not-written-yet.json\n", "values.yaml": VALUES_LATEST,
                     "empty.json": '{"version": 1, "findings": []}'})
    run_cli(["check", "--write-baseline", "all.json"], cwd=tmp_path)
    assert run_cli(["check", "--baseline", "all.json"], cwd=tmp_path).code == 0  # the missing one is not read
    write(tmp_path, {".spikelint.yaml": "baseline: all.json\n"})
    assert run_cli(["check"], cwd=tmp_path).code == 0
    assert run_cli(["check", "--baseline", "empty.json"], cwd=tmp_path).code == 1


@pytest.mark.parametrize("command", [["check"], ["check", "values.yaml"], ["fix"], ["check", "--fix"]])
def test_a_missing_configured_baseline_is_a_configuration_error(run_cli, tmp_path: Path, command: list[str]) -> None:
    write(tmp_path, {".spikelint.yaml": "baseline: ci/baseline.json\n", "values.yaml": VALUES_LATEST, "run.sh": SCRIPT})
    outcome = run_cli(command, cwd=tmp_path)
    assert outcome.code == 2
    assert ".spikelint.yaml" in outcome.err and "baseline: ci/baseline.json" in outcome.err
    assert "spikelint check --write-baseline ci/baseline.json" in outcome.err
    assert (tmp_path / "run.sh").read_text() == SCRIPT  # nothing fixed before the error


def test_a_baseline_that_is_not_a_path_names_the_key(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "baseline: [a.json]\n", "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert outcome.code == 2 and "baseline" in outcome.err


def test_fix_reports_what_is_left_against_the_configured_baseline(run_cli, tmp_path: Path) -> None:
    gated, plain = tmp_path / "gated", tmp_path / "plain"
    for root in (gated, plain):
        write(root, {"values.yaml": VALUES_LATEST, "run.sh": SCRIPT})
        run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=root)
    write(gated, {".spikelint.yaml": CONFIG})
    fixed = run_cli(["fix"], cwd=gated)
    assert fixed.code == 0 and "set -o pipefail" in (gated / "run.sh").read_text()
    assert "1 baselined" in fixed.err  # SPK101 is left, and baselined
    assert run_cli(["fix"], cwd=plain).code == 1  # the same SPK101 without the key fails
    assert run_cli(["fix", "--baseline", ".spikelint-baseline.json"], cwd=plain).code == 0


# --------------------------------------------------------------------------- fingerprints keyed on the value


@pytest.mark.parametrize(("name", "text", "edited"), [
    ("run.sh", SCRIPT, "python -u train.py --epochs 3 | tee"),
    ("pod.yaml", POD, "python -u eval.py --split dev | tee"),
])
def test_a_fix_that_edits_a_baselined_line_keeps_its_other_finding(run_cli, tmp_path: Path, name: str, text: str,
                                                                    edited: str) -> None:
    write(tmp_path, {name: text})
    run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path)
    run_cli(["fix", "--select", "SPK502"], cwd=tmp_path)  # adds -u on the line SPK501 reports
    assert edited in (tmp_path / name).read_text()
    after = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)
    assert after.code == 0 and after.json()["summary"]["baselined"] == 1  # SPK501, still baselined
    write(tmp_path, {name: (tmp_path / name).read_text().replace("| tee", "| logger -t train")})
    changed = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)  # another offending pipeline: new
    assert changed.code == 1 and {rule for _, _, rule in changed.pairs()} == {"SPK501"}


def test_a_fix_that_inserts_a_line_above_keeps_the_finding_below(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"run.sh": SCRIPT})
    run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path)
    run_cli(["fix", "--select", "SPK501"], cwd=tmp_path)
    assert (tmp_path / "run.sh").read_text().count("\n") == SCRIPT.count("\n") + 1
    after = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)
    assert after.code == 0 and after.json()["summary"]["baselined"] == 1  # SPK502, one line lower


def test_pinning_an_image_keeps_its_registry_finding(run_cli, tmp_path: Path) -> None:
    job = POD.replace(f"busybox:1.36.1@{DIGEST}", "ghcr.io/acme-ml/eval:latest")
    write(tmp_path, {".spikelint.yaml": "allowed_registries: [harbor.example.org]\nselect: [SPK1]\n",
                     "pod.yaml": job, "pins.txt": f"ghcr.io/acme-ml/eval:latest: {DIGEST}\n"})
    run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path)
    run_cli(["fix", "--unsafe", "--pins", "pins.txt"], cwd=tmp_path)
    assert f"ghcr.io/acme-ml/eval:latest@{DIGEST}" in (tmp_path / "pod.yaml").read_text()
    after = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)
    assert after.code == 0 and after.json()["summary"]["baselined"] == 1  # SPK103: the same repository
    write(tmp_path, {"pod.yaml": job.replace("acme-ml/eval", "acme-ml/score")})
    other = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)
    assert {rule for _, _, rule in other.pairs()} == {"SPK101", "SPK103"}


def test_a_config_document_keeps_its_fingerprint_when_lines_are_added_above(run_cli, tmp_path: Path) -> None:
    stream = "input: data/a.jsonl\nbatch_size: 8\ndevice: cuda\nschema_version: 1\n---\ninput: data/b.jsonl\n" \
             "batch_size: 16\ndevice: cuda\n"
    write(tmp_path, {"run.yaml": stream})
    before = run_cli(["check", "--format", "json"], cwd=tmp_path)
    assert before.pairs() == {("run.yaml", 6, "SPK602")}
    run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path)
    write(tmp_path, {"run.yaml": "# tuned for the 2026-05 data\n\n" + stream})
    moved = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)
    assert moved.pairs() == set() and moved.json()["summary"]["baselined"] == 1
    write(tmp_path, {"run.yaml": stream + "---\ninput: data/c.jsonl\nbatch_size: 4\ndevice: cpu\n"})
    third = run_cli(["check", *GATE, "--format", "json"], cwd=tmp_path)
    assert third.pairs() == {("run.yaml", 10, "SPK602")}  # a second config without a version is new


# --------------------------------------------------------------------------- baselines written before


def test_a_baseline_written_before_still_matches_where_it_did(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"run.sh": SCRIPT})
    _baseline(tmp_path, "old.json", [
        ("SPK501", "run.sh", "pipefail:python train.py --epochs 3 | tee /ckpt/train.log"),
        ("SPK502", "run.sh", "buffered:python train.py --epochs 3"),
    ])
    kept = run_cli(["check", "--baseline", "old.json", "--format", "json"], cwd=tmp_path)
    assert kept.code == 0 and kept.json()["summary"]["baselined"] == 2
    write(tmp_path, {"run.sh": SCRIPT.replace("--epochs 3", "--epochs 4")})  # where the old key did not match
    moved = run_cli(["check", "--baseline", "old.json", "--format", "json"], cwd=tmp_path)
    assert moved.pairs() == {("run.sh", 3, "SPK501"), ("run.sh", 3, "SPK502")}


def test_baseline_none_shows_every_finding_although_the_configuration_names_one(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": CONFIG, "values.yaml": VALUES_LATEST, "run.sh": SCRIPT})
    assert run_cli(["check", "--write-baseline", ".spikelint-baseline.json"], cwd=tmp_path).code == 0
    assert run_cli(["check", "--format", "json"], cwd=tmp_path).json()["findings"] == []
    every = run_cli(["check", "--format", "json", "--baseline", "none"], cwd=tmp_path)
    assert every.code == 1 and len(every.json()["findings"]) == 3 and every.json()["summary"]["baselined"] == 0


def test_editing_a_flag_of_a_baselined_command_keeps_its_buffered_output_finding_baselined(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"run.sh": SCRIPT})
    assert run_cli(["check", "--write-baseline", "base.json"], cwd=tmp_path).code == 0
    write(tmp_path, {"run.sh": SCRIPT.replace("--epochs 3", "--epochs 4 --lr 3e-4")})
    edited = run_cli(["check", "--baseline", "base.json", "--format", "json"], cwd=tmp_path)
    assert edited.pairs() == set() and edited.json()["summary"]["baselined"] == 2
    write(tmp_path, {"run.sh": SCRIPT.replace("train.py", "pretrain.py")})  # another program: a new finding
    other = run_cli(["check", "--baseline", "base.json", "--format", "json"], cwd=tmp_path)
    assert ("run.sh", 3, "SPK502") in other.pairs()
