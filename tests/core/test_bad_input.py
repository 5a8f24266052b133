"""Malformed, truncated, binary, mis-encoded, deeply nested and oversized files: each gives
exactly one SPK001 or SPK003 at a sensible place, quickly, and the run goes on."""

from __future__ import annotations

import codecs
import json
import time
from pathlib import Path

import pytest
from core_support import VALUES_LATEST
from core_support import write

from spikelint.documents import UnrenderedTemplate
from spikelint.documents import parse_text
from spikelint.documents import read_document
from spikelint.files import detect_kind
from spikelint.model import Document
from spikelint.model import SourceFile

NESTING = 100_000
TEXT_KINDS = ("job.yaml", "body.json", "conf.toml", "nb.ipynb", "train.py", "Dockerfile", "run.sh")

# Truncated files: cut off in the middle of a construct, with where the parser stops (line).
TRUNCATED = {
    "job.yaml": ("apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n"
                 "        - name: trainer\n          args: [\"--lr\", \"0.1\"\n", (7, 8)),
    "body.json": ('{\n  "name": "train",\n  "spec": {\n    "image": "x:1.0.0",\n    "args": ["a",', (5, 5)),
    "conf.toml": ('[training]\nsteps = 10\nname = "unterminated\n', (3, 3)),
    "nb.ipynb": ('{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": ["import os\\n",', (5, 5)),
    "train.py": ("import torch\n\n\ndef train(model,\n", (4, 5)),
    "run.sh": ("#!/bin/bash\nset -euo pipefail\nif [ -n \"$X\" ]; then\n  echo 'start\n", (4, 4)),
    "Dockerfile": ("FROM ubuntu:22.04 AS base\nWORKDIR /app\nCOPY", (3, 3)),
}

# Files that are wrong at a known line.
BROKEN_AT = {
    "job.yaml": ("kind: Job\nmetadata:\n  name: x\n\tspec: {}\n", 4),
    "body.json": ('{\n  "a": 1,\n  "b": 2,\n}\n', 4),
    "conf.toml": ("[a]\nx = 1\nx = 2\n", 3),
    "nb.ipynb": ('{\n "cells": [],\n "metadata": {}\n "nbformat": 4\n}\n', 4),
    "train.py": ("x = 1\ny = (\nz = 2\nif x\n", 2),
    "run.sh": ("echo a\nfor x in a b; do\n  echo \"$x\"\ndone\necho \"c\n", 5),
    "Dockerfile": ("FROM ubuntu:22.04\nRUN apt-get update\nCOPYY . /app\n", 3),
}


def source(name: str, text: str = "") -> SourceFile:
    return SourceFile(name, name, detect_kind(name, text[:128]))


def read(tmp_path: Path, name: str, data: bytes) -> Document:
    path = tmp_path / name
    path.write_bytes(data)
    return read_document(SourceFile(name, str(path), detect_kind(name, data[:128].decode("latin-1"))))


def only_problem(document: Document) -> tuple[str, int, int]:
    assert len(document.problems) == 1, document.problems
    problem = document.problems[0]
    assert problem.rule in ("SPK001", "SPK003")
    assert problem.message and "Traceback" not in problem.message
    lines = max(len(document.text.splitlines()), 1)
    assert 1 <= problem.line <= lines and problem.column >= 1
    return problem.rule, problem.line, problem.column


# --------------------------------------------------------------------------- encodings and binaries


@pytest.mark.parametrize("name", TEXT_KINDS)
def test_utf16_with_bom_is_one_spk001(tmp_path: Path, name: str) -> None:
    data = codecs.BOM_UTF16_LE + "kind: Job\n".encode("utf-16-le")
    document = read(tmp_path, name, data)
    assert only_problem(document) == ("SPK001", 1, 1)
    assert "UTF-16" in document.problems[0].message


@pytest.mark.parametrize("name", TEXT_KINDS)
def test_invalid_utf8_is_one_spk001_at_the_bad_byte(tmp_path: Path, name: str) -> None:
    data = b"# ok\n# fine\nvalue = 'caf\xe9'\n"
    document = read(tmp_path, name, data)
    assert only_problem(document) == ("SPK001", 3, 13)
    assert "0xe9" in document.problems[0].message


@pytest.mark.parametrize("name", TEXT_KINDS)
def test_nul_bytes_are_one_spk003(tmp_path: Path, name: str) -> None:
    document = read(tmp_path, name, b"kind: Job\n\0\0\0\x01\x02binary")
    assert only_problem(document)[0] == "SPK003"
    assert "binary" in document.problems[0].message


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    document = read(tmp_path, "job.yaml", codecs.BOM_UTF8 + b"kind: Job\n")
    assert document.problems == [] and document.trees[0].scalar("kind") == "Job"


