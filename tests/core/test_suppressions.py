"""Inline and annotation suppressions, their expiry, and SPK002 for the ones that do nothing."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from spikelint.engine import lint_snippet
from spikelint.documents.suppressions import parse_suppressions

TODAY = date(2026, 6, 1)
DIGEST = "@sha256:" + "a" * 64


def lint(name: str, text: str, **config: object) -> set[tuple[int, str]]:
    return {(f.line, f.rule) for f in lint_snippet(name, text, dict(config), today=TODAY)}


def messages(name: str, text: str, rule: str, **config: object) -> list[str]:
    return [f.message for f in lint_snippet(name, text, dict(config), today=TODAY) if f.rule == rule]


def values(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- parsing the comments


def test_directive_parts_are_read() -> None:
    [found] = parse_suppressions(['image: x:latest  # spikelint: disable=SPK101, SPK102 reason="pinned soon" '
                                  'until=2026-12-31'])
    assert found.rules == ("SPK101", "SPK102") and found.reason == "pinned soon" and found.until == "2026-12-31"
    assert found.applies_to == (1,) and found.column == 18


def test_comment_line_applies_to_the_next_code_line() -> None:
    found = parse_suppressions(["# spikelint: disable=SPK101", "", "# another comment", "image: x:latest"])
    assert found[0].applies_to == (1, 4)


def test_file_directive_applies_everywhere() -> None:
    [found] = parse_suppressions(["a: 1", "# spikelint: disable-file=SPK1"])
    assert found.applies_to == ()


@pytest.mark.parametrize("line", ["# spikelint: enable=SPK101", "# spikelint disable=SPK101", "spikelint: disable=X1",
                                  "# spikelint: disable=", "image: x  # nospikelint"])
def test_non_directives_are_ignored(line: str) -> None:
    assert parse_suppressions([line]) == []


# --------------------------------------------------------------------------- suppressing


def test_same_line() -> None:
    text = values("replicaCount: 1", "image: busybox:latest  # spikelint: disable=SPK101")
    assert lint("values.yaml", text) == set()


def test_line_above() -> None:
    text = values("replicaCount: 1", "# spikelint: disable=SPK101 reason=\"tracked upstream\"", "image: busybox:latest")
    assert lint("values.yaml", text) == set()


def test_line_above_does_not_reach_further() -> None:
    text = values("# spikelint: disable=SPK101", "replicaCount: 1", "image: busybox:latest")
    assert lint("values.yaml", text) == {(1, "SPK002"), (3, "SPK101")}


def test_other_rule_is_not_suppressed() -> None:
    text = values("image: busybox:latest  # spikelint: disable=SPK102")
    assert lint("values.yaml", text) == {(1, "SPK101"), (1, "SPK002")}


def test_family_prefix_suppresses_the_family() -> None:
    text = values("image: busybox:latest  # spikelint: disable=SPK1", "other: {image: alpine:3.1}")
    assert lint("values.yaml", text) == {(2, "SPK102")}


def test_disable_file_anywhere() -> None:
    text = values("image: busybox:latest", "sidecar:", "  image: alpine:3.1", "# spikelint: disable-file=SPK101,SPK102")
    assert lint("values.yaml", text) == set()


def test_disable_file_for_a_rule_that_never_fires_is_unused() -> None:
    text = values("# spikelint: disable-file=SPK103", "image: busybox:1.36.1" + DIGEST)
    assert lint("values.yaml", text, allowed_registries=["docker.io"]) == {(1, "SPK002")}


def test_suppressed_findings_are_counted(tmp_path: Path) -> None:
    from spikelint.config import Config
    from spikelint.engine import check_paths

    (tmp_path / "values.yaml").write_text(values("image: busybox:latest  # spikelint: disable=SPK101"))
    result = check_paths(["."], Config(), cwd=tmp_path, jobs=1)
    assert result.report.findings == [] and result.report.suppressed == 1


# --------------------------------------------------------------------------- expiry


def test_until_in_the_future_suppresses() -> None:
    text = values("image: busybox:latest  # spikelint: disable=SPK101 until=2026-06-01")
    assert lint("values.yaml", text) == set()


def test_expired_until_stops_suppressing_and_says_so() -> None:
    text = values("image: busybox:latest  # spikelint: disable=SPK101 reason=\"release\" until=2026-05-31")
    assert lint("values.yaml", text) == {(1, "SPK101"), (1, "SPK002")}
    [message] = messages("values.yaml", text, "SPK002")
    assert "expired on 2026-05-31" in message


def test_expired_line_above_suppression() -> None:
    text = values("# spikelint: disable=SPK101 until=2025-01-01", "image: busybox:latest")
    assert lint("values.yaml", text) == {(1, "SPK002"), (2, "SPK101")}


# --------------------------------------------------------------------------- unused suppressions


def test_unused_suppression_is_spk002_at_the_comment() -> None:
    text = values("replicaCount: 1", "image: busybox:1.36.1" + DIGEST + "  # spikelint: disable=SPK101")
    [finding] = lint_snippet("values.yaml", text, today=TODAY)
    column = text.splitlines()[1].index("#") + 1
    assert (finding.rule, finding.line, finding.column, finding.severity) == ("SPK002", 2, column, "info")
    assert "SPK101" in finding.message


def test_partly_unused_suppression_names_the_unused_rule() -> None:
    text = values("image: busybox:latest  # spikelint: disable=SPK101,SPK102")
    assert lint("values.yaml", text) == {(1, "SPK002")}
    [message] = messages("values.yaml", text, "SPK002")
    assert "SPK102" in message and "SPK101" not in message.split("names", 1)[1]


def test_unused_suppression_of_a_rule_that_does_not_run_is_not_judged() -> None:
    text = values("image: busybox:1.36.1" + DIGEST + "  # spikelint: disable=SPK101")
    assert lint("values.yaml", text, ignore=["SPK101"]) == set()
    assert lint("values.yaml", text, select=["SPK2", "SPK002"]) == set()


def test_unused_suppression_is_silent_when_spk002_is_ignored() -> None:
    text = values("image: busybox:1.36.1" + DIGEST + "  # spikelint: disable=SPK101")
    assert lint("values.yaml", text, ignore=["SPK002"]) == set()


def test_an_unknown_rule_id_is_reported_as_no_rule_not_ignored() -> None:
    """A typo (``SPK999`` for ``SPK099``) suppressed nothing and said nothing: the finding it was meant for stayed
    while its author believed it handled."""
    text = values("image: busybox:1.36.1" + DIGEST + "  # spikelint: disable=SPK999")
    findings = lint_snippet("values.yaml", text)
    assert [(finding.rule, "SPK999, which is no rule id" in finding.message) for finding in findings] == [("SPK002", True)]


@pytest.mark.parametrize("until", ["2026-13-45", "next-year", "2020/01/01", "2020-02-30"])
def test_an_until_that_is_no_date_suppresses_nothing_and_says_so(until: str) -> None:
    """A typo in the date made the suppression permanent."""
    text = values("image: busybox:latest  # spikelint: disable=SPK101 until=" + until)
    found = lint_snippet("values.yaml", text)
    assert sorted(finding.rule for finding in found) == ["SPK002", "SPK101"]
    assert any(f"until={until}, which is not a date (YYYY-MM-DD" in finding.message for finding in found)


def test_an_until_in_the_future_still_suppresses() -> None:
    assert lint("values.yaml", values("image: busybox:latest  # spikelint: disable=SPK101 until='2099-01-01'")) == set()


# --------------------------------------------------------------------------- other file kinds


def test_shell_and_python_and_dockerfile_comments() -> None:
    for name, text in (("run.sh", "# spikelint: disable-file=SPK101\necho hi\n"),
                       ("train.py", "# spikelint: disable-file=SPK101\nprint('hi')\n"),
                       ("conf.toml", "# spikelint: disable-file=SPK101\na = 1\n")):
        assert lint(name, text) == {(1, "SPK002")}, name


def test_json_has_no_comments_so_per_path_ignores_do_it() -> None:
    body = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},\n'
            ' "spec": {"containers": [{"name": "main", "image": "busybox:latest"}]}}\n')
    assert lint("deploy/pod.json", body, select=["SPK1"]) == {(2, "SPK101")}
    assert lint("deploy/pod.json", body, select=["SPK1"], per_path_ignores={"deploy/**": ["SPK101"]}) == set()
    assert lint("deploy/pod.json", body, select=["SPK1"], per_path_ignores={"deploy/*.json": ["SPK1"]}) == set()
    assert lint("deploy/pod.json", body, select=["SPK1"], per_path_ignores={"other/**": ["SPK101"]}) == {
        (2, "SPK101")}


# --------------------------------------------------------------------------- Kubernetes annotations


def job(annotation: str, image: str = "busybox:latest") -> str:
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations:
    spikelint.io/disable: "{annotation}"
spec:
  ttlSecondsAfterFinished: 3600
  activeDeadlineSeconds: 86400
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: {image}
"""


