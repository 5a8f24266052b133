"""SPK501 pipe-without-pipefail and SPK502 buffered-python-log: helpers and end-to-end cases."""

from __future__ import annotations

from datetime import date

import pytest

from spikelint.checks.logs.programs import failure_matters
from spikelint.checks.logs.programs import program
from spikelint.checks.logs.programs import python_mode
from spikelint.checks.logs.programs import stdout_state
from spikelint.checks.logs.shell import dockerfile_logs
from spikelint.checks.logs.shell import shell_script_logs
from spikelint.checks.logs.shell import workload_command_logs
from spikelint.checks.registry import CheckContext
from spikelint.config import Config
from spikelint.documents.shell import parse_shell
from spikelint.engine import lint_snippet
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import SourceFile
from spikelint.model import Workload
from spikelint.discovery.project import Project

SELECT = {"select": ["SPK501", "SPK502"]}


def findings(filename: str, text: str) -> list[tuple[int, int, str]]:
    return [(f.line, f.column, f.rule) for f in lint_snippet(filename, text, SELECT)]


def first_command(source: str):  # type: ignore[no-untyped-def]
    return parse_shell(source).pipelines[0].commands[0]


# --------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("arguments, expected", [
    (["train.py"], (False, "script")),
    (["-u", "train.py"], (True, "script")),
    (["-Bu", "train.py"], (True, "script")),
    (["-X", "dev", "-u", "t.py"], (True, "script")),
    (["-Wignore", "t.py"], (False, "script")),
    (["-W", "ignore", "-u", "t.py"], (True, "script")),
    (["-m", "trainer.run"], (False, "module:trainer.run")),
    (["-um", "trainer.run"], (True, "module:trainer.run")),
    (["-mpip", "install"], (False, "module:pip")),
    (["-c", "print(1)"], (False, "command")),
    (["--version"], (False, "info")),
    (["-V"], (False, "info")),
    (["-"], (False, "stdin")),
    ([], (False, "stdin")),
    (["train.py", "-u"], (False, "script")),
])
def test_python_mode(arguments: list[str], expected: tuple[bool, str]) -> None:
    assert python_mode(arguments) == expected


@pytest.mark.parametrize("source, piped, expected", [
    ("python t.py", False, None),
    ("python t.py", True, "pipe"),
    ("python t.py > log", False, "file"),
    ("python t.py >> log 2>&1", False, "file"),
    ("python t.py &> log", False, "file"),
    ("python t.py >& log", False, "file"),
    ("python t.py 1> log", False, "file"),
    ("python t.py 2> err", False, None),
    ("python t.py 2> err", True, "pipe"),
    ("python t.py > /dev/null", False, "null"),
    ("python t.py > log 1>&2", False, "terminal"),
    ("python t.py >&2", True, "terminal"),
    ("python t.py > >(tee log)", False, "pipe"),
    ("python t.py < input.txt", False, None),
    ("python t.py > /dev/stderr", False, "terminal"),
    # fill-in blanks of a documented command are not redirects; redirects beside them still are
    ("python run.py --model <model name> --epochs 3", False, None),
    ("python run.py --model <model_name> --epochs 3", False, None),
    ("python run.py --model <base model> --data <data dir> --seed 1", False, None),
    ("python run.py --model <model name> --epochs 3 > train.log", False, "file"),
    ("python run.py --model <model name> 2>&1 | tee train.log", True, "pipe"),
    ("python run.py <in.txt >out.log", False, "file"),
    ("python run.py <cfg.txt>out.log", False, "file"),
    ("python run.py < cfg.txt> out.log", False, "file"),
])
def test_stdout_state(source: str, piped: bool, expected: str | None) -> None:
    assert stdout_state(first_command(source), piped) == expected


