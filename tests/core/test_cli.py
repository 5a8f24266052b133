"""The command line: exit codes, output formats, colour, standard input, workers, version."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from core_support import REPOSITORY
from core_support import VALUES_FLOATING
from core_support import VALUES_LATEST
from core_support import VALUES_PINNED
from core_support import run_process
from core_support import subprocess_env
from core_support import write

from spikelint import __version__
from spikelint.checks.registry import CheckSpec

ANSI = re.compile(r"\x1b\[[0-9;]*m")
HEADER = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<rule>SPK\d{3}) \[(?P<severity>error|warning|"
                    r"info)\] (?P<message>.+)$")
SUMMARY = re.compile(r"^(\d+) errors?, (\d+) warnings?, (\d+) info in (\d+) files? \((\d+) files? checked\)$")


# --------------------------------------------------------------------------- version and usage


def test_module_version(tmp_path: Path) -> None:
    outcome = run_process(["--version"], cwd=tmp_path)
    assert outcome.code == 0 and outcome.out.strip() == f"spikelint {__version__}"


def test_help_everywhere(run_cli, tmp_path: Path) -> None:
    for arguments in (["--help"], ["check", "--help"], ["rules", "--help"], ["explain", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            run_cli(arguments, cwd=tmp_path)
        assert exit_info.value.code == 0, arguments


@pytest.mark.parametrize("arguments", [[], ["lint"], ["check", "--frobnicate"], ["check", "--format", "xml"],
                                       ["check", "--select", "images"], ["check", "--ignore", "SPKX"],
                                       ["check", "--fail-on", "fatal"], ["check", "--jobs", "two"],
                                       ["explain", "SPK999"], ["check", "no/such/path"]])
def test_usage_errors_exit_2(run_cli, tmp_path: Path, arguments: list[str]) -> None:
    outcome = run_cli(arguments, cwd=tmp_path)
    assert outcome.code == 2 and outcome.out == ""
    assert outcome.err.strip() and "Traceback" not in outcome.err


def test_missing_path_is_named(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_PINNED})
    outcome = run_cli(["check", "values.yaml", "nope.yaml"], cwd=tmp_path)
    assert outcome.code == 2 and "nope.yaml" in outcome.err


def test_rules_and_explain(run_cli, tmp_path: Path) -> None:
    listing = run_cli(["rules"], cwd=tmp_path)
    assert listing.code == 0 and "SPK001" in listing.out and "SPK101" in listing.out
    explained = run_cli(["explain", "spk101"], cwd=tmp_path)
    assert explained.code == 0 and "mutable-image-tag" in explained.out


# --------------------------------------------------------------------------- exit codes


@pytest.mark.parametrize(("files", "options", "code"), [
    ({"values.yaml": VALUES_PINNED}, [], 0),
    ({"values.yaml": VALUES_LATEST}, [], 1),
    ({"values.yaml": VALUES_FLOATING}, [], 0),
    ({"values.yaml": VALUES_FLOATING}, ["--fail-on", "warning"], 1),
    ({"values.yaml": VALUES_FLOATING}, ["--fail-on", "error"], 0),
    ({"values.yaml": VALUES_LATEST}, ["--fail-on", "never"], 0),
    ({"chart/templates/x.yaml": "a: {{ .V }}\n"}, [], 0),
    ({"chart/templates/x.yaml": "a: {{ .V }}\n"}, ["--fail-on", "info"], 1),
    ({"chart/templates/x.yaml": "a: {{ .V }}\n"}, ["--fail-on", "warning"], 0),
    ({"values.yaml": VALUES_LATEST}, ["--ignore", "SPK101"], 0),
    ({"values.yaml": VALUES_LATEST}, ["--select", "SPK2"], 0),
    ({"values.yaml": VALUES_LATEST}, ["--select", "SPK1"], 1),
    ({"values.yaml": VALUES_LATEST}, ["--select", "spk101"], 1),
    ({"bad.json": "{"}, [], 1),
])
def test_exit_codes(run_cli, tmp_path: Path, files: dict[str, str], options: list[str], code: int) -> None:
    write(tmp_path, files)
    assert run_cli(["check", *options], cwd=tmp_path).code == code


def test_fail_on_from_configuration_and_command_line_wins(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "fail_on: warning\n", "values.yaml": VALUES_FLOATING})
    assert run_cli(["check"], cwd=tmp_path).code == 1
    assert run_cli(["check", "--fail-on", "error"], cwd=tmp_path).code == 0


def test_exit_codes_of_a_real_process(tmp_path: Path) -> None:
    write(tmp_path, {"clean/values.yaml": VALUES_PINNED, "dirty/values.yaml": VALUES_LATEST})
    assert run_process(["check", "clean"], cwd=tmp_path).code == 0
    dirty = run_process(["check", "dirty"], cwd=tmp_path)
    assert dirty.code == 1 and "SPK101" in dirty.out
    assert run_process(["check", "--fail-on", "bogus"], cwd=tmp_path).code == 2


def test_internal_error_exits_2_and_names_the_file(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(document: object, ctx: object):
        raise KeyError("boom")
        yield  # pragma: no cover

    spec = CheckSpec(("SPK101",), "document", frozenset(), broken)
    monkeypatch.setattr("spikelint.engine.all_checks", lambda: [spec])
    write(tmp_path, {"a/values.yaml": VALUES_LATEST, "b/values.yaml": VALUES_PINNED})
    outcome = run_cli(["check", "--jobs", "1"], cwd=tmp_path)
    assert outcome.code == 2
    assert "a/values.yaml: internal error in broken" in outcome.err and "KeyError" in outcome.err
    assert SUMMARY.match(outcome.err.splitlines()[0]) or "files checked" in outcome.err


def test_parser_crash_is_an_internal_error_for_that_file_only(run_cli, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint import documents

    def crash(document: object) -> None:
        raise IndexError("parser bug")

    monkeypatch.setitem(documents.PARSERS, "toml", crash)
    write(tmp_path, {"conf.toml": "a = 1\n", "values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", "json", "--jobs", "1"], cwd=tmp_path)
    assert outcome.code == 2 and "conf.toml: internal error" in outcome.err
    assert ("values.yaml", 2, "SPK101") in outcome.pairs()


def test_no_files_is_said_plainly(run_cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    outcome = run_cli(["check", "empty"], cwd=tmp_path)
    assert outcome.code == 0 and "no files to check" in outcome.err


# --------------------------------------------------------------------------- text output


def test_text_format(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"b/values.yaml": VALUES_LATEST, "a/values.yaml": VALUES_FLOATING + "other:\n  image: x:latest\n",
                     "c/values.yaml": VALUES_PINNED})
    outcome = run_cli(["check"], cwd=tmp_path)
    headers = [HEADER.match(line) for line in outcome.out.splitlines() if HEADER.match(line)]
    assert [(m["path"], int(m["line"]), m["rule"], m["severity"]) for m in headers] == [
        ("a/values.yaml", 2, "SPK102", "warning"), ("a/values.yaml", 4, "SPK101", "error"),
        ("b/values.yaml", 2, "SPK101", "error")]
    assert headers[0]["column"] == "8" and "busybox:1.2" in headers[0]["message"]
    assert not ANSI.search(outcome.out)
    summary = SUMMARY.match(outcome.err.strip().splitlines()[-1])
    assert summary and summary.groups() == ("2", "1", "0", "2", "3")


def test_text_format_shows_the_offending_line(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert "image: busybox:latest" in outcome.out


def tty_run(arguments: list[str], cwd: Path, **env: str) -> str:
    """Run with standard output on a pseudo-terminal; return what it printed there."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "spikelint", *arguments], cwd=cwd, stdout=follower,
                               stderr=subprocess.DEVNULL, env=subprocess_env(**env))
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="needs a pseudo-terminal")
def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    assert ANSI.search(tty_run(["check"], tmp_path))
    plain = tty_run(["check"], tmp_path, NO_COLOR="1")
    assert "SPK101" in plain and not ANSI.search(plain)
    assert not ANSI.search(run_process(["check"], cwd=tmp_path).out)


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="needs a pseudo-terminal")
def test_no_colour_in_json_even_on_a_terminal(tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    out = tty_run(["check", "--format", "json"], tmp_path)
    assert not ANSI.search(out) and '"SPK101"' in out


def test_control_characters_in_a_file_cannot_reach_the_terminal(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": "image: \"busybox:latest\x1b[2J\"\nother: {image: \"x\\e[31m:latest\"}\n"})
    outcome = run_cli(["check"], cwd=tmp_path)
    assert "\x1b" not in outcome.out


