"""Each fix on both sides: where it applies (the exact edit) and the near-misses where it must
leave the file alone and say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fix_support import findings
from fix_support import rules
from fix_support import run
from fix_support import write

from spikelint.catalog import load_catalog
from spikelint.commands.explain import render_explain
from spikelint.fix.edits import Edit
from spikelint.fix.edits import apply_edits
from spikelint.fix.edits import untouched_lines_kept
from spikelint.fix.pins import PinsError
from spikelint.fix.pins import parse_pins

DIGEST = "sha256:" + "ab" * 32
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: {image}
          command: {command}
"""
PINNED = "harbor.example.org/nlp/bert:1.4.2@sha256:856eb0688427ecaebd3fa864703b671559a7c62a053baca13c3b6ac77ff5f1fa"


def _fix(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, *options: str) -> tuple[str, str]:
    write(tmp_path, {name: text})
    ran = run(tmp_path, capsys, "fix", "--fail-on", "never", *options)
    assert ran.code == 0, ran.err
    return (tmp_path / name).read_text(encoding="utf-8"), ran.err


# --------------------------------------------------------------------------- SPK501 scripts


def test_script_pipefail_goes_after_the_shebang_and_set_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "#!/bin/bash\nset -e\nset -x\ntorchrun train.py | tee /ckpt/log\n"
    fixed, _ = _fix(tmp_path, capsys, "run.sh", text)
    assert fixed == "#!/bin/bash\nset -e\nset -x\nset -o pipefail\ntorchrun train.py | tee /ckpt/log\n"


def test_script_pipefail_goes_below_the_sbatch_directives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sbatch stops reading #SBATCH at the first command: a line inserted above them would turn off the
    job's GPU request, time limit and log path."""
    text = ("#!/bin/bash\n#SBATCH --gres=gpu:8\n\n# limits\n#SBATCH --time=4:00:00\n#SBATCH --output=/shared/%j.out\n"
            "srun torchrun train.py --output_dir /shared/ckpt 2>&1 | tee /shared/log\n")
    fixed, _ = _fix(tmp_path, capsys, "job.sbatch", text)
    assert fixed == text.replace("#SBATCH --output=/shared/%j.out\n", "#SBATCH --output=/shared/%j.out\nset -o pipefail\n")
    found = findings(tmp_path, capsys)
    assert not [item for item in found if item["rule"] in ("SPK705", "SPK501")]


def test_a_wrap_command_gains_python_u_and_its_pipefail_is_left_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`set -o pipefail` at the top does not reach the job `sbatch --wrap` submits: that one is left, said why;
    `python -u` inside the command is the same job with its log unbuffered (its --wrap text is its command)."""
    text = ("#!/bin/bash\nset -e\n"
            'sbatch -G 1 --time=1:00:00 --wrap "python train.py --resume_from_checkpoint x | tee log.txt"\n'
            "python prep.py | tee prep.log\n")
    fixed, err = _fix(tmp_path, capsys, "launch.sh", text)
    assert fixed == ("#!/bin/bash\nset -e\nset -o pipefail\n"
                     'sbatch -G 1 --time=1:00:00 --wrap "python -u train.py --resume_from_checkpoint x | tee log.txt"\n'
                     "python -u prep.py | tee prep.log\n")
    assert "launch.sh:3: SPK501: the pipeline is the command of `sbatch --wrap`" in err
    assert [(item["rule"], item["line"]) for item in findings(tmp_path, capsys) if item["rule"] == "SPK501"] == \
        [("SPK501", 4)]


def test_script_crlf_lines_stay_crlf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "#!/bin/bash\r\nset -e\r\ntorchrun train.py | tee /ckpt/log\r\n"
    _fix(tmp_path, capsys, "run.sh", text)
    assert (tmp_path / "run.sh").read_bytes() == b"#!/bin/bash\r\nset -e\r\nset -o pipefail\r\ntorchrun train.py | tee /ckpt/log\r\n"


@pytest.mark.parametrize("first", ["#!/bin/sh\n", ""])
def test_script_under_sh_or_without_shebang_is_left(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     first: str) -> None:
    text = first + "set -e\ntorchrun train.py | tee /ckpt/log\n"
    write(tmp_path, {"run.sh": text})
    before = findings(tmp_path, capsys)
    if not any(item["rule"] == "SPK501" for item in before):
        pytest.skip("no SPK501 for this shell")
    fixed, err = _fix(tmp_path, capsys, "run.sh", text)
    assert fixed == text
    assert "not fixable run.sh:" in err and "pipefail" in err


# --------------------------------------------------------------------------- SPK501 Dockerfiles


def test_dockerfile_shell_once_for_a_stage_and_the_stages_built_on_it(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    text = (f"FROM ubuntu@{DIGEST} AS base\nRUN apt-get update\n  RUN curl -fsSL https://x/i.sh | bash\n"
            f"FROM base\nRUN wget -qO- https://x/s.sh | bash\n")
    fixed, _ = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text.replace("  RUN curl", '  SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n  RUN curl')


@pytest.mark.parametrize("base", [f"alpine@{DIGEST}", f"busybox@{DIGEST}"])
def test_dockerfile_on_a_base_without_bash_is_left(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   base: str) -> None:
    text = f"FROM {base}\nRUN wget -qO- https://x/s.sh | sh\n"
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text and "may have no bash" in err


def test_dockerfile_stage_built_on_a_stage_without_bash_is_left(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``FROM base AS builder`` over ``FROM alpine AS base``: the builder's image is alpine's, with no bash."""
    text = (f"FROM alpine@{DIGEST} AS base\nRUN apk add curl\nFROM base AS builder\n"
            "RUN curl -fsSL https://x/i.sh | sh\n")
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text and f"the base image alpine@{DIGEST} may have no bash" in err