@pytest.mark.parametrize("source, name, env", [
    ("python t.py", "python", []),
    ("env A=1 PYTHONUNBUFFERED=1 python t.py", "python", ["A=1", "PYTHONUNBUFFERED=1"]),
    ("env -u X python t.py", "python", []),
    ("nohup nice -n 5 python t.py", "python", []),
    ("timeout -s INT 3600 python t.py", "python", []),
    ("exec python t.py", "python", []),
    ("stdbuf -oL python t.py", "python", []),
    ("taskset -c 0-3 python t.py", "python", []),
    ("sudo -u ml python t.py", "python", []),
    ("uv run --with x python t.py", "python", []),
    ("conda run -n env python t.py", "python", []),
    ("srun --ntasks=8 python t.py", "python", []),
    ("mpirun -np 4 -x NCCL_DEBUG python t.py", "python", []),
    ("time python t.py", "python", []),
    ("runai submit -- python t.py", "runai", []),
])
def test_program_skips_wrappers(source: str, name: str, env: list[str]) -> None:
    command = first_command(source)
    found = program(command)
    assert found is not None
    index, wrapper_env = found
    assert command.words[index].text == name and wrapper_env == env


def test_program_of_a_bare_wrapper_is_none() -> None:
    assert program(first_command("env")) is None
    assert program(first_command("nohup")) is None


@pytest.mark.parametrize("source, matters", [
    ("python t.py", True), ("curl -fsSL x", True), ("$PYTHON t.py", True), ("echo x", False), ("cat f", False),
    ("grep x f", False), ("env X=1 echo x", False), ("nohup python t.py", True), ("A=1 true", False),
])
def test_failure_matters(source: str, matters: bool) -> None:
    assert failure_matters(first_command(source)) is matters


def test_compound_failure_matters_when_a_body_command_does() -> None:
    loop = parse_shell("for i in 1 2; do python t.py; done | tee log").pipelines[0].commands[0]
    quiet = parse_shell("for i in 1 2; do echo $i; done | tee log").pipelines[0].commands[0]
    assert failure_matters(loop) and not failure_matters(quiet)


# --------------------------------------------------------------------------- launch scripts


def test_catalog_style_script() -> None:
    text = ("#!/usr/bin/env bash\nset -eu\nOUT=/ckpt/r\n"
            'python -u -m trainer.run --output_dir "$OUT" 2>&1 | tee -a "$OUT/train.log"\n'
            'python3 preprocess.py > "$OUT/pre.log" 2>&1\n')
    assert findings("scripts/train.sh", text) == [(4, 1, "SPK501"), (5, 1, "SPK502")]


def test_finding_points_at_the_program_word() -> None:
    text = "set -e\nCUDA_VISIBLE_DEVICES=0 nohup python t.py | tee log\n  env X=1 python3 t.py > log\n"
    assert findings("run.sh", text) == [(2, 30, "SPK501"), (2, 30, "SPK502"), (3, 11, "SPK502")]


def test_one_finding_per_pipeline_and_per_command() -> None:
    text = "python a.py | python b.py | tee log\n"
    assert findings("run.sh", text) == [(1, 1, "SPK501"), (1, 1, "SPK502"), (1, 15, "SPK502")]


def test_unbuffered_must_be_set_before_the_command() -> None:
    text = "python a.py > log\nexport PYTHONUNBUFFERED=1\npython b.py > log\n"
    assert findings("run.sh", text) == [(1, 1, "SPK502")]


def test_empty_unbuffered_does_not_count() -> None:
    assert findings("run.sh", 'export PYTHONUNBUFFERED=""\npython a.py > log\n') == [(2, 1, "SPK502")]
    assert findings("run.sh", "PYTHONUNBUFFERED= python a.py > log\n") == [(1, 19, "SPK502")]


def test_runai_environment_flag_reaches_the_inner_script() -> None:
    text = ('runai training submit x -i img:1 -e PYTHONUNBUFFERED=1 -- bash -c "python t.py > /ckpt/log"\n'
            'runai training submit y -i img:1 -- bash -c "python t.py > /ckpt/log"\n')
    assert findings("launch.sh", text) == [(2, 46, "SPK502")]