@pytest.mark.parametrize("data", [b"\0\x01\x02\x03", b"caf\xe9 au lait\n", codecs.BOM_UTF16_LE + b"a\0"])
def test_unknown_kinds_are_never_unparseable(tmp_path: Path, data: bytes) -> None:
    document = read(tmp_path, "notes.txt", data)
    assert document.problems == []


def test_unreadable_file_is_one_spk001(tmp_path: Path) -> None:
    document = read_document(SourceFile("gone.yaml", str(tmp_path / "gone.yaml"), "yaml"))
    assert only_problem(document)[0] == "SPK001"
    assert "cannot read" in document.problems[0].message


# --------------------------------------------------------------------------- syntax


@pytest.mark.parametrize("name", sorted(TRUNCATED))
def test_truncated_file_is_one_spk001_near_the_end(name: str) -> None:
    text, (first, last) = TRUNCATED[name]
    document = parse_text(source(name, text), text)
    rule, line, _ = only_problem(document)
    assert rule == "SPK001" and first <= line <= last


@pytest.mark.parametrize("name", sorted(BROKEN_AT))
def test_parse_error_points_at_the_line(name: str) -> None:
    text, line = BROKEN_AT[name]
    document = parse_text(source(name, text), text)
    assert only_problem(document)[:2] == ("SPK001", line)


def test_parse_error_line_is_clamped_to_the_last_line() -> None:
    document = parse_text(source("job.yaml"), "a: [1, 2")
    assert only_problem(document)[1] == 1


EMPTY = ["", "\n", "   \n\n"]
COMMENT_ONLY = ["# only a comment\n"]


@pytest.mark.parametrize(("name", "text"), [
    *[(name, text) for name in ("job.yaml", "body.json", "conf.toml", "train.py", "run.sh", "Dockerfile")
      for text in EMPTY],
    *[(name, text) for name in ("job.yaml", "conf.toml", "train.py", "run.sh", "Dockerfile") for text in COMMENT_ONLY],
    ("job.yaml", "---\n...\n"),
])
def test_empty_files_are_not_errors(name: str, text: str) -> None:
    assert parse_text(source(name, text), text).problems == []


@pytest.mark.parametrize(("name", "text"), [
    ("nb.ipynb", "[]"),
    ("nb.ipynb", "{}"),
    ("nb.ipynb", '{"cells": 5}'),
    ("nb.ipynb", ""),
])
def test_json_that_is_not_a_notebook_is_one_spk001(name: str, text: str) -> None:
    assert only_problem(parse_text(source(name, text), text))[0] == "SPK001"


# --------------------------------------------------------------------------- safety limits