def test_dockerfile_stage_with_a_shell_form_cmd_is_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A SHELL also changes a shell-form CMD: the container would run under bash with pipefail instead of /bin/sh."""
    text = f"FROM ubuntu@{DIGEST}\nRUN wget -qO- https://x/s.sh | bash\nCMD python serve.py\n"
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text and "also run the shell-form CMD at line 3 under bash" in err
    exec_form = text.replace("CMD python serve.py", 'CMD ["python", "serve.py"]')
    fixed, _ = _fix(tmp_path, capsys, "Dockerfile", exec_form)
    assert fixed == exec_form.replace("RUN wget", 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\nRUN wget')


@pytest.mark.parametrize(("shell", "fixed_shell"), [
    ('["/bin/bash", "-c"]', '["/bin/bash", "-o", "pipefail", "-c"]'),
    ('["/bin/bash","-c"]', '["/bin/bash","-o","pipefail","-c"]'),
    ('[ "/usr/bin/bash", "-e", "-c" ]', '[ "/usr/bin/bash", "-o", "pipefail", "-e", "-c" ]'),
])
def test_dockerfile_stage_with_its_own_shell_gains_pipefail_in_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  shell: str, fixed_shell: str) -> None:
    """A SHELL line above the stage's own SHELL would be overridden by it: the stage's SHELL gains
    "-o", "pipefail", in its JSON form and its own spacing; a stage built on it inherits it."""
    text = (f"FROM ubuntu@{DIGEST} AS base\nSHELL {shell}\nRUN wget -qO- https://x/s.sh | bash\n"
            f"FROM base\nRUN curl -fsSL https://x/t.sh | bash\n")
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text.replace(f"SHELL {shell}", f"SHELL {fixed_shell}")
    assert 'line 2: added "-o", "pipefail" to the stage\'s SHELL' in err and "fixed 2 findings" in err
    assert not [item for item in findings(tmp_path, capsys) if item["rule"] == "SPK501"]


def test_dockerfile_pipes_before_and_after_the_stages_shell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A piped RUN before the stage's SHELL runs /bin/sh: it gets a SHELL line of its own, and the
    stage's SHELL, which the later RUNs run under, gains -o pipefail."""
    text = (f"FROM ubuntu@{DIGEST}\nRUN wget -qO- https://x/a.sh | bash\nSHELL [\"/bin/bash\", \"-c\"]\n"
            f"RUN wget -qO- https://x/b.sh | bash\n")
    fixed, _ = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == (f"FROM ubuntu@{DIGEST}\nSHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n"
                     f"RUN wget -qO- https://x/a.sh | bash\nSHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n"
                     f"RUN wget -qO- https://x/b.sh | bash\n")