def test_annotation_suppresses_in_its_object() -> None:
    assert lint("job.yaml", job("SPK101"), select=["SPK1", "SPK002"]) == set()


def test_unused_annotation_is_spk002_at_the_annotation() -> None:
    found = lint("job.yaml", job("SPK101", "busybox:1.36.1" + DIGEST), select=["SPK1", "SPK002"])
    assert found == {(6, "SPK002")}


def test_annotation_does_not_reach_the_next_document() -> None:
    other = job("SPK703").replace("name: train", "name: second")
    text = job("SPK101") + "---\n" + other.replace('    spikelint.io/disable: "SPK703"\n', "").replace(
        "  annotations:\n", "")
    found = lint("job.yaml", text, select=["SPK101", "SPK002"])
    assert found == {(text.splitlines().index("          image: busybox:latest", 20) + 1, "SPK101")}


# --------------------------------------------------------------------------- secrets: notebooks and pragmas

TOKEN = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmPlOkMnIj"


def notebook(*source: str) -> str:
    import json

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": list(source)}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_notebook_secret_is_found_at_its_json_line() -> None:
    text = notebook("import os\n", f'token = "{TOKEN}"\n')
    line = next(number for number, body in enumerate(text.splitlines(), 1) if TOKEN in body)
    assert lint("nb.ipynb", text) == {(line, "SPK201")}