def test_pipe_after_runai_is_the_local_shell_pipe() -> None:
    text = "runai training submit x -i img:1 -- python train.py | tee submit.log\n"
    assert findings("launch.sh", text) == [(1, 1, "SPK501")]


def test_exec_redirection_covers_the_rest_of_the_script() -> None:
    text = "python before.py\nexec >> /ckpt/all.log 2>&1\npython after.py\nexec > /dev/null\npython quiet.py\n"
    assert findings("run.sh", text) == [(3, 1, "SPK502")]


def test_fingerprints_do_not_depend_on_the_line() -> None:
    text = "python t.py | tee log\n"
    before = {f.fingerprint for f in lint_snippet("run.sh", text, SELECT)}
    after = {f.fingerprint for f in lint_snippet("run.sh", "# moved\n\n" + text, SELECT)}
    assert before == after and len(before) == 2


def test_messages_name_the_programs_and_the_fix() -> None:
    found = lint_snippet("run.sh", "set -e\ncurl -fsSL u | bash\npython t.py > log\n", SELECT)
    assert "`curl | bash`" in found[0].message and "set -o pipefail" in found[0].message
    assert "python -u" in found[1].message and "PYTHONUNBUFFERED=1" in found[1].message


def test_fill_in_blanks_in_documented_commands_are_not_log_files() -> None:
    text = ("#!/bin/bash\n"
            "python run.py --model <model name> --epochs 3\n"
            "python run.py --model <model_name> --lr 1e-4\n"
            "python run.py --model <model name>\n"
            "python run.py --model <model name> --epochs 3 > train.log\n")
    assert findings("scripts/usage.sh", text) == [(5, 1, "SPK502")]
    digest = "@sha256:" + "0" * 64
    docker = f"FROM python:3.11.9{digest}\nCMD python run.py --model <model name> --epochs 3\n"
    assert findings("Dockerfile", docker) == []


@pytest.mark.parametrize("line", [
    "torchrun --nproc_per_node 8 train.py &> /ckpt/train.log",
    "python -m torch.distributed.launch --nproc_per_node 8 train.py &> /ckpt/train.log",
    "python -m torch.distributed.run --nproc_per_node 8 train.py > /ckpt/train.log 2>&1",
    "deepspeed --num_gpus 8 train.py --deepspeed ds.json > /ckpt/train.log 2>&1",
])
def test_launchers_that_start_their_workers_with_python_u_are_not_reported(line: str) -> None:
    """torchrun, torch.distributed.launch/run and deepspeed run each worker as ``python -u``."""
    assert findings("run.sh", line + "\n") == []


# --------------------------------------------------------------------------- Dockerfiles


def test_dockerfile_env_applies_to_later_runs_and_to_cmd_anywhere() -> None:
    digest = "@sha256:" + "0" * 64
    text = (f"FROM python:3.11.9{digest} AS base\nRUN python a.py > a.log\nENV PYTHONUNBUFFERED=1\n"
            "RUN python b.py > b.log\nFROM base AS child\nRUN python c.py > c.log\n"
            f"FROM python:3.11.9{digest}\nCMD python d.py > d.log\nENV PYTHONUNBUFFERED=1\n"
            f"FROM python:3.11.9{digest}\nARG PYTHONUNBUFFERED=1\nRUN python e.py > e.log\nCMD python f.py > f.log\n")
    assert findings("Dockerfile", text) == [(2, 5, "SPK502"), (13, 5, "SPK502")]