@pytest.mark.parametrize("shell", ['["/bin/sh", "-c"]', '["/bin/ash", "-c"]'])
def test_dockerfile_stage_whose_shell_is_not_bash_is_left(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          shell: str) -> None:
    text = f"FROM ubuntu@{DIGEST}\nSHELL {shell}\nRUN wget -qO- https://x/s.sh | bash\n"
    write(tmp_path, {"Dockerfile": text})
    if not any(item["rule"] == "SPK501" for item in findings(tmp_path, capsys)):
        pytest.skip(f"no SPK501 under {shell}")
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text
    assert "not fixable Dockerfile:3: SPK501: the stage's SHELL at line 2 runs /bin/" in err
    assert "which may have no pipefail" in err


def test_dockerfile_exec_form_shell_is_left_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`CMD ["sh", "-c", "…"]` runs the shell it names: no SHELL instruction changes that."""
    text = (f'FROM ubuntu@{DIGEST}\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
            f'CMD ["sh", "-c", "python serve.py | tee /logs/serve.log"]\n')
    write(tmp_path, {"Dockerfile": text})
    if not any(item["rule"] == "SPK501" for item in findings(tmp_path, capsys)):
        pytest.skip("no SPK501 for an exec-form sh -c")
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text, "--select", "SPK501")
    assert fixed == text and "not fixable Dockerfile:3: SPK501: the CMD at line 3 names its own shell" in err


def test_dockerfile_pipe_in_a_shell_of_its_own_under_a_pipefail_shell_is_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The stage's SHELL has pipefail already: `sh -c '… | …'` runs a shell of its own, which a second
    -o pipefail in SHELL would not reach."""
    text = (f'FROM ubuntu@{DIGEST}\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
            f"RUN sh -c 'wget -qO- https://x/s.sh | bash'\n")
    write(tmp_path, {"Dockerfile": text})
    if not any(item["rule"] == "SPK501" for item in findings(tmp_path, capsys)):
        pytest.skip("no SPK501 for a nested sh -c")
    fixed, err = _fix(tmp_path, capsys, "Dockerfile", text)
    assert fixed == text and "not fixable Dockerfile:3: SPK501: the stage's SHELL at line 2 already sets pipefail" in err


# --------------------------------------------------------------------------- SPK501/SPK502 in YAML


def test_bash_c_string_and_python_u(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB.format(image=PINNED, command='["bash", "-c", "python train.py | tee /ckpt/log"]')
    fixed, _ = _fix(tmp_path, capsys, "job.yaml", text)
    assert '["bash", "-c", "set -o pipefail; python -u train.py | tee /ckpt/log"]' in fixed


def test_sh_c_string_is_left_dash_has_no_pipefail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB.format(image=PINNED, command='["sh", "-c", "set -e; torchrun train.py | tee /ckpt/log"]')
    fixed, err = _fix(tmp_path, capsys, "job.yaml", text)
    assert "set -o pipefail" not in fixed and "runs under sh" in err


def test_github_run_step_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ("on: push\njobs:\n  train:\n    runs-on: ubuntu-latest\n    steps:\n      - name: train  # smoke\n"
            "        run: |\n          python train.py | tee train.log\n          echo done\n")
    write(tmp_path, {".github/workflows/ci.yml": text})
    if not any(item["rule"] == "SPK501" for item in findings(tmp_path, capsys)):
        pytest.skip("no SPK501 for this step")
    fixed, _ = _fix(tmp_path, capsys, ".github/workflows/ci.yml", text)
    assert "        run: |\n          set -o pipefail\n          python -u train.py | tee train.log\n" in fixed
    assert "# smoke" in fixed


# --------------------------------------------------------------------------- SPK702


def test_ttl_in_a_job_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB.format(image=PINNED, command='["python", "-m", "trainer.run"]')
    fixed, _ = _fix(tmp_path, capsys, "job.yaml", text)
    assert fixed == text.replace("spec:\n  template:", "spec:\n  ttlSecondsAfterFinished: 86400\n  template:")


def test_ttl_in_an_existing_run_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: ddp\nspec:\n    runPolicy:\n"
            "        cleanPodPolicy: None\n    pytorchReplicaSpecs:\n        Master:\n            replicas: 1\n"
            "            template:\n                spec:\n                    containers:\n"
            f"                        - name: pytorch\n                          image: {PINNED}\n"
            "                          command: [torchrun, train.py]\n")
    write(tmp_path, {"ddp.yaml": text})
    if not any(item["rule"] == "SPK702" for item in findings(tmp_path, capsys)):
        pytest.skip("no SPK702 for this job")
    fixed, _ = _fix(tmp_path, capsys, "ddp.yaml", text)
    assert "    runPolicy:\n        ttlSecondsAfterFinished: 86400\n        cleanPodPolicy: None\n" in fixed