NESTED = {
    "job.yaml": "[" * NESTING,
    "flow.yaml": "a: " + "{b: " * NESTING,
    "block.yaml": "- " * NESTING + "x\n",
    "body.json": "[" * NESTING + "]" * NESTING,
    "conf.toml": "x = " + "[" * NESTING + "]" * NESTING,
    "inline.toml": "x = " + "{a = " * NESTING,
    "nb.ipynb": '{"cells": ' + "[" * NESTING,
    "parens.py": "x = " + "(" * NESTING + "1" + ")" * NESTING,
    "mixed.py": "x = " + "(a, [" * (NESTING // 2),
    "unary.py": "x = " + "-" * NESTING + "1",
    "chain.py": "x = " + "1 + " * NESTING + "1",
    "attrs.py": "x = " + "a." * NESTING + "b",
    "subst.sh": "echo " + "$(" * NESTING,
    "ifs.sh": "if true; then " * (NESTING // 10),
    "subshells.sh": "(" * NESTING,
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_deep_nesting_is_one_spk001_quickly(name: str) -> None:
    text = NESTED[name]
    started = time.perf_counter()
    document = parse_text(source(name, text), text)
    assert only_problem(document)[0] == "SPK001"
    assert time.perf_counter() - started < 5


def alias_bomb(levels: int = 10) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        aliases = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_one_spk001_at_the_expanding_alias() -> None:
    text = alias_bomb()
    started = time.perf_counter()
    document = parse_text(source("bomb.yaml"), text)
    assert only_problem(document)[0] == "SPK001"
    assert "alias" in document.problems[0].message
    assert document.problems[0].line > 1
    assert time.perf_counter() - started < 10  # an expanded bomb never ends


def test_small_alias_use_is_fine_and_shared() -> None:
    text = "base: &b {image: x:1.0.0}\none: *b\ntwo:\n  <<: *b\n  extra: 1\n"
    document = parse_text(source("ok.yaml"), text)
    assert document.problems == []
    tree = document.trees[0]
    assert tree.get("one") is tree.get("base")
    assert tree.scalar("two", "image") == "x:1.0.0" and tree.scalar("two", "extra") == 1


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &m {x: *m}\n", "a: &a [1]\nb: &a [{c: *a}]\n"])
def test_recursive_alias_is_one_spk001(text: str) -> None:
    document = parse_text(source("loop.yaml"), text)
    assert only_problem(document)[0] == "SPK001"
    assert "recursive" in document.problems[0].message


def test_undefined_alias_is_one_spk001_at_the_alias() -> None:
    document = parse_text(source("a.yaml"), "a: 1\nb: *nope\n")
    assert only_problem(document)[:3] == ("SPK001", 2, 4)


def test_python_tags_are_never_constructed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = (f"a: !!python/object/apply:builtins.open ['{marker}', 'w']\n"
            f"b: !!python/object/apply:os.system ['touch {marker}']\n"
            "c: !!binary aGVsbG8=\nd: !Ref Something\ne: !!set {x, y}\n")
    document = parse_text(source("tags.yaml"), text)
    assert document.problems == []
    assert not marker.exists()
    tree = document.trees[0]
    assert tree.get("a").kind == "seq" and tree.get("c").value == "aGVsbG8="
    assert tree.get("a").tag == "tag:yaml.org,2002:python/object/apply:builtins.open"


# --------------------------------------------------------------------------- whole runs


def bad_repository(root: Path) -> Path:
    """One file per kind of damage, plus one healthy file with a real finding."""
    return write(root, {
        "values.yaml": VALUES_LATEST,
        "bad/truncated.yaml": TRUNCATED["job.yaml"][0],
        "bad/truncated.json": TRUNCATED["body.json"][0],
        "bad/truncated.toml": TRUNCATED["conf.toml"][0],
        "bad/truncated.ipynb": TRUNCATED["nb.ipynb"][0],
        "bad/truncated.py": TRUNCATED["train.py"][0],
        "bad/truncated.sh": TRUNCATED["run.sh"][0],
        "bad/Dockerfile": BROKEN_AT["Dockerfile"][0],
        "bad/utf16.yaml": codecs.BOM_UTF16_LE + "kind: Job\n".encode("utf-16-le"),
        "bad/latin1.yaml": b"name: caf\xe9\n",
        "bad/nul.json": b'{"a": "\0\0"}',
        "bad/deep.json": "[" * NESTING,
        "bad/deep.yaml": "- " * NESTING + "x\n",
        "bad/bomb.yaml": alias_bomb(),
        "bad/big.yaml": "# padding\n" * (6 * 1024 * 1024 // 10 + 1),
        "bad/random.bin": bytes(range(256)) * 4,
        "chart/templates/job.yaml": "kind: Job\nmetadata:\n  name: {{ .Release.Name }}\n",
    })


EXPECTED_BAD = {
    "bad/truncated.yaml": "SPK001", "bad/truncated.json": "SPK001", "bad/truncated.toml": "SPK001",
    "bad/truncated.ipynb": "SPK001", "bad/truncated.py": "SPK001", "bad/truncated.sh": "SPK001", "bad/Dockerfile": "SPK001", "bad/utf16.yaml": "SPK001",
    "bad/latin1.yaml": "SPK001", "bad/nul.json": "SPK003", "bad/deep.json": "SPK001", "bad/deep.yaml": "SPK001",
    "bad/bomb.yaml": "SPK001", "bad/big.yaml": "SPK003", "chart/templates/job.yaml": "SPK003",
}


def test_every_bad_file_gives_one_finding_and_the_run_goes_on(tmp_path: Path, run_cli) -> None:
    root = bad_repository(tmp_path)
    started = time.perf_counter()
    outcome = run_cli(["check", "--format", "json", "--jobs", "1"], cwd=root)
    assert time.perf_counter() - started < 20
    assert outcome.code == 1, outcome.err
    assert "Traceback" not in outcome.err and "internal error" not in outcome.err
    report = outcome.json()
    by_path: dict[str, list[str]] = {}
    for finding in report["findings"]:
        by_path.setdefault(finding["path"], []).append(finding["rule"])
    for path, rule in EXPECTED_BAD.items():
        found = by_path.get(path, [])
        assert [meta for meta in found if meta in ("SPK001", "SPK003")] == [rule], (path, found)
        if not path.endswith((".sh", "Dockerfile")):  # scripts keep the checks of what their parser recovered
            assert found == [rule], (path, found)
    assert by_path["values.yaml"] == ["SPK101"]
    assert "bad/random.bin" not in by_path
    big = next(f for f in report["findings"] if f["path"] == "bad/big.yaml")
    assert big["line"] == 1 and big["severity"] == "info" and "limit" in big["message"]


def test_only_info_findings_exit_zero(tmp_path: Path, run_cli) -> None:
    root = write(tmp_path, {"chart/templates/job.yaml": "name: {{ .Release.Name }}\n", "big.yaml": "a: 1\n" * 20,
                            ".spikelint.yaml": "max_file_size: 50\n"})
    outcome = run_cli(["check", "--format", "json"], cwd=root)
    assert outcome.code == 0
    assert {(f["path"], f["rule"]) for f in outcome.json()["findings"]} == {
        ("chart/templates/job.yaml", "SPK003"), ("big.yaml", "SPK003")}


def test_unparseable_file_exits_one_by_default(tmp_path: Path, run_cli) -> None:
    root = write(tmp_path, {"job.yaml": "a: [\n"})
    outcome = run_cli(["check"], cwd=root)
    assert outcome.code == 1
    assert outcome.out.startswith("job.yaml:1:") and "SPK001 [error]" in outcome.out


def test_helm_template_is_never_spk001(tmp_path: Path) -> None:
    broken_go_template = "{{- if .Values.enabled }}\nkind: Job\n  bad: [\n{{- end }}\n"
    document = parse_text(source("chart/templates/job.yaml"), broken_go_template)
    assert document.problems == [] and document.kind == "text"  # skipped: counted once per chart (SPK003)
    assert isinstance(document.parsed, UnrenderedTemplate) and document.parsed.chart_template
    plain = parse_text(source("chart/templates/configmap.yaml"), "kind: ConfigMap\ndata: {}\n")
    assert plain.problems == [] and plain.trees


def test_notebook_json_errors_have_positions() -> None:
    text = json.dumps({"cells": [], "nbformat": 4}, indent=1)[:-2] + ",,}"
    document = parse_text(source("nb.ipynb"), text)
    assert only_problem(document)[0] == "SPK001"


@pytest.mark.parametrize(("name", "text"), [
    ("deploy/job.yaml", "kind: Job\nspec:\n  {{- if .Values.x }}\n  a: 1\n  {{- end }}\n"),
    ("deploy/body.json", '{"name": "{{ name }}", {% if gpu %}"gpu": 1{% endif %}}\n'),
    ("deploy/conf.toml", "[a]\n{{ key }} = 1\n"),
])
def test_unparseable_template_outside_templates_folder_is_skipped(name: str, text: str) -> None:
    document = parse_text(source(name, text), text)
    assert document.problems == [] and isinstance(document.parsed, UnrenderedTemplate)
    assert not document.parsed.chart_template


def test_valid_file_with_braces_is_checked_normally() -> None:
    text = 'workflow:\n  args: ["{{inputs.parameters.lr}}"]\n'
    document = parse_text(source("argo.yaml", text), text)
    assert document.problems == [] and document.trees


def test_huge_python_file_is_scanned_as_text_without_a_syntax_tree() -> None:
    token = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmPlOkMnIj"
    text = "".join(f"x{i} = torch.save({{'m': {i}}}, 'p')\n" for i in range(40_000)) + f'TOKEN = "{token}"\n'
    started = time.perf_counter()
    document = parse_text(source("generated_pb2.py"), text)
    assert document.parsed is None
    assert [problem.rule for problem in document.problems] == ["SPK003"]  # its save calls went unread
    from spikelint.engine import lint_snippet

    assert {f.rule for f in lint_snippet("generated_pb2.py", text)} == {"SPK201", "SPK003"}
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("body", ["RUN " + "$(" * NESTING, "RUN " + "(" * NESTING, "RUN echo " + "\\\n" * NESTING,
                                  "ENV " + "A=${" * NESTING])
def test_deeply_nested_dockerfile_instructions_are_read_quickly(body: str) -> None:
    started = time.perf_counter()
    document = parse_text(source("Dockerfile"), "FROM busybox:1.36.1\n" + body + "\n")
    assert len(document.problems) <= 1 and time.perf_counter() - started < 5


def _large_module(save_call: str) -> str:
    body = "".join(f"def step_{index}(batch):\n    return batch + {index}\n" for index in range(30_000))
    return "import torch\n" + body + f"def keep(model):\n    {save_call}\n"


def test_a_python_file_too_large_to_parse_says_the_checkpoint_rule_did_not_run(tmp_path: Path) -> None:
    text = _large_module('torch.save({"model": model.state_dict()}, "ckpt.pt")')
    assert len(text) > 1024 * 1024
    document = parse_text(SourceFile("generated/train.py", str(tmp_path / "train.py"), "python"), text)
    assert document.parsed is None
    (notice,) = document.problems
    assert notice.rule == "SPK003" and notice.line == 1 and "SPK403" in notice.message


def test_a_large_python_file_that_saves_nothing_is_quietly_text_only(tmp_path: Path) -> None:
    text = _large_module("return model")
    document = parse_text(SourceFile("generated/tables.py", str(tmp_path / "tables.py"), "python"), text)
    assert document.parsed is None and document.problems == []
