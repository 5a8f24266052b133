"""Positioned parsers on good input: 1-based line/column on every value, CRLF, BOM, multiple
documents, anchors shared rather than copied, tags kept as data, Kubernetes-style scalars."""

from __future__ import annotations

import json

import pytest

from spikelint.documents import parse_text
from spikelint.documents.jsondoc import parse_json
from spikelint.documents.notebook import read_notebook
from spikelint.documents.tomldoc import parse_toml
from spikelint.documents.yamldoc import parse_yaml
from spikelint.model import SourceFile
from spikelint.model import walk

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
        - name: main
          image: "busybox:1.36.1"
          args: [--lr, "0.1"]
"""


def test_yaml_positions_of_keys_and_values() -> None:
    [tree] = parse_yaml(JOB)
    image = tree.get("spec", "template", "spec", "containers", 0, "image")
    assert (image.value, image.line, image.column, image.end_line, image.end_column) == ("busybox:1.36.1", 10, 18, 10, 34)
    assert image.quoted
    container = tree.get("spec", "template", "spec", "containers", 0)
    assert container.key_at("image")[1:3] == (10, 11)
    args = container.get("args")
    assert [(node.value, node.line, node.column) for node in args.value] == [("--lr", 11, 18), ("0.1", 11, 24)]


def test_yaml_crlf_gives_the_same_positions() -> None:
    [lf] = parse_yaml(JOB)
    [crlf] = parse_yaml(JOB.replace("\n", "\r\n"))
    pairs = [(node.line, node.column, node.value if node.kind == "scalar" else None) for _, node in walk(lf)]
    assert pairs == [(node.line, node.column, node.value if node.kind == "scalar" else None) for _, node in walk(crlf)]


def test_yaml_multiple_documents_keep_file_lines() -> None:
    trees = parse_yaml("kind: A\n---\n# comment\nkind: B\n---\n---\nkind: C\n...\n")
    assert [(tree.scalar("kind"), tree.get("kind").line) for tree in trees] == [("A", 1), ("B", 4), ("C", 7)]


def test_yaml_bom_is_ignored() -> None:
    document = parse_text(SourceFile("a.yaml", "a.yaml", "yaml"), "\ufeffkind: Job\n")
    assert document.problems == [] and document.trees[0].get("kind").line == 1


@pytest.mark.parametrize(("text", "value"), [
    ("a: 1", 1), ("a: -3", -3), ("a: 0x1F", 31), ("a: 1.5", 1.5), ("a: 1e3", 1000.0), ("a: true", True),
    ("a: False", False), ("a: null", None), ("a: ~", None), ("a:", None), ("a: yes", "yes"), ("a: on", "on"),
    ("a: '1'", "1"), ('a: "true"', "true"), ("a: .inf", ".inf"),
    ("a: 2024-01-01", "2024-01-01"), ("a: 1:30", "1:30"), ("a: v1.2", "v1.2"), ("a: !!str 5", "5"),
])
def test_yaml_scalars_resolve_like_kubernetes(text: str, value: object) -> None:
    assert parse_yaml(text)[0].scalar("a") == value


def test_yaml_aliases_share_nodes_and_walk_visits_them_once() -> None:
    [tree] = parse_yaml("base: &b {x: [1, 2, 3]}\nc1: *b\nc2: *b\nc3: *b\n")
    assert tree.get("c1") is tree.get("base") is tree.get("c3")
    assert sum(1 for _ in walk(tree)) == 1 + 1 + 1 + 3


def test_yaml_merge_keys_earlier_keys_win() -> None:
    [tree] = parse_yaml("base: &b {image: a, gpu: 1}\njob:\n  gpu: 2\n  <<: *b\n")
    assert tree.scalar("job", "image") == "a" and tree.scalar("job", "gpu") == 2


def test_yaml_non_string_keys_become_strings() -> None:
    [tree] = parse_yaml("1: a\ntrue: b\nnull: c\n? [x]\n: d\n")
    assert set(tree.value) == {"1", "true", "null", "<seq>"}


def test_json_positions() -> None:
    text = '{\n  "name": "train",\n  "spec": {"image": "x:1", "gpus": [1, 2.5, true, null]}\n}\n'
    tree = parse_json(text)
    image = tree.get("spec", "image")
    assert (image.line, image.column, image.end_column) == (3, 21, 26)
    assert tree.key_at("spec")[1:3] == (3, 3)
    assert [node.value for node in tree.get("spec", "gpus").value] == [1, 2.5, True, None]


def test_json_agrees_with_the_standard_library() -> None:
    data = {"a": [1, -2.5e3, "é\n\"", {"b": None}], "c": {"d": [[], {}]}, "e": 10**20}
    assert parse_json(json.dumps(data, indent=2)).to_python() == data
    assert parse_json(json.dumps(data, separators=(",", ":"))).to_python() == data


def test_json_crlf_and_bom() -> None:
    tree = parse_json('\ufeff{\r\n  "a": 1,\r\n  "b": 2\r\n}')
    assert (tree.get("b").line, tree.get("b").column) == (3, 8)


def test_toml_positions() -> None:
    text = '[job]\ndump_folder = "./out"\n\n[checkpoint]\nenable_checkpoint = false\ninterval = 500\n' \
           '[[model.layers]]\nname = "a"\n[[model.layers]]\nname = "b"\n'
    tree = parse_toml(text)
    assert tree.get("job", "dump_folder").line == 2
    assert tree.get("checkpoint", "interval").line == 6
    assert [layer.get("name").line for layer in tree.get("model", "layers").value] == [8, 10]


def test_notebook_lines_point_into_the_file() -> None:
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["a = 1\n", "b = 2"],
                           "outputs": [{"output_type": "stream", "name": "stdout", "text": ["\x1b[31mred\x1b[0m\n"]}]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=1)
    parsed = read_notebook(parse_json(text))
    lines = text.splitlines()
    [cell] = parsed.cells
    assert [line.value for line in cell.source] == ["a = 1", "b = 2"]
    assert all(source.value in lines[source.line - 1] for source in cell.source)
    assert cell.outputs[0].texts[0].value == "red"


def test_python_parses_to_an_ast() -> None:
    document = parse_text(SourceFile("t.py", "t.py", "python"), "import torch\ntorch.save({}, 'x')\n")
    assert document.problems == [] and type(document.parsed).__name__ == "Module"