def test_dockerfile_shell_instruction_and_json_cmd() -> None:
    digest = "@sha256:" + "0" * 64
    text = (f"FROM python:3.11.9{digest}\nRUN a | tee a.log\nSHELL [\"/bin/bash\", \"-eo\", \"pipefail\", \"-c\"]\n"
            "RUN c | tee c.log\nCMD [\"bash\", \"-c\", \"e | tee e.log\"]\n"
            "CMD [\"bash\", \"-o\", \"pipefail\", \"-c\", \"g | tee g.log\"]\n")
    assert findings("Dockerfile", text) == [(2, 5, "SPK501"), (5, 21, "SPK501")]


# --------------------------------------------------------------------------- workloads


def _document(kind: str, text: str = "") -> Document:
    return Document(SourceFile("x", "x", kind), text)


def _context() -> CheckContext:
    return CheckContext(Config(), Project(), date(2026, 1, 1))


def test_checks_skip_documents_of_the_wrong_shape() -> None:
    for kind in (FileKind.SHELL, FileKind.DOCKERFILE):
        document = _document(kind)
        for parsed in (None, 3, [], "text"):
            document.parsed = parsed
            assert list(shell_script_logs(document, _context())) == []
            assert list(dockerfile_logs(document, _context())) == []


def test_workload_check_tolerates_odd_commands() -> None:
    container = Container("c", "main", None, command=[Located(3, 1, 1), Located(None, 1, 2)],
                          args=[Located("bash", 1, 3), Located("-c", 1, 4)])
    workload = Workload("x", "kubernetes", "Job", Located("Job", 1, 1), containers=[container])
    assert list(workload_command_logs(workload, _document(FileKind.YAML, "kind: Job\n"), _context())) == []


def test_workload_check_leaves_launch_scripts_to_the_script_check() -> None:
    container = Container("c", "main", None, command=[Located("bash", 1, 1), Located("-c", 1, 6),
                                                      Located("python t.py | tee log", 1, 9)])
    workload = Workload("x", "runai-cli", "training", Located("runai", 1, 1), containers=[container])
    assert list(workload_command_logs(workload, _document(FileKind.SHELL), _context())) == []
    assert [p.rule for p in workload_command_logs(workload, _document(FileKind.YAML), _context())] == [
        "SPK501", "SPK502"]


def test_kubernetes_env_reference_counts_as_set() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: img:1.0.0@sha256:0000000000000000000000000000000000000000000000000000000000000000
      command: ["sh", "-c", "python t.py > /ckpt/log"]
      env:
        - name: PYTHONUNBUFFERED
          valueFrom: {configMapKeyRef: {name: cfg, key: unbuffered}}
"""
    assert findings("pod.yaml", text) == []
    assert findings("pod.yaml", text.replace("PYTHONUNBUFFERED", "OTHER")) == [(9, 30, "SPK502")]


def test_block_scalar_positions() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: img:1.0.0@sha256:0000000000000000000000000000000000000000000000000000000000000000
      command:
        - /bin/bash
        - -c
        - |
          set -e
            python t.py \\
              --lr 1 | tee /ckpt/log
"""
    assert findings("pod.yaml", text) == [(14, 13, "SPK501"), (14, 13, "SPK502")]


def test_function_called_into_a_pipe() -> None:
    text = ("#!/bin/bash\nmain() {\n  python train.py\n  python eval.py > /dev/null\n  { python inner.py; } > inner.log\n}\n"
            'main "$@" 2>&1 | tee run.log\n')
    assert findings("run.sh", text) == [(3, 3, "SPK502"), (5, 5, "SPK502"), (7, 1, "SPK501")]


def test_output_captured_into_a_variable_is_not_a_log() -> None:
    assert findings("run.sh", "X=$(python a.py | tee a.log)\nY=`python b.py > b.log`\n") == [(2, 4, "SPK502")]


@pytest.mark.parametrize("line", ["python apply_bpe.py -c codes < train.de > bpe.de",
                                  "python learn_bpe.py -s 32000 < $TRAIN > $BPE_CODE",
                                  "python dedup.py corpus.txt > $tmp/corpus.dedup"])
