"""Team rule files as a user meets them: what is wrong with one is said before anything is checked (file, line,
what to change, exit 2); a rule that fails on one object is SPK004 there; team findings go through
suppressions, selection, every format, ``explain``, ``rules``, ``rules test`` and ``model`` like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spikelint.cli import main

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sft
  labels:
    team: nlp
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: docker.io/pytorch/pytorch:2.3.0
          command: [torchrun, train.py]
          resources:
            limits:
              nvidia.com/gpu: 8
"""
REGISTRY_RULE = """\
rules:
  - id: ACME001
    name: harbor-images-only
    severity: error
    for_each: container
    assert: 'container.image.registry == "harbor.acme.io"'
    at: image
    message: 'image {{ container.image.reference }} is not from harbor.acme.io'
    remediation: 'push it to harbor.acme.io'
"""


def project(tmp_path: Path, rules: str, files: dict[str, str] | None = None) -> Path:
    (tmp_path / ".spikelint" / "rules").mkdir(parents=True)
    (tmp_path / ".spikelint" / "rules" / "team.yaml").write_text(rules, encoding="utf-8")
    for name, text in (files or {"job.yaml": JOB}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def run(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(folder)
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("rules", "said"), [
    ("rules:\n  - id: ACME001\n    name: [unclosed\n", "team.yaml:4: not valid YAML: did not find expected ','"),
    (REGISTRY_RULE.replace("    at: image\n", "    at: image\n    severty: error\n"),
     "team.yaml:8: rules.0: unknown key 'severty' (did you mean 'severity'?) — a rule knows id, name, description"),
    (REGISTRY_RULE.replace("ACME001", "SPK901"), "team.yaml:2: rule id SPK901: the SPK prefix is reserved"),
    (REGISTRY_RULE.replace("ACME001", "acme-1"), "team.yaml:2: rules.0.id: 'acme-1' does not match"),
    (REGISTRY_RULE.replace("severity: error", "severity: fatal"), "team.yaml:4: rules.0.severity: 'fatal' is not one of"),
    (REGISTRY_RULE.replace("    severity: error\n", ""),
     "rules.0: 'severity' is a required property — add it: severity: error (or warning, or info)"),
    (REGISTRY_RULE.replace("container.image.registry ==", "container.image.registry =="
                           " &&"), "rule ACME001: the assert expression"),
    (REGISTRY_RULE.replace("at: image", "at: claim"), "team.yaml:7: rule ACME001: at: claim is not a field of a container"),
    (REGISTRY_RULE + REGISTRY_RULE.replace("rules:\n", ""), "rule id ACME001 is already defined in"),
    (REGISTRY_RULE.replace("{{ container.image.reference }}", "{{ container.image. }}"),
     "rule ACME001: the template expression `container.image.` does not compile"),
    ("secrets:\n  - id: Acme_Tok\n    regex: 'acme_[a-z0-9]{32}'\n",
     "secrets.0.id: 'Acme_Tok' does not match '^[a-z0-9]+(-[a-z0-9]+)*$' — a secret pattern's id is lower-case words"),
    (REGISTRY_RULE.replace("    at: image\n", "    at: image\n    at: container\n"),
     "team.yaml:8: the key 'at' is written twice in one mapping (first at line 7); remove one of them"),
])
def test_a_wrong_rule_file_stops_the_run_naming_file_line_and_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str], rules: str,
                                                                 said: str) -> None:
    code, out, err = run(project(tmp_path, rules), monkeypatch, capsys, "check", ".")
    assert code == 2 and out == ""
    assert said in err, err
    assert ".spikelint/rules/team.yaml" in err and "Traceback" not in err


def test_an_expression_that_does_not_compile_names_its_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    rules = REGISTRY_RULE.replace("'container.image.registry == \"harbor.acme.io\"'", "'container.image.registry =='")
    code, _, err = run(project(tmp_path, rules), monkeypatch, capsys, "check", ".")
    assert code == 2 and "does not compile (column 28)" in err, err


def test_a_rules_dir_that_is_not_there_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".spikelint.yaml").write_text("rules_dir: policies/\n", encoding="utf-8")
    (tmp_path / "job.yaml").write_text(JOB, encoding="utf-8")
    code, _, err = run(tmp_path, monkeypatch, capsys, "check", ".")
    assert code == 2 and "rules_dir 'policies/' is not a folder" in err