def test_ttl_in_a_flow_style_spec_is_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec: {template: {spec: {restartPolicy: Never, "
            f"containers: [{{name: t, image: '{PINNED}', command: [torchrun, train.py]}}]}}}}}}\n")
    write(tmp_path, {"job.yaml": text})
    if not any(item["rule"] == "SPK702" for item in findings(tmp_path, capsys)):
        pytest.skip("no SPK702 for this job")
    fixed, err = _fix(tmp_path, capsys, "job.yaml", text)
    assert fixed == text and "not fixable job.yaml:2: SPK702" in err


def test_a_finished_ttl_is_not_touched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB.format(image=PINNED, command='["python", "-m", "trainer.run"]').replace(
        "spec:\n  template:", "spec:\n  ttlSecondsAfterFinished: 3600\n  template:")
    fixed, err = _fix(tmp_path, capsys, "job.yaml", text)
    assert fixed == text and "fixed 0 findings" in err


# --------------------------------------------------------------------------- SPK207


def test_notebook_without_outputs_is_not_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["x = 1"]}
    text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=2)
    fixed, _ = _fix(tmp_path, capsys, "n.ipynb", text)
    assert fixed == text


def test_notebook_indentation_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["x = 1"],
            "outputs": [{"output_type": "execute_result", "data": {"text/plain": ["1"]}, "metadata": {},
                         "execution_count": 1}]}
    text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=2,
                      sort_keys=True) + "\n"
    fixed, _ = _fix(tmp_path, capsys, "n.ipynb", text)
    assert fixed.startswith('{\n  "cells": [\n') and '"outputs": []' in fixed and '"execution_count": null' in fixed


# --------------------------------------------------------------------------- unsafe: SPK202, pins

SECRET = "sk-proj-AbCdEf0123456789AbCdEf0123456789AbCdEf012345"
ENV_JOB = JOB.format(image=PINNED, command='["python", "-m", "trainer.run"]') + (
    f"          env:\n            - name: OPENAI_API_KEY  # for evals\n              value: \"{SECRET}\"\n")


def test_secret_literal_needs_unsafe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixed, err = _fix(tmp_path, capsys, "job.yaml", ENV_JOB)
    assert SECRET in fixed and "more with --unsafe" in err


def test_secret_literal_becomes_a_secret_key_ref_and_is_never_printed(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"job.yaml": ENV_JOB})
    ran = run(tmp_path, capsys, "fix", "--unsafe", "--fail-on", "never")
    fixed = (tmp_path / "job.yaml").read_text()
    assert SECRET not in fixed and SECRET not in ran.out + ran.err
    assert ("            - name: OPENAI_API_KEY  # for evals\n              valueFrom:\n                secretKeyRef:\n"
            "                  name: replace-me-secret\n                  key: OPENAI_API_KEY\n") in fixed
    assert "next: create the Secret" in ran.err


def test_pins_give_the_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB.format(image="'python:3.11'  # base", command='["python", "-m", "trainer.run"]')
    write(tmp_path, {"pins.txt": f"# team lock\npython:3.11: {DIGEST}\n"})
    fixed, err = _fix(tmp_path, capsys, "job.yaml", text, "--unsafe", "--pins", "pins.txt")
    assert f"image: 'python:3.11@{DIGEST}'  # base\n" in fixed and "SPK102" in err