# --------------------------------------------------------------------------- json output


def test_json_format_matches_its_schema(run_cli, tmp_path: Path) -> None:
    import jsonschema

    write(tmp_path, {"values.yaml": VALUES_LATEST, "ok/values.yaml": VALUES_PINNED + "# spikelint: disable=SPK101\n",
                     "sup/values.yaml": "image: busybox:latest  # spikelint: disable=SPK101\n"})
    outcome = run_cli(["check", "--format", "json"], cwd=tmp_path)
    report = outcome.json()
    schema = json.loads((REPOSITORY / "schemas" / "report.v1.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    assert report["version"] == 1 and report["tool"] == {"name": "spikelint", "version": __version__}
    assert report["summary"]["files"] == 3 and report["summary"]["suppressed"] == 1
    finding = next(f for f in report["findings"] if f["rule"] == "SPK101")
    assert finding == {**finding, "name": "mutable-image-tag", "severity": "error", "path": "values.yaml", "line": 2,
                       "column": 8}
    assert re.fullmatch(r"[0-9a-f]{32}", finding["fingerprint"])
    assert {f["rule"] for f in report["findings"]} == {"SPK101", "SPK002"}
    assert outcome.err.strip() == ""


def test_output_file(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", "json", "--output", "report.json"], cwd=tmp_path)
    assert outcome.code == 1 and outcome.out == ""
    assert SUMMARY.match(outcome.err.strip())
    assert json.loads((tmp_path / "report.json").read_text())["findings"][0]["rule"] == "SPK101"


def test_repeated_format_output_pairs_write_every_report_from_one_lint(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", "sarif", "--output", "a.sarif", "--format", "gitlab", "--output", "b.json",
                       "--output", "c.xml", "--format", "junit", "--format", "text"], cwd=tmp_path)
    assert outcome.code == 1  # the exit code once
    sarif = json.loads((tmp_path / "a.sarif").read_text())
    assert [result["ruleId"] for result in sarif["runs"][0]["results"]] == ["SPK101"]
    assert [issue["check_name"] for issue in json.loads((tmp_path / "b.json").read_text())] == ["SPK101"]
    assert "<testsuite" in (tmp_path / "c.xml").read_text()  # --output before its --format pairs with it
    assert outcome.out.startswith("values.yaml:") and "SPK101" in outcome.out  # the format without a file
    assert len([line for line in outcome.err.splitlines() if SUMMARY.match(line)]) == 1  # one summary line


def test_one_format_and_output_pair_is_unchanged(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--output", "r.json", "--format", "json"], cwd=tmp_path)
    assert outcome.code == 1 and outcome.out == ""
    assert json.loads((tmp_path / "r.json").read_text())["findings"][0]["rule"] == "SPK101"


def test_an_output_file_alone_gets_the_format_its_name_ends_in(run_cli, tmp_path: Path) -> None:
    """``-o out.sarif`` writes SARIF (it wrote text into a .sarif file); an unknown suffix stays text."""
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "-o", "out.sarif", "-o", "out.html", "-o", "gl-code-quality-report.json",
                       "-o", "j.xml", "-o", "findings.txt"], cwd=tmp_path)
    assert outcome.code == 1 and outcome.out == ""
    assert json.loads((tmp_path / "out.sarif").read_text())["version"] == "2.1.0"
    assert (tmp_path / "out.html").read_text().lstrip().lower().startswith("<!doctype html>")
    assert json.loads((tmp_path / "gl-code-quality-report.json").read_text())[0]["check_name"] == "SPK101"
    assert "<testsuite" in (tmp_path / "j.xml").read_text()
    assert (tmp_path / "findings.txt").read_text().startswith("values.yaml:")


def test_a_machine_format_on_stdout_says_on_stderr_what_a_baseline_hid(run_cli, tmp_path: Path) -> None:
    """SARIF with zero results and silence was all a baselined repository got; clean output stays silent."""
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", "sarif", "."], cwd=tmp_path)
    assert outcome.code == 1 and outcome.err == ""
    assert run_cli(["check", "--write-baseline", "base.json", "."], cwd=tmp_path).code == 0
    outcome = run_cli(["check", "--format", "sarif", "--baseline", "base.json", "."], cwd=tmp_path)
    assert outcome.code == 0 and json.loads(outcome.out)["runs"][0]["results"] == []
    assert outcome.err == "0 errors, 0 warnings, 0 info in 0 files (2 files checked, 1 baselined)\n"


@pytest.mark.parametrize(("arguments", "words"), [
    (["--format", "json", "--format", "sarif"], "at most one report goes to standard output"),
    (["--format", "json", "--output", "r.json", "--format", "sarif", "--output", "./r.json"], "same file"),
])
def test_repeated_reports_that_cannot_all_be_written_exit_2(run_cli, tmp_path: Path, arguments: list[str],
                                                            words: str) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", *arguments], cwd=tmp_path)
    assert outcome.code == 2 and words in outcome.err
    assert not (tmp_path / "r.json").exists()  # refused before any lint or write


def test_output_file_that_cannot_be_written_exits_2(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--output", "no/such/dir/report.txt"], cwd=tmp_path)
    assert outcome.code == 2 and "report.txt" in outcome.err


@pytest.mark.parametrize("fmt", ["sarif", "junit", "gitlab", "github"])
def test_other_formats_run(run_cli, tmp_path: Path, fmt: str) -> None:
    write(tmp_path, {"values.yaml": VALUES_LATEST})
    outcome = run_cli(["check", "--format", fmt], cwd=tmp_path)
    assert outcome.code == 1 and "SPK101" in outcome.out


# --------------------------------------------------------------------------- standard input


def test_stdin_filename(run_cli, tmp_path: Path) -> None:
    outcome = run_cli(["check", "--format", "json", "--stdin-filename", "./deploy/values.yaml", "-"], cwd=tmp_path,
                      stdin=VALUES_LATEST.encode())
    assert outcome.code == 1 and outcome.pairs() == {("deploy/values.yaml", 2, "SPK101")}


def test_stdin_filename_decides_the_kind_and_the_per_path_ignores(run_cli, tmp_path: Path) -> None:
    write(tmp_path, {".spikelint.yaml": "per_path_ignores: {'examples/**': [SPK101]}\n"})
    outcome = run_cli(["check", "--stdin-filename", "examples/values.yaml"], cwd=tmp_path, stdin=VALUES_LATEST.encode())
    assert outcome.code == 0
    template = run_cli(["check", "--format", "json", "--stdin-filename", "chart/templates/job.yaml"], cwd=tmp_path,
                       stdin=b"kind: Job\nname: {{ .Release.Name }}\n")
    assert template.pairs() == {("chart/templates/job.yaml", 1, "SPK003")}


def test_stdin_invalid_utf8_is_spk001(run_cli, tmp_path: Path) -> None:
    outcome = run_cli(["check", "--format", "json", "--stdin-filename", "job.yaml"], cwd=tmp_path,
                      stdin=b"kind: Job\nname: caf\xe9\n")
    assert outcome.code == 1 and outcome.pairs() == {("job.yaml", 2, "SPK001")}


def test_stdin_in_a_real_process(tmp_path: Path) -> None:
    outcome = run_process(["check", "--stdin-filename", "values.yaml", "-"], cwd=tmp_path, stdin=VALUES_LATEST.encode())
    assert outcome.code == 1 and outcome.out.startswith("values.yaml:2:8: SPK101 [error]")


# --------------------------------------------------------------------------- worker processes


def many_files(root: Path, count: int = 72) -> Path:
    files: dict[str, str] = {}
    for index in range(count):
        body = (VALUES_LATEST, VALUES_FLOATING, VALUES_PINNED, "a: [\n", "x = 1\n")[index % 5]
        name = ("values.yaml", "values.yaml", "values.yaml", "broken.yaml", "conf.toml")[index % 5]
        files[f"svc{index:03d}/{name}"] = body
    return write(root, files)


def test_jobs_2_gives_the_same_findings_as_jobs_1(run_cli, tmp_path: Path) -> None:
    many_files(tmp_path)
    serial = run_cli(["check", "--format", "json", "--jobs", "1"], cwd=tmp_path)
    parallel = run_cli(["check", "--format", "json", "--jobs", "2"], cwd=tmp_path)
    assert serial.code == parallel.code == 1
    assert serial.json()["findings"] == parallel.json()["findings"]
    assert serial.json()["summary"] == parallel.json()["summary"]
    assert len(serial.json()["findings"]) == sum(1 for index in range(72) if index % 5 in (0, 1, 3))


def test_jobs_in_a_real_process(tmp_path: Path) -> None:
    many_files(tmp_path)
    serial = run_process(["check", "--jobs", "1"], cwd=tmp_path)
    parallel = run_process(["check", "--jobs", "2"], cwd=tmp_path)
    assert serial.out == parallel.out and serial.code == parallel.code == 1


def test_odd_problems_from_a_check_are_made_safe(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.model import Problem

    def odd(document: object, ctx: object):
        yield Problem("SPK101", 0, 0, "line zero", severity="critical", key="a")
        yield Problem("SPK102", 3, 2, "ends before it starts", end_line=1, end_column=1, key="b")

    monkeypatch.setattr("spikelint.engine.all_checks", lambda: [CheckSpec(("SPK101", "SPK102"), "document",
                                                                           frozenset(), odd)])
    write(tmp_path, {"values.yaml": VALUES_PINNED})
    outcome = run_cli(["check", "--format", "json"], cwd=tmp_path)
    first, second = outcome.json()["findings"]
    assert (first["line"], first["column"], first["severity"]) == (1, 1, "error")
    assert second["end_line"] is None and outcome.code == 1
    for fmt in ("sarif", "junit", "gitlab", "github", "text"):
        assert run_cli(["check", "--format", fmt], cwd=tmp_path).code == 1


def test_the_process_exits_with_the_code_after_writing_every_byte() -> None:
    """``python -m spikelint`` leaves without tearing the interpreter down: the whole report is still
    written (a pipe, several hundred KB) and the exit code is the check's."""
    process = subprocess.run([sys.executable, "-m", "spikelint", "check", "examples", "--format", "json"],
                             cwd=REPOSITORY, capture_output=True, env=subprocess_env(), timeout=120)
    assert process.returncode == 1
    report = json.loads(process.stdout)
    assert report["summary"]["errors"] > 0 and report["findings"]


def test_an_exit_handler_registered_before_the_run_still_runs() -> None:
    """A program that registers an exit handler (``smoke`` imports torch, which does) exits as usual."""
    code = ("import atexit, sys\natexit.register(lambda: print('handler ran', flush=True))\n"
            "sys.argv = ['spikelint', 'check', 'examples/k8s/finetune-job.yaml']\n"
            "from spikelint.cli import run\nrun()\n")
    process = subprocess.run([sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True,
                             env=subprocess_env(), timeout=60)
    assert process.returncode == 1 and "SPK101" in process.stdout
    assert process.stdout.splitlines()[-1] == "handler ran"


@pytest.mark.parametrize("shell_tail", ["| true", ">&-", ">&- 2>&-"])
def test_a_reader_that_goes_away_does_not_turn_findings_into_success(shell_tail: str) -> None:
    """``spikelint check . | true`` (the reader gone before the first byte) and a closed descriptor:
    the run finishes, drops what it cannot write, and still exits 1 for its findings, with no traceback."""
    command = f'"{sys.executable}" -m spikelint check examples {shell_tail}; echo "rc=${{PIPESTATUS[0]}}" >&3'
    process = subprocess.run(["bash", "-c", f"exec 3>&1; {command}"], cwd=REPOSITORY, capture_output=True,
                             text=True, env=subprocess_env(), timeout=120)
    assert process.stdout.strip().splitlines()[-1] == "rc=1"
    assert "Traceback" not in process.stderr


def test_o_is_the_report_file_and_a_format_name_there_is_explained(tmp_path: Path) -> None:
    target = tmp_path / "report.sarif"
    process = run_process(["check", "examples", "--format", "sarif", "-o", str(target)], cwd=REPOSITORY)
    assert process.code == 1 and json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"
    process = run_process(["check", "examples", "-o", "json"], cwd=REPOSITORY)
    assert process.code == 2 and "for the json format write --format json" in process.err