def test_a_rule_that_fails_on_one_object_is_spk004_there_and_the_others_go_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rules = REGISTRY_RULE + """\
  - id: ACME002
    name: owner
    severity: warning
    assert: 'workload.labels["owner"] != ""'
    message: no owner
"""
    code, out, _ = run(project(tmp_path, rules), monkeypatch, capsys, "check", ".", "--format", "json")
    found = {(f["rule"], f["line"]) for f in json.loads(out)["findings"]}
    assert ("ACME001", 12) in found and ("SPK004", 2) in found and code == 1
    spk004 = next(f for f in json.loads(out)["findings"] if f["rule"] == "SPK004")
    assert "team rule ACME002 (owner) could not be evaluated on Job 'sft': no such key: 'owner'" in spk004["message"]
    assert spk004["severity"] == "info"


def test_a_guarded_rule_is_evaluated_and_the_message_template_is_filled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rules = REGISTRY_RULE.replace("'container.image.registry", "'has(container.image.registry) && container.image.registry")
    code, out, _ = run(project(tmp_path, rules), monkeypatch, capsys, "check", ".", "--concise", "--select", "ACME")
    assert out.splitlines()[0] == ("job.yaml:12:18: ACME001 [error] image docker.io/pytorch/pytorch:2.3.0 is not from "
                                   "harbor.acme.io — push it to harbor.acme.io")
    assert "SPK004" not in out and code == 1


def test_team_findings_are_suppressed_selected_and_reported_like_any_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    folder = project(tmp_path, REGISTRY_RULE)
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--format", "sarif")
    sarif = json.loads(out)
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["ACME001"]["name"] == "harbor-images-only" and code == 1
    assert [result["ruleId"] for result in sarif["runs"][0]["results"]].count("ACME001") == 1
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--ignore", "ACME", "--select", "ACME,SPK1")
    assert "ACME001" not in out
    (folder / "job.yaml").write_text(JOB.replace("pytorch:2.3.0", "pytorch:2.3.0  # spikelint: disable=ACME001 mirror soon"),
                                     encoding="utf-8")
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--select", "ACME")
    assert code == 0 and "ACME001" not in out


def test_rules_explain_and_model_show_the_team_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = project(tmp_path, REGISTRY_RULE)
    code, out, _ = run(folder, monkeypatch, capsys, "rules")
    line = next(row for row in out.splitlines() if row.startswith("ACME001"))
    assert "harbor-images-only" in line and ".spikelint/rules/team.yaml" in line and code == 0
    code, out, _ = run(folder, monkeypatch, capsys, "explain", "ACME001")
    assert out.startswith("ACME001 harbor-images-only (error, team)") and code == 0
    code, out, _ = run(folder, monkeypatch, capsys, "model", "job.yaml")
    [workload] = json.loads(out)
    assert workload["workload"]["containers"][0]["image"]["registry"] == "docker.io"
    assert workload["workload"]["gpus"] == 8.0 and workload["workload"]["labels"] == {"team": "nlp"}
    assert workload["positions"]["containers[0]"]["image"] == [12, 18]
    assert workload["positions"]["workload"]["labels.team"] == [6, 11]


def test_rules_test_names_the_example_that_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    examples = """\
    examples:
      bad:
        - path: job.yaml
          content: |
            apiVersion: batch/v1
            kind: Job
            metadata: {name: a}
            spec:
              template:
                spec:
                  containers: [{name: t, image: "harbor.acme.io/x:1.0.0"}]
"""
    folder = project(tmp_path, REGISTRY_RULE + examples)
    code, out, _ = run(folder, monkeypatch, capsys, "rules", "test")
    assert code == 1
    assert "FAIL .spikelint/rules/team.yaml:12: ACME001 bad example job.yaml: expected 1 finding(s) of ACME001, got 0" in out
    assert out.splitlines()[-1] == "0 passed, 1 failed (1 examples of 1 rules)"