def test_an_image_missing_from_the_pins_is_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB.format(image="python:3.12", command='["python", "-m", "trainer.run"]')
    write(tmp_path, {"pins.txt": f"python:3.11: {DIGEST}\n"})
    fixed, err = _fix(tmp_path, capsys, "job.yaml", text, "--unsafe", "--pins", "pins.txt")
    assert "image: python:3.12\n" in fixed and "python:3.12 is not in the pins file" in err


def test_pins_file_errors_name_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(PinsError, match=r"<pins>:2: the pin of 'python:3.11' is neither"):
        parse_pins(f"x:1: {DIGEST}\npython:3.11: latest\n")
    with pytest.raises(PinsError, match=r"<pins>:1: expected 'reference: pin'"):
        parse_pins("python:3.11\n")
    assert parse_pins("org/model: " + "a" * 40).revisions == {"org/model": "a" * 40}
    write(tmp_path, {"pins.txt": "nonsense\n", "run.sh": "#!/bin/bash\n"})
    ran = run(tmp_path, capsys, "fix", "--unsafe", "--pins", "pins.txt")
    assert ran.code == 2 and "pins.txt:1:" in ran.err and "Traceback" not in ran.err


# --------------------------------------------------------------------------- safety, catalog


def test_a_linked_file_is_not_written_through(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.sh").write_text("#!/bin/bash\nset -e\ntorchrun train.py | tee /ckpt/log\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "run.sh").symlink_to(outside / "real.sh")
    run(repo, capsys, "fix", "run.sh")
    assert "pipefail" not in (outside / "real.sh").read_text()


def test_a_read_only_file_is_left_as_it_is_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rename through a temporary file replaces a read-only file as easily as any other (and root may write
    anything): its read-only bit is someone's decision, as black and ruff --fix respect it."""
    text = "#!/bin/bash\ntorchrun train.py | tee /ckpt/log\n"
    (tmp_path / "run.sh").write_text(text)
    (tmp_path / "run.sh").chmod(0o444)
    ran = run(tmp_path, capsys, "fix", "run.sh")
    assert ran.code == 2 and (tmp_path / "run.sh").read_text() == text
    assert "not written run.sh: the file is read-only (chmod u+w run.sh to let fix change it)" in ran.err
    (tmp_path / "run.sh").chmod(0o644)
    assert run(tmp_path, capsys, "fix", "run.sh").code == 0 and "pipefail" in (tmp_path / "run.sh").read_text()


def test_edits_keep_untouched_lines() -> None:
    text = "a\nb\nc\n"
    assert apply_edits(text, [Edit(2, 2, "x\n"), Edit(2, 2, "x\n")]) == "a\nx\nb\nc\n"
    with pytest.raises(ValueError):
        apply_edits(text, [Edit(0, 3, "z"), Edit(2, 4, "y")])
    assert untouched_lines_kept(text, "a\nB\nc\n", [Edit(2, 3, "B")])
    assert not untouched_lines_kept(text, "a\nb\nC\n", [Edit(2, 3, "b")])


def test_catalog_says_which_rules_have_a_fix_and_explain_shows_it() -> None:
    catalog = load_catalog()
    fixes = {rule_id: rule.fix for rule_id, rule in catalog.items() if rule.fix}
    assert fixes == {"SPK101": "unsafe", "SPK102": "unsafe", "SPK202": "unsafe", "SPK207": "safe",
                     "SPK501": "safe", "SPK502": "safe", "SPK702": "safe"}
    assert "Automatic fix (safe: spikelint fix)" in render_explain(catalog["SPK702"])
    assert "Automatic fix" not in render_explain(catalog["SPK401"])


TOKEN = "ghp_" + "Zq7Wm2Xc9Vb4Nl1Kj8Hg5Fd3Sa6Pe0Ro2Ti7"


def _notebook(source: str, output: str) -> str:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": [source],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": [output + "\n"]}]}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=1) + "\n"