def test_stdout_alone_into_a_file_not_named_like_a_log_is_the_product(line: str) -> None:
    assert findings("prepare.sh", f"#!/bin/bash\n{line}\n") == []


@pytest.mark.parametrize("line", ["python train.py --epochs 3 > run.out", "python train.py > result 2>&1",
                                  "python train.py &> result", "python train.py > $LOG_FILE"])
def test_a_log_named_file_or_the_whole_console_is_a_log(line: str) -> None:
    assert [rule for _, _, rule in findings("run.sh", f"#!/bin/bash\n{line}\n")] == ["SPK502"]


# --------------------------------------------------------------------------- where a lost status matters


def _lost(text: str) -> list[int]:
    from spikelint.checks.logs.pipelines import pipefail_findings

    return [pipeline.line for pipeline in pipefail_findings(parse_shell(text))]


def test_pipefail_state_is_tracked_in_order() -> None:
    text = ("set -e\npython a.py | tee a.log\nset -o pipefail\npython b.py | tee b.log\n"
            "( set +o pipefail; python c.py | tee c.log )\npython d.py | tee d.log\nset +o pipefail\n"
            "python e.py | tee e.log\nsh -c 'python f.py | tee f.log'\n")
    assert _lost(text) == [2, 5, 8, 9]


@pytest.mark.parametrize("text, lines", [
    ("python t.py | tee log\n", [1]),  # the status the script ends with
    ("python t.py | tee log\necho done\n", []),  # without set -e nothing acts on it
    ("python t.py | tee log && echo ok\necho done\n", [1]),  # `&&` acts on it
    ("python t.py | tee log\nif [ $? -ne 0 ]; then exit 1; fi\necho done\n", [1]),
    ("python t.py | tee log\nstatus=${PIPESTATUS[0]}\n", []),
    ("set -e\npython t.py | tee log || true\n", []),  # rescued
    ("set -e\npython t.py | tee log &\nwait\n", []),  # background
    ("set -e\nif python t.py | tee log; then :; fi\n", []),  # condition
    ("set -e\nx=$(python t.py | tee log)\n", []),  # substitution
    ("set -e\nhelm list | grep -q x\n", []),  # a filter nothing acts on
    ("set -e\nwget -qO- u | tar xz\n", []),  # not a log sink nor a shell
    ("set -e\ncurl -fsSL u | sudo bash -s -- --yes\n", [2]),
    ("set -e\ncurl -fsSL u | bash script.sh\n", []),  # bash reads a file, not the download
    ("set -e\npython gen.py | sh\n", []),  # not a download
    ("set -e\npython t.py | sed 's/^/x /' > out.log\n", [2]),
    ("set -e\npython t.py | cat >> out.log\n", [2]),
    ("set -e\npip freeze | tee installed.txt\n", []),
    ("set -e\nwget -qO- k | gpg --dearmor | sudo tee /etc/apt/keyrings/k.gpg > /dev/null\n", []),
    ("main() {\n  python t.py | tee log\n}\nmain \"$@\"\n", [2]),  # the function's tail is the script's
    ("if [ -n \"$R\" ]; then\n  python t.py | tee log\nfi\n", [2]),
    ("set -exou pipefail\npython t.py | tee log\n", []),  # `o` takes the next word, `u` still applies
])
def test_where_a_lost_status_matters(text: str, lines: list[int]) -> None:
    assert _lost(text) == lines


def test_one_finding_per_script_names_the_others() -> None:
    text = "set -e\npython a.py | tee a\npython b.py | tee b\ncurl -s u | bash\n"
    found = [f for f in lint_snippet("run.sh", text, SELECT) if f.rule == "SPK501"]
    assert [(f.line, f.column) for f in found] == [(2, 1)]
    assert "2 more pipelines like it in this script, lines 3, 4" in found[0].message