def test_the_bundled_team_rule_set_passes_its_own_examples(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    code, out, _ = run(root, monkeypatch, capsys, "rules", "test", "examples/team-rules")
    assert code == 0, out
    assert out.splitlines()[-1] == "18 passed, 0 failed (18 examples of 8 rules and 1 secret patterns)"


SECRETS = """\
secrets:
  - id: acme-deploy-key
    description: ACME deploy key
    regex: '\\b(acmedk_[A-Za-z0-9]{32})\\b'
    keywords: [acmedk_]
    entropy: 3.5
    paths: ["deploy/**", "*.env"]
    allow:
      stopwords: [example]
      paths: ["deploy/testdata/**"]
"""
TOKEN = "acmedk_" + "Q3v9ZkT1pLm8Rw2XyB7nHc4JfD6sGa0E"


def test_a_team_secret_pattern_reports_spk201_naming_it_and_never_the_token(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "deploy" / "testdata").mkdir(parents=True)
    files = {"prod.env": f"KEY={TOKEN}\n", "deploy/values.yaml": f"key: {TOKEN}\n",
             "deploy/testdata/fake.yaml": f"key: {TOKEN}\n", "notes.md": f"key {TOKEN}\n",
             "deploy/docs.yaml": "key: acmedk_exampleexampleexampleexample00\n", "low.env": "KEY=acmedk_" + "a" * 32 + "\n"}
    folder = project(tmp_path, SECRETS, files)
    code, out, err = run(folder, monkeypatch, capsys, "check", ".", "--select", "SPK201", "--format", "json")
    found = sorted((f["path"], f["line"], f["column"]) for f in json.loads(out)["findings"])
    assert found == [("deploy/values.yaml", 1, 6), ("prod.env", 1, 5)] and code == 1
    assert "team pattern acme-deploy-key: ACME deploy key" in out
    assert TOKEN[:8] not in out + err
    assert all(f["message"].startswith("hardcoded acme… (team pattern") for f in json.loads(out)["findings"])


AWS_SHAPE = "secrets:\n  - id: our-aws-keys\n    description: our AWS keys\n    regex: 'AKIA[A-Z0-9]{16}'\n"


def test_a_secret_both_a_team_shape_and_a_built_in_detector_find_is_one_finding_named_by_the_team(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A team that writes a shape spikelint knows too (an AWS key id) gets one finding, not two; the same
    key on another line, and another key beside it, stay findings of their own."""
    key, other = "AKIA" + "Z7QR4WX2LM9PVN3K", "AKIA" + "B8TY5UE3HN6QZC2M"
    folder = project(tmp_path, AWS_SHAPE, {"conf.py": f'aws_access_key_id = "{key}"\nbackup = "{key}"  # {other}\n'})
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--format", "json")
    found = [(f["line"], f["column"], f["message"]) for f in json.loads(out)["findings"]]
    assert [(line, column) for line, column, _ in found] == [(1, 22), (2, 11), (2, 36)] and code == 1
    assert all("team pattern our-aws-keys" in message for _, _, message in found)
    code, out, _ = run(folder, monkeypatch, capsys, "rules", "test", ".spikelint/rules")
    assert code == 0
    import subprocess  # the history gate: one finding per secret a commit adds (the first place of a repeated one)

    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-c", "user.email=ci@example.org", "-c", "user.name=CI", "-c", "commit.gpgsign=false",
                        *command], cwd=folder, check=True, capture_output=True)
    code, out, _ = run(folder, monkeypatch, capsys, "history", "--format", "json")
    found = [(f["line"], f["column"], f["message"]) for f in json.loads(out)["findings"]]
    assert [(line, column) for line, column, _ in found] == [(1, 22), (2, 36)] and code == 1
    assert all("team pattern our-aws-keys" in message for _, _, message in found)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_team_token_quoted_by_another_message_is_masked_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """An unknown Dockerfile instruction is quoted by SPK001 and shown in the code frame: the team's token shape
    in it is masked like the shapes spikelint knows, in every format and in a report file."""
    folder = project(tmp_path, SECRETS, {"Dockerfile": f"FROM python:3.11\nDEPLOY {TOKEN} --flag\n"})
    code, out, err = run(folder, monkeypatch, capsys, "check", "Dockerfile", "--format", fmt)
    assert code == 1 and "SPK001" in out and TOKEN[:8] not in out + err
    if fmt == "text":  # the code frame shows the line, the token masked
        assert "acme…" in out
    run(folder, monkeypatch, capsys, "check", "Dockerfile", "--format", fmt, "--output", "report.out")
    assert TOKEN[:8] not in (folder / "report.out").read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["text", "html"])
def test_a_team_token_a_code_frame_cuts_is_masked_before_the_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """A frame cut to the terminal's (or the page's) width cut the token, and the 32-character shape no longer
    matched the rest: up to 28 characters of it were shown."""
    for padding in range(60, 110, 7):
        script = (f"#!/bin/bash\nset -euo pipefail\nrunai submit sft -i harbor.acme.internal/t:latest "
                  f"--annotation owner={'x' * padding} --annotation note={TOKEN} -- python train.py\n")
        folder = project(tmp_path / f"p{padding}", SECRETS.replace('paths: ["deploy/**", "*.env"]', 'paths: ["**"]'),
                         {"submit.sh": script})
        code, out, err = run(folder, monkeypatch, capsys, "check", "submit.sh", "--select", "SPK101", "--format", fmt)
        assert code == 1 and TOKEN[:5] not in out + err, (padding, out)


def test_the_model_command_masks_a_team_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``spikelint model`` prints env values and arguments as written: spikelint's own shapes were masked there,
    the team's were printed whole."""
    job = JOB.replace("          command: [torchrun, train.py]\n",
                      f"          command: [torchrun, train.py, --token, {TOKEN}]\n"
                      f"          env: [{{name: X, value: {TOKEN}}}]\n")
    assert TOKEN in job
    folder = project(tmp_path, SECRETS.replace('paths: ["deploy/**", "*.env"]', 'paths: ["**"]'), {"job.yaml": job})
    code, out, err = run(folder, monkeypatch, capsys, "model", "job.yaml")
    assert code == 0 and TOKEN[:8] not in out + err and out.count("acme") >= 2


@pytest.mark.parametrize(("pattern", "said"), [
    ("    regex: '(acmedk_[a-z'\n", "team.yaml:2: secret pattern p: regex '(acmedk_[a-z' is not a valid regular expression"),
    ("    regex: '(a)(b)'\n", "the regex has 2 capture groups — keep one"),
    ("    regex: 'x'\n    keyword: [x]\n", "unknown key 'keyword' (did you mean 'keywords'?) — a secret pattern knows id, description, regex"),
])
def test_a_wrong_secret_pattern_is_said_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], pattern: str, said: str) -> None:
    code, _, err = run(project(tmp_path, "secrets:\n  - id: p\n" + pattern), monkeypatch, capsys, "check", ".")
    assert code == 2 and said in err, err


