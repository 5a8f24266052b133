"""``spikelint verify-run``: every check of run-contract.md, from both sides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from typing import Callable

import pytest

from tests.contract.conftest import HF_TOKEN
from tests.contract.conftest import Outcome
from tests.contract.conftest import RunFolder
from tests.contract.conftest import write_json
from tests.contract.conftest import write_jsonl

Run = Callable[..., Outcome]
Make = Callable[..., RunFolder]


def findings(outcome: Outcome) -> list[dict[str, Any]]:
    return outcome.json()["findings"]


def where(outcome: Outcome) -> set[tuple[str, int]]:
    """(file name, line) of every finding."""
    return {(Path(finding["path"]).name, finding["line"]) for finding in findings(outcome)}


def verify_json(run_verify: Run, run: RunFolder, *extra: str) -> Outcome:
    return run_verify(str(run.folder), "--format", "json", *extra)


# --------------------------------------------------------------------------- complete and consistent


def test_a_complete_consistent_run_passes(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    outcome = run_verify(str(run.folder))
    assert outcome.code == 0, outcome.out + outcome.err
    assert outcome.out == ""
    assert "0 errors" in outcome.err
    report = verify_json(run_verify, run)
    assert report.code == 0
    assert report.json()["findings"] == []


def test_json_report_validates_against_the_report_schema(run_verify: Run, make_run: Make) -> None:
    from spikelint.schemas import iter_errors

    run = make_run()
    run.results(["p1", "p1"])
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    assert list(iter_errors("report.v1.schema.json", outcome.json())) == []
    assert all(finding["rule"] == "SPK601" for finding in findings(outcome))


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "gitlab", "github"])
def test_every_output_format_renders(run_verify: Run, make_run: Make, fmt: str) -> None:
    run = make_run()
    run.summary(status="completed", received=4, succeeded=2, rejected=1, pending=0)
    outcome = run_verify(str(run.folder), "--format", fmt)
    assert outcome.code == 1
    assert "succeeded" in outcome.out


def test_output_file(run_verify: Run, make_run: Make, tmp_path: Path) -> None:
    run = make_run()
    (run.folder / "summary.json").unlink()
    outcome = run_verify(str(run.folder), "--format", "sarif", "--output", str(tmp_path / "out.sarif"))
    assert outcome.code == 1
    assert outcome.out == ""
    sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert sarif["runs"][0]["results"][0]["ruleId"] == "SPK601"


def test_an_empty_errors_file_and_zero_rejections(run_verify: Run, make_run: Make) -> None:
    run = make_run(rejected=[])
    assert (run.folder / "errors.jsonl").read_text(encoding="utf-8") == ""
    assert run_verify(str(run.folder)).code == 0


def test_no_errors_file_when_nothing_was_rejected(run_verify: Run, make_run: Make) -> None:
    run = make_run(rejected=[])
    (run.folder / "errors.jsonl").unlink()
    run.summary(status="completed", received=4, succeeded=4, rejected=0, pending=0)
    assert run_verify(str(run.folder)).code == 0


def test_integer_ids(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=[1, 2, 3], rejected=[3])
    assert run_verify(str(run.folder)).code == 0


# --------------------------------------------------------------------------- manifest.json


def test_missing_manifest(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    (run.folder / "manifest.json").unlink()
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    assert ("manifest.json", 1) in where(outcome)
    assert any("manifest.json does not exist" in finding["message"] for finding in findings(outcome))


@pytest.mark.parametrize("text, fragment, line", [
    ("", "empty", 1),
    ("[]", "must be a JSON object, got a list", 1),
    ('"run"', "must be a JSON object", 1),
    ("null", "must be a JSON object", 1),
    ('{\n  "run_id": "x",\n  "created": \n}', "not valid JSON", 4),
    ('{"run_id": "x"', "not valid JSON", 1),
])
def test_manifest_that_is_not_an_object(run_verify: Run, make_run: Make, text: str, fragment: str,
                                        line: int) -> None:
    run = make_run()
    (run.folder / "manifest.json").write_text(text, encoding="utf-8")
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    manifest_findings = [f for f in findings(outcome) if f["path"].endswith("manifest.json")]
    assert any(fragment in f["message"] and f["line"] == line for f in manifest_findings), manifest_findings


def test_manifest_schema_violations_point_at_the_key(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    manifest = run.manifest()
    manifest["created"] = "yesterday"
    del manifest["run_id"]
    manifest["config"]["sha256"] = "abc"
    run.write_manifest(manifest)
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    lines = (run.folder / "manifest.json").read_text(encoding="utf-8").splitlines()
    messages = {f["message"]: lines[f["line"] - 1] for f in findings(outcome) if f["path"].endswith("manifest.json")}
    assert any("missing required key 'run_id'" in message for message in messages)
    assert any('"created"' in line for message, line in messages.items() if message.startswith("manifest.json: created"))
    assert any('"sha256": "abc"' in line for message, line in messages.items() if "config.sha256" in message)


def test_secret_in_the_manifest(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    manifest = run.manifest()
    manifest["parameters"]["hf_token"] = HF_TOKEN
    run.write_manifest(manifest)
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    secrets = [f for f in findings(outcome) if f["rule"].startswith("SPK2")]
    assert secrets, findings(outcome)
    assert HF_TOKEN not in outcome.out
    text = run_verify(str(run.folder))
    assert HF_TOKEN not in text.out + text.err


# --------------------------------------------------------------------------- results.jsonl / errors.jsonl


def test_duplicate_ids_within_a_file(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.results(["p1", "p2", "p3", "p2"])
    outcome = verify_json(run_verify, run)
    assert ("results.jsonl", 4) in where(outcome)
    duplicate = [f for f in findings(outcome) if "duplicate id 'p2'" in f["message"]]
    assert duplicate and duplicate[0]["line"] == 4 and "first at line 2" in duplicate[0]["message"]


def test_duplicate_ids_in_errors(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.errors(["p4", "p4"])
    outcome = verify_json(run_verify, run)
    assert ("errors.jsonl", 2) in where(outcome)


def test_an_id_in_both_files(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.errors(["p4", "p2"])
    outcome = verify_json(run_verify, run)
    both = [f for f in findings(outcome) if "in both" in f["message"]]
    assert [(Path(f["path"]).name, f["line"]) for f in both] == [("errors.jsonl", 2)]
    assert "line 2" in both[0]["message"]


@pytest.mark.parametrize("line, fragment", [
    ('{"output": "x"}', "missing required key 'id'"),
    ('{"id": "", "output": "x"}', "id must be"),
    ('{"id": null, "output": "x"}', "id must be"),
    ('{"id": 1.5, "output": "x"}', "id must be"),
    ('{"id": "p2"}', "at least 2 keys"),
    ('["p2", "x"]', "must be a JSON object, got a list"),
    ('"p2"', "must be a JSON object"),
    ("p2,answer", "not valid JSON"),
    ('{"id": "p2", "output": "x",}', "not valid JSON"),
])
def test_bad_result_lines(run_verify: Run, make_run: Make, line: str, fragment: str) -> None:
    run = make_run()
    (run.folder / "results.jsonl").write_text('{"id": "p1", "output": "a"}\n' + line + '\n{"id": "p3", "output": "c"}\n',
                                              encoding="utf-8")
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    hits = [f for f in findings(outcome) if f["path"].endswith("results.jsonl") and f["line"] == 2]
    assert any(fragment in f["message"] for f in hits), findings(outcome)


@pytest.mark.parametrize("record, fragment", [
    ({"id": "p4"}, "missing required key 'reason'"),
    ({"id": "p4", "reason": ""}, "reason must be a non-empty string"),
    ({"id": "p4", "reason": 3}, "reason must be a non-empty string, got 3"),
    ({"id": "p4", "reason": "x", "stage": 2}, "stage must be a non-empty string"),
    ({"reason": "x"}, "missing required key 'id'"),
])
def test_bad_error_lines(run_verify: Run, make_run: Make, record: dict[str, Any], fragment: str) -> None:
    run = make_run()
    write_jsonl(run.folder / "errors.jsonl", [record])
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    assert any(f["path"].endswith("errors.jsonl") and f["line"] == 1 and fragment in f["message"]
               for f in findings(outcome)), findings(outcome)


def test_error_lines_without_stage_are_valid(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    write_jsonl(run.folder / "errors.jsonl", [{"id": "p4", "reason": "too long"}])
    assert run_verify(str(run.folder)).code == 0


def test_truncated_last_record(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    with (run.folder / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "p9", "outp')
    outcome = verify_json(run_verify, run)
    truncated = [f for f in findings(outcome) if f["path"].endswith("results.jsonl") and f["line"] == 4]
    assert truncated and "cut off" in truncated[0]["message"]


def test_blank_lines_are_ignored_and_counts_use_records(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    text = (run.folder / "results.jsonl").read_text(encoding="utf-8")
    (run.folder / "results.jsonl").write_text("\n" + text.replace("\n", "\n\n"), encoding="utf-8")
    assert run_verify(str(run.folder)).code == 0


def test_non_utf8_and_huge_lines(run_verify: Run, make_run: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.run import folder_files

    monkeypatch.setattr(folder_files, "MAX_LINE_BYTES", 64)
    run = make_run()
    (run.folder / "results.jsonl").write_bytes(b'{"id": "p1", "output": "a"}\n{"id": "p2", "output": "\xff"}\n'
                                               b'{"id": "p3", "output": "' + b"x" * 500 + b'"}\n')
    outcome = verify_json(run_verify, run)
    assert any(f["line"] == 2 and "UTF-8" in f["message"] for f in findings(outcome))
    assert any(f["line"] == 3 and "longer than" in f["message"] for f in findings(outcome))


def test_missing_results_file(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    (run.folder / "results.jsonl").unlink()
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    assert any("succeeded is 3 but results.jsonl is missing" in f["message"] for f in findings(outcome))


def test_results_file_that_is_a_folder(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    (run.folder / "results.jsonl").unlink()
    (run.folder / "results.jsonl").mkdir()
    outcome = verify_json(run_verify, run)
    assert any("is a folder" in f["message"] for f in findings(outcome))


def test_many_bad_lines_are_capped(run_verify: Run, make_run: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.run import issues

    monkeypatch.setattr(issues, "MAX_ISSUES_PER_FILE", 5)
    run = make_run()
    (run.folder / "results.jsonl").write_text("garbage\n" * 20, encoding="utf-8")
    outcome = verify_json(run_verify, run)
    results = [f for f in findings(outcome) if f["path"].endswith("results.jsonl")]
    assert len(results) == 6
    assert any("15 more problems" in f["message"] for f in results)


# --------------------------------------------------------------------------- summary.json


def test_missing_summary(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    (run.folder / "summary.json").unlink()
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    assert any(f["path"].endswith("summary.json") and "does not exist" in f["message"] for f in findings(outcome))


@pytest.mark.parametrize("summary, fragment", [
    ({"status": "completed", "received": 4, "succeeded": 3, "rejected": 1}, "missing required key 'pending'"),
    ({"status": "done", "received": 4, "succeeded": 3, "rejected": 1, "pending": 0},
     "status must be one of completed, partial, failed"),
    ({"status": "completed", "received": "4", "succeeded": 3, "rejected": 1, "pending": 0},
     "received must be an integer ≥ 0, got '4'"),
    ({"status": "completed", "received": 4, "succeeded": 3, "rejected": True, "pending": 0},
     "rejected must be an integer ≥ 0, got true"),
    ({"status": "completed", "received": 4, "succeeded": 3, "rejected": 1, "pending": -1},
     "pending must be an integer ≥ 0, got -1"),
    ({"status": "completed", "received": 4, "succeeded": 3.0, "rejected": 1, "pending": 0},
     "succeeded must be an integer ≥ 0"),
])
def test_summary_schema(run_verify: Run, make_run: Make, summary: dict[str, Any], fragment: str) -> None:
    run = make_run()
    run.summary(**summary)
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    assert any(fragment in f["message"] for f in findings(outcome)), findings(outcome)


def test_summary_with_extra_fields_is_fine(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    summary = json.loads((run.folder / "summary.json").read_text(encoding="utf-8"))
    summary["throughput_per_s"] = 41.5
    run.summary(**summary)
    assert run_verify(str(run.folder)).code == 0


def test_received_must_be_the_sum(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.summary(status="completed", received=5, succeeded=3, rejected=1, pending=0)
    outcome = verify_json(run_verify, run)
    sums = [f for f in findings(outcome) if "succeeded + rejected + pending" in f["message"]]
    assert len(sums) == 1 and sums[0]["line"] == 3
    assert "3 + 1 + 0 = 4" in sums[0]["message"]


def test_succeeded_must_equal_the_result_lines(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.results(["p1", "p2"])
    run.summary(status="completed", received=4, succeeded=3, rejected=1, pending=0)
    outcome = verify_json(run_verify, run)
    assert any("succeeded is 3 but results.jsonl has 2 records" in f["message"] for f in findings(outcome))


def test_rejected_must_equal_the_error_lines(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.summary(status="completed", received=4, succeeded=3, rejected=2, pending=0)
    outcome = verify_json(run_verify, run)
    assert any("rejected is 2 but errors.jsonl has 1 record" in f["message"] for f in findings(outcome))


def test_summary_files_must_exist(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    summary = json.loads((run.folder / "summary.json").read_text(encoding="utf-8"))
    summary["files"] = ["results.jsonl", "errors.jsonl", "metrics.json"]
    run.summary(**summary)
    outcome = verify_json(run_verify, run)
    assert any("'metrics.json'" in f["message"] for f in findings(outcome))


# --------------------------------------------------------------------------- status


@pytest.mark.parametrize("status", ["partial", "failed"])
def test_an_unfinished_run_is_not_complete(run_verify: Run, make_run: Make, status: str) -> None:
    run = make_run(ids=["p1", "p2", "p3", "p4", "p5"])
    run.results(["p1", "p2", "p3"])
    run.summary(status=status, received=5, succeeded=3, rejected=1, pending=1)
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    [finding] = findings(outcome)
    assert f"status is '{status}' with 1 pending item" in finding["message"]
    assert (Path(finding["path"]).name, finding["line"]) == ("summary.json", 2)


def test_completed_with_pending_items(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["p1", "p2", "p3", "p4", "p5"])
    run.results(["p1", "p2", "p3"])
    run.summary(status="completed", received=5, succeeded=3, rejected=1, pending=1)
    outcome = verify_json(run_verify, run)
    assert [f["message"] for f in findings(outcome)] == ["status is 'completed' but pending is 1"]


def test_completed_but_inconsistent(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.results(["p1", "p2", "p3", "p3"])
    outcome = verify_json(run_verify, run)
    status = [f for f in findings(outcome) if f["message"].startswith("status is 'completed' but the run folder")]
    assert len(status) == 1 and status[0]["line"] == 2


# --------------------------------------------------------------------------- the input


def test_every_input_id_must_be_accounted_for(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["p1", "p2", "p3", "p4", "p5"])
    run.results(["p1", "p2", "p3"])
    run.summary(status="completed", received=4, succeeded=3, rejected=1, pending=0)
    outcome = verify_json(run_verify, run)
    missing = [f for f in findings(outcome) if "input id 'p5'" in f["message"]]
    assert [(Path(f["path"]).name, f["line"]) for f in missing] == [("prompts.jsonl", 5)]


def test_pending_items_may_be_unaccounted(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["p1", "p2", "p3", "p4", "p5"])
    run.results(["p1", "p2", "p3"])
    run.summary(status="partial", received=5, succeeded=3, rejected=1, pending=1)
    outcome = verify_json(run_verify, run)
    assert [f["message"] for f in findings(outcome)] == ["the run is not complete: status is 'partial' with 1 pending item"]


def test_pending_must_match_the_unaccounted_ids(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["p1", "p2", "p3", "p4", "p5", "p6"])
    run.summary(status="partial", received=6, succeeded=3, rejected=1, pending=2)
    run.results(["p1", "p2"])
    run.summary(status="partial", received=6, succeeded=2, rejected=1, pending=3)
    outcome = verify_json(run_verify, run)
    assert any("pending is 3 but 3 input ids" in f["message"] for f in findings(outcome)) is False
    run.summary(status="partial", received=6, succeeded=2, rejected=1, pending=2)
    outcome = verify_json(run_verify, run)
    assert any("pending is 2 but 3 input ids are in neither" in f["message"] for f in findings(outcome))


def test_unknown_ids_in_results_and_errors(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.results(["p1", "p2", "zz"])
    run.errors(["p3"])
    run.summary(status="completed", received=4, succeeded=3, rejected=1, pending=0)
    outcome = verify_json(run_verify, run)
    unknown = [f for f in findings(outcome) if "is not an id of the input" in f["message"]]
    assert [(Path(f["path"]).name, f["line"]) for f in unknown] == [("results.jsonl", 3)]
    assert any("input id 'p4'" in f["message"] for f in findings(outcome))


def test_ids_compare_as_json_values(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=[1, 2], rejected=[])
    write_jsonl(run.folder / "results.jsonl", [{"id": "1", "output": "a"}, {"id": 2, "output": "b"}])
    outcome = verify_json(run_verify, run)
    assert any("id '1' is not an id of the input" in f["message"] for f in findings(outcome))


def test_received_must_equal_the_inputs(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["p1", "p2", "p3", "p4"], rejected=["p4"])
    with run.input.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "p5", "text": "late"}\n')
    outcome = verify_json(run_verify, run)
    assert any("received is 4 but the input" in f["message"] and "has 5 records" in f["message"]
               for f in findings(outcome))


def test_input_changed_under_the_run(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    text = run.input.read_text(encoding="utf-8").replace("prompt p1", "prompt P1")
    run.input.write_text(text, encoding="utf-8")
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    changed = [f for f in findings(outcome) if "input changed" in f["message"]]
    assert len(changed) == 1
    lines = (run.folder / "manifest.json").read_text(encoding="utf-8").splitlines()
    assert '"sha256"' in lines[changed[0]["line"] - 1]


def test_duplicate_input_ids(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["p1", "p2", "p2"], rejected=[])
    run.results(["p1", "p2"])
    run.summary(status="completed", received=3, succeeded=2, rejected=0, pending=0)
    outcome = verify_json(run_verify, run)
    assert any(f["path"].endswith("prompts.jsonl") and f["line"] == 3 and "duplicate input id" in f["message"]
               for f in findings(outcome))


def test_unreachable_input_skips_the_input_checks(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    run.input.unlink()
    outcome = run_verify(str(run.folder))
    assert outcome.code == 0
    assert "not reachable" in outcome.err


def test_input_override(run_verify: Run, make_run: Make, tmp_path: Path) -> None:
    run = make_run()
    moved = tmp_path / "moved.jsonl"
    run.input.rename(moved)
    assert run_verify(str(run.folder), "--input", str(moved)).code == 0
    moved.write_text('{"id": "p1"}\n', encoding="utf-8")
    assert run_verify(str(run.folder), "--input", str(moved)).code == 1
    assert run_verify(str(run.folder), "--input", str(tmp_path / "nope.jsonl")).code == 1


def test_input_without_ids_only_gets_the_hash_and_count_checks(run_verify: Run, make_run: Make) -> None:
    run = make_run(ids=["a", "b"], rejected=[])
    run.input.write_text("first prompt\nsecond prompt\n", encoding="utf-8")
    manifest = run.manifest()
    import hashlib

    manifest["input"]["sha256"] = hashlib.sha256(run.input.read_bytes()).hexdigest()
    run.write_manifest(manifest)
    assert run_verify(str(run.folder)).code == 0


def test_relative_input_path_in_a_hand_written_manifest(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    manifest = run.manifest()
    manifest["input"]["path"] = "../prompts.jsonl"
    run.write_manifest(manifest)
    assert run_verify(str(run.folder)).code == 0


# --------------------------------------------------------------------------- usage


def test_a_run_folder_that_is_a_file(run_verify: Run, tmp_path: Path) -> None:
    (tmp_path / "run").write_text("x", encoding="utf-8")
    outcome = run_verify(str(tmp_path / "run"))
    assert outcome.code == 2
    assert "not a folder" in outcome.err


def test_a_missing_run_folder(run_verify: Run, tmp_path: Path) -> None:
    outcome = run_verify(str(tmp_path / "nope"))
    assert outcome.code == 2
    assert "no such run folder" in outcome.err


def test_an_empty_folder_is_not_a_run(run_verify: Run, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    outcome = run_verify(str(tmp_path / "run"), "--format", "json")
    assert outcome.code == 1
    names = {Path(f["path"]).name for f in findings(outcome)}
    assert {"manifest.json", "summary.json", "results.jsonl", "errors.jsonl"} <= names


@pytest.mark.parametrize("argv", [[], ["a", "b"], ["run", "--format", "xml"], ["run", "--bogus"]])
def test_usage_errors(run_verify: Run, argv: list[str]) -> None:
    assert run_verify(*argv).code == 2


def test_unwritable_output(run_verify: Run, make_run: Make, tmp_path: Path) -> None:
    run = make_run()
    outcome = run_verify(str(run.folder), "--output", str(tmp_path / "no" / "such" / "out.json"))
    assert outcome.code == 2


def test_the_cli_delegates(make_run: Make, capsys: pytest.CaptureFixture[str]) -> None:
    from spikelint.cli import main

    run = make_run()
    capsys.readouterr()
    assert main(["verify-run", str(run.folder)]) == 0
    write_json(run.folder / "summary.json", [])
    assert main(["verify-run", str(run.folder), "--format", "github"]) == 1
    assert "::error file=" in capsys.readouterr().out


def test_large_run_is_verified_quickly(run_verify: Run, make_run: Make) -> None:
    import time

    ids = [f"item-{number}" for number in range(50_000)]
    run = make_run(ids=ids, rejected=ids[:500])
    start = time.perf_counter()
    outcome = run_verify(str(run.folder))
    elapsed = time.perf_counter() - start
    assert outcome.code == 0, outcome.out[:2000]
    assert elapsed < 5, f"{elapsed:.1f}s for 50,000 items"


def test_deeply_nested_files_do_not_crash(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    (run.folder / "summary.json").write_text('{"status": ' + "[" * 900 + "]" * 900 + "}", encoding="utf-8")
    with (run.folder / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("[" * 100_000 + "\n")
    outcome = verify_json(run_verify, run)
    assert outcome.code == 1
    messages = [f["message"] for f in findings(outcome)]
    assert any("nests deeper than" in message for message in messages)
    assert any("nests too deeply" in message for message in messages)


def test_a_csv_input_is_compared_by_hash_only(run_verify: Run, make_run: Make) -> None:
    import hashlib

    run = make_run(ids=["a", "b"], rejected=[])
    run.input.write_text("id,text\na,first\nb,second\n", encoding="utf-8")
    manifest = run.manifest()
    manifest["input"]["sha256"] = hashlib.sha256(run.input.read_bytes()).hexdigest()
    run.write_manifest(manifest)
    assert run_verify(str(run.folder)).code == 0


def test_summary_files_outside_the_run_folder_are_not_checked(run_verify: Run, make_run: Make) -> None:
    run = make_run()
    summary = json.loads((run.folder / "summary.json").read_text(encoding="utf-8"))
    summary["files"] = {"results": "results.jsonl", "errors": "errors.jsonl", "input": "../data/elsewhere.jsonl"}
    run.summary(**summary)
    assert run_verify(str(run.folder)).code == 0