def test_templates_are_not_shell() -> None:
    text = "#!/bin/bash\n{% if x | default(none) %}\npython t.py | tee log\n{% endif %}\n"
    assert findings("deploy.sh", text) == []
    assert findings("run.sh", "#!/bin/bash\ndocker inspect -f '{{.Id}}' c\npython t.py | tee log\n") == [
        (3, 1, "SPK501"), (3, 1, "SPK502")]


def test_python_writing_data_is_not_a_log() -> None:
    text = ('set -e\nOUT=/data/set.json\npython prep.py > "$OUT"\npython gen.py | sh\n'
            'python report.py >> "$GITHUB_STEP_SUMMARY"\npython t.py > train.log\n')
    assert findings("run.sh", text) == [(6, 1, "SPK502")]


def test_job_scripts_written_by_heredocs() -> None:
    script = parse_shell("cat > job.sh <<'EOF'\n#!/bin/bash\npython t.py | tee log\nEOF\n"
                         "cat > notes.md <<EOF\npython x | tee y\nEOF\n")
    written = list(script.job_scripts())
    assert len(written) == 1 and written[0].pipelines[0].line == 3 and written[0].pipelines[0].last


def test_long_and_chains_parse_in_linear_time() -> None:
    import time

    def timed(count: int) -> float:
        text = "".join(f"echo step{i} && \\\n" for i in range(count)) + "true\n"
        start = time.perf_counter()
        script = parse_shell(text)
        elapsed = time.perf_counter() - start
        assert len(script.pipelines[-1].condition) < 2000
        return elapsed

    small, large = min(timed(500) for _ in range(3)), min(timed(2000) for _ in range(3))
    assert large < small * 8  # 4x the input: linear is ~4x, the old quadratic path was ~16x


def test_a_loop_piped_into_filters_is_read_by_programs_not_a_log() -> None:
    text = "#!/bin/bash\n(\n  for f in a b; do\n    python score.py $f\n  done\n) | grep score= | sort | head -n1\n"
    assert findings("select.sh", text) == []


def test_a_loop_piped_into_tee_is_a_log() -> None:
    text = "#!/bin/bash\nset -o pipefail\n(\n  for f in a b; do\n    python train.py $f\n  done\n) 2>&1 | tee run.log\n"
    assert [line for line, _, rule in findings("run.sh", text) if rule == "SPK502"] == [5]


def test_a_stage_on_alpine_is_told_to_use_ash_not_bash() -> None:
    """BusyBox ash has pipefail and alpine has no bash: the advice names ash there, bash elsewhere."""
    from spikelint.engine import lint_snippet

    text = ("FROM alpine:3.19 AS fetch\nRUN curl -fsSL https://x/i.sh | sh\nFROM fetch AS tools\n"
            "RUN wget -qO- https://x/t.sh | sh\nFROM ubuntu:22.04\nRUN curl -fsSL https://x/i.sh | bash\n")
    found = {f.line: f.message for f in lint_snippet("Dockerfile", text) if f.rule == "SPK501"}
    assert set(found) == {2, 4, 6}
    assert '["/bin/ash", "-o", "pipefail", "-c"]' in found[2] and '["/bin/ash"' in found[4]  # built on alpine too
    assert '["/bin/bash", "-o", "pipefail", "-c"]' in found[6]


@pytest.mark.parametrize("script, why", [
    ("#!/bin/bash\ncurl -LsSf https://astral.sh/uv/install.sh | sh\n", "when curl fails (a failed download)"),
    ("#!/bin/bash\npython train.py | tee log.txt\n", "when python fails (a crashed or killed run, any error)"),
    ("#!/bin/bash\nwget -qO- https://x.example/install.sh | bash\n", "when wget fails (a failed download)"),
])
def test_the_pipefail_message_says_how_the_left_side_fails(script: str, why: str) -> None:
    from spikelint.engine import lint_snippet

    (finding,) = [f for f in lint_snippet("setup.sh", script) if f.rule == "SPK501"]
    assert why in finding.message