def test_a_sub_folder_configuration_adds_its_rules_below_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The top's rules hold everywhere; a team folder's own .spikelint/rules add to them for its files only, and
    its configuration may name its own rules."""
    folder = project(tmp_path, REGISTRY_RULE, {"job.yaml": JOB})
    team = folder / "team-a"
    (team / ".spikelint" / "rules").mkdir(parents=True)
    (team / ".spikelint" / "rules" / "a.yaml").write_text(
        "rules:\n  - id: TEAMA001\n    name: team-a-owner\n    severity: warning\n"
        "    assert: '\"owner\" in workload.labels'\n    at: labels\n    message: team A wants an owner\n", encoding="utf-8")
    (team / ".spikelint.yaml").write_text("severity: {TEAMA001: error}\n", encoding="utf-8")
    (team / "job.yaml").write_text(JOB, encoding="utf-8")
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--format", "json")
    found = sorted((f["path"], f["rule"], f["severity"]) for f in json.loads(out)["findings"] if f["rule"][0] != "S")
    assert found == [("job.yaml", "ACME001", "error"), ("team-a/job.yaml", "ACME001", "error"),
                     ("team-a/job.yaml", "TEAMA001", "error")], found


@pytest.mark.parametrize(("check", "said"), [
    ("workload.gpu_count <= 8", "reads `workload.gpu_count`, which the model does not have — the fields there are"),
    ("workload.containerz.size() > 0", "reads `workload.containerz`, which the model does not have"),
    ("workload.gpus <= \"8\"", "fails on every workload that has the fields it reads: no such overload"),
    ("mount.path != \"/tmp\"", "reads `mount`, which this rule does not bind — for_each: mount binds it"),
])
def test_a_field_the_model_lacks_or_a_type_error_is_said_when_the_rules_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], check: str, said: str) -> None:
    rules = ("rules:\n  - id: ACME001\n    name: r\n    severity: error\n"
             f"    assert: '{check}'\n    message: m\n")
    code, _, err = run(project(tmp_path, rules), monkeypatch, capsys, "check", ".")
    assert code == 2 and said in err and "team.yaml:5: rule ACME001: the assert expression" in err, err


@pytest.mark.parametrize("check", [
    'workload.labels["owner"] != ""',  # a key a map may not have: SPK004 where it is missing, not a load error
    'workload.containers.all(c, c.image.digest != null)', 'container.name.startsWith("x")',
    '"x" in workload.slurm && workload.slurm["x"] == "y"', 'workload.labels.owner == "x"',
    'container.mounts.all(mount, mount.persistent)',  # a macro's variable named like an element
])
def test_the_load_time_checks_let_valid_rules_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], check: str) -> None:
    rules = ("rules:\n  - id: ACME001\n    name: r\n    severity: error\n    for_each: container\n"
             f"    assert: '{check.replace(chr(39), chr(39) * 2)}'\n    message: m\n")
    code, _, err = run(project(tmp_path, rules), monkeypatch, capsys, "check", ".")
    assert code in (0, 1) and "configuration error" not in err, err


def test_spk004_goes_with_the_team_rules_a_run_selects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rules = "rules:\n  - id: ACME001\n    name: r\n    severity: error\n    assert: 'workload.labels[\"x\"] == \"y\"'\n    message: m\n"
    folder = project(tmp_path, rules)
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--select", "ACME", "--concise")
    assert "SPK004 [info] team rule ACME001 (r) could not be evaluated" in out
    code, out, _ = run(folder, monkeypatch, capsys, "check", ".", "--select", "ACME", "--ignore", "SPK004", "--concise")
    assert "SPK004" not in out


def test_a_bad_example_that_only_makes_the_rule_fail_does_not_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rules = ("rules:\n  - id: ACME001\n    name: r\n    severity: error\n"
             "    assert: 'workload.labels[\"x\"] == \"y\"'\n    message: m\n    examples:\n      bad:\n"
             "        - path: job.yaml\n          content: |\n" + "".join(f"            {line}\n" for line in JOB.splitlines()))
    code, out, _ = run(project(tmp_path, rules), monkeypatch, capsys, "rules", "test")
    assert code == 1 and "expected 1 finding(s) of ACME001, got 0 (SPK004 line 2" in out


def test_a_broken_rule_file_leaves_explain_and_rules_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = project(tmp_path, "rules:\n  - id: ACME001\n    name: [\n")
    code, out, err = run(folder, monkeypatch, capsys, "explain", "SPK101")
    assert code == 0 and out.startswith("SPK101") and "warning: the team rules are left out" in err
    code, out, err = run(folder, monkeypatch, capsys, "check", ".")
    assert code == 2 and "not valid YAML" in err


def test_the_history_gate_reads_a_team_token_shape_as_check_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``check`` reported the team's token as SPK201 and ``history`` passed the push that held it."""
    import subprocess

    folder = project(tmp_path, SECRETS.replace('paths: ["deploy/**", "*.env"]', 'paths: ["**"]'),
                     {"settings.toml": f'note = "see {TOKEN} in the vault"\n'})
    environment = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-c", "user.email=ci@example.org", "-c", "user.name=CI", "-c", "commit.gpgsign=false",
                        *command], cwd=folder, env=environment, check=True, capture_output=True)
    code, out, err = run(folder, monkeypatch, capsys, "history", "--format", "json")
    found = [(finding["path"], finding["line"], finding["rule"]) for finding in json.loads(out)["findings"]]
    assert code == 1 and found == [("settings.toml", 1, "SPK201")] and TOKEN[:8] not in out + err
    assert "team pattern acme-deploy-key" in out


@pytest.mark.parametrize("where", [".", "prod"])
def test_a_rules_paths_start_at_the_configuration_not_where_spikelint_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], where: str) -> None:
    """``cd prod && spikelint check .`` switched a ``paths: ["prod/**"]`` rule off without a word."""
    rules = REGISTRY_RULE.replace("    for_each: container\n", "    for_each: container\n    paths: [\"prod/**\"]\n")
    folder = project(tmp_path, rules, {".spikelint.yaml": "fail_on: error\n"})
    for name in ("prod", "dev"):
        (folder / name).mkdir()
        (folder / name / "job.yaml").write_text(JOB, encoding="utf-8")
    code, out, _ = run(folder / where, monkeypatch, capsys, "check", ".", "--select", "ACME", "--format", "json")
    found = [(finding["path"], finding["rule"]) for finding in json.loads(out)["findings"]]
    assert code == 1 and found == [("prod/job.yaml" if where == "." else "job.yaml", "ACME001")]