@pytest.mark.parametrize("source", [
    ("import os\n", f'token = "{TOKEN}"  # spikelint: disable=SPK201\n'),
    ("# spikelint: disable=SPK2 reason=\"revoked demo token\"\n", f'token = "{TOKEN}"\n'),
])
def test_notebook_cells_carry_inline_suppressions(source: tuple[str, ...]) -> None:
    assert lint("nb.ipynb", notebook(*source)) == set()


def test_unused_suppression_in_a_notebook_cell_points_into_the_notebook() -> None:
    text = notebook("x = 1  # spikelint: disable=SPK201\n")
    line = next(number for number, body in enumerate(text.splitlines(), 1) if "disable" in body)
    assert lint("nb.ipynb", text) == {(line, "SPK002")}


@pytest.mark.parametrize("text", [
    f"hub:\n  token: {TOKEN}  # pragma: allowlist secret\n",
    f"hub:\n  # pragma: allowlist nextline secret\n  token: {TOKEN}\n",
])
def test_detect_secrets_pragmas_are_honoured(text: str) -> None:
    assert lint("train.yaml", text) == set()


def test_pragma_does_not_cover_other_families_and_is_never_reported_unused() -> None:
    assert lint("values.yaml", "image: busybox:latest  # pragma: allowlist secret\n") == {(1, "SPK101")}
    assert lint("train.yaml", "lr: 0.1  # pragma: allowlist secret\n") == set()


def test_problem_in_another_file_uses_that_files_path_ignores(monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.checks.registry import CheckSpec
    from spikelint.model import Problem

    def elsewhere(document: object, ctx: object):
        yield Problem("SPK101", 1, 1, "in the referenced config", path="configs/run.yaml", key="x")

    spec = CheckSpec(("SPK101",), "document", frozenset(), elsewhere)
    monkeypatch.setattr("spikelint.engine.all_checks", lambda: [spec])
    text = "# spikelint: disable=SPK101\na: 1\n"
    [finding] = [f for f in lint_snippet("job.yaml", text, today=TODAY) if f.rule == "SPK101"]
    assert finding.path == "configs/run.yaml"  # this file's comment covers this file only
    ignored = lint_snippet("job.yaml", "a: 1\n", {"per_path_ignores": {"configs/**": ["SPK101"]}}, today=TODAY)
    assert ignored == []