def test_clearing_outputs_that_hold_a_secret_is_applied_with_a_rotate_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Clearing the outputs is the point when they leak a token: the fix is applied (the proof lets
    SPK207 take the SPK204 findings with it) and says, with the token's type and never more than
    its first four characters, that it must be rotated: it stays in the Git history."""
    text = _notebook("print(token)", TOKEN)
    write(tmp_path, {"n.ipynb": text})
    before = rules(findings(tmp_path, capsys))
    assert before["SPK207"] == 1 and before["SPK204"] == 1
    ran = run(tmp_path, capsys, "fix")
    assert ran.code == 0, ran.err
    assert "fixed n.ipynb: SPK207" in ran.err
    assert "rotate: n.ipynb:15: SPK204: the cleared output of cell 0 (stream) showed ghp_… (GitHub token): " \
           "rotate it — it stays in the Git history" in ran.err
    assert TOKEN[:5] not in ran.out + ran.err
    assert TOKEN not in (tmp_path / "n.ipynb").read_text() and '"outputs": []' in (tmp_path / "n.ipynb").read_text()
    assert not findings(tmp_path, capsys)


def test_dry_run_of_a_leaking_notebook_shows_the_note_and_no_secret(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    text = _notebook("print(token)", TOKEN)
    write(tmp_path, {"n.ipynb": text})
    ran = run(tmp_path, capsys, "fix", "--dry-run")
    assert ran.code == 1 and "--- a/n.ipynb" in ran.out
    assert "rotate it" in ran.err and "(GitHub token)" in ran.err
    assert TOKEN[:5] not in ran.out + ran.err
    assert (tmp_path / "n.ipynb").read_text() == text


def test_clearing_outputs_without_a_secret_says_nothing_of_rotation(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The near-miss: outputs with no secret are cleared with no note; a secret in a cell's source is
    not in an output, stays (SPK201) and gets no note either — clearing does not touch it."""
    write(tmp_path, {"plain.ipynb": _notebook("print(1)", "1")})
    ran = run(tmp_path, capsys, "fix")
    assert ran.code == 0 and "fixed plain.ipynb: SPK207" in ran.err and "rotate" not in ran.err
    write(tmp_path, {"src.ipynb": _notebook(f"token = '{TOKEN}'", "done")})
    before = rules(findings(tmp_path, capsys, "src.ipynb"))
    assert before["SPK207"] == 1 and before["SPK204"] == 0 and before["SPK201"] == 1
    ran = run(tmp_path, capsys, "fix", "--fail-on", "never", "src.ipynb")
    assert ran.code == 0 and "fixed src.ipynb: SPK207" in ran.err and "rotate:" not in ran.err
    assert rules(findings(tmp_path, capsys, "src.ipynb")) == {"SPK201": 1}


def test_merge_keys_do_not_break_the_yaml_walk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`<<: *labels` merges keys that have no position in the merging mapping: the walk reads them
    where the anchor is written (it raised KeyError on them)."""
    text = ENV_JOB.replace("metadata:\n  name: train\n", "metadata:\n  name: train\n  labels: &labels\n"
                           "    app: trainer\n").replace("  template:\n", "  template:\n    metadata:\n      labels:\n"
                                                       "        <<: *labels\n        shard: a\n")
    fixed, err = _fix(tmp_path, capsys, "job.yaml", text, "--unsafe")
    assert SECRET not in fixed and "secretKeyRef" in fixed and "        <<: *labels\n        shard: a\n" in fixed
    assert "Traceback" not in err


# --------------------------------------------------------------------------- files no fix repairs


@pytest.mark.parametrize(("name", "text", "said"), [
    ("bad.yaml", "a: [1\n", "not fixable bad.yaml:1: SPK001: invalid YAML"),
    ("bad.sh", "#!/bin/bash\necho hi\nif [ x = y ; then\n", "not fixable bad.sh:3: SPK001: invalid shell script"),
])
def test_a_dry_run_over_a_file_that_is_not_valid_fails_and_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   name: str, text: str, said: str) -> None:
    """It said "would fix 0 findings in 0 files" and exited 0, a check that passed over a broken file."""
    write(tmp_path, {name: text})
    ran = run(tmp_path, capsys, "fix", "--dry-run")
    assert ran.code == 1 and said in ran.err and "fix it by hand" in ran.err
    assert "exit 1: a file is not valid" in ran.err and (tmp_path / name).read_text(encoding="utf-8") == text
