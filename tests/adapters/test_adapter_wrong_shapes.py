"""Adapters return what they can and never raise, whatever shape a document has.

Every value of a set of realistic documents is replaced in turn by a list, a map, a
number, a string and null; each variant must be read without an exception.
"""

from __future__ import annotations

import json
from typing import Any
from typing import Iterator

import pytest

from adapter_support import load
from test_adapter_equivalence import CRD
from test_adapter_equivalence import KUBERNETES
from test_adapter_equivalence import REST
from test_adapter_kubernetes import JOBSET_VOLCANO
from test_adapter_kubernetes import OTHERS
from test_adapter_kubernetes import POD
from test_adapter_kubernetes import PYTORCHJOB
from test_adapter_runai import INTERACTIVE

import yaml

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
REPLACEMENTS: tuple[Any, ...] = ([1, "a"], {"x": None}, 7, None)


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from paths(value, prefix + (index,))


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(data))
    holder = copy
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return copy


def variants(documents: list[Any]) -> Iterator[list[Any]]:
    for index, document in enumerate(documents):
        for path in paths(document):
            for value in REPLACEMENTS:
                yield documents[:index] + [replaced(document, path, value)] + documents[index + 1:]


YAML_SOURCES = {
    "pod.yaml": POD, "job.yaml": KUBERNETES, "kubeflow.yaml": PYTORCHJOB, "batch.yaml": JOBSET_VOLCANO,
    "others.yaml": OTHERS, "crd.yaml": CRD, "interactive.yaml": INTERACTIVE,
}


@pytest.mark.parametrize("filename", sorted(YAML_SOURCES))
def test_yaml_documents_of_every_wrong_shape(filename: str) -> None:
    documents = [document for document in yaml.safe_load_all(YAML_SOURCES[filename]) if document is not None]
    count = 0
    for variant in variants(documents):
        load(filename, yaml.dump_all(variant, Dumper=DUMPER, sort_keys=False))
        count += 1
    assert count > 100


def test_rest_bodies_of_every_wrong_shape() -> None:
    body = json.loads(REST)
    body["masterSpec"] = body["spec"]
    body["assets"] = {"datasources": [{"id": "x", "kind": "pvc"}]}
    for variant in variants([body]):
        load("body.json", json.dumps(variant[0]))
    for variant in variants([json.loads(json.dumps(yaml.safe_load(KUBERNETES)))]):
        load("job.json", json.dumps(variant[0]))


@pytest.mark.parametrize("text", [
    "runai", "runai submit", "runai submit --", "runai submit -i", "runai training submit --gpu",
    "runai submit -g abc -e NOEQUALS -e =x --pvc --existing-pvc ,,, -v x --host-path == --label ,=, -- ",
    "runai submit --workers -3 --parallelism x --backoff-limit 1e9999 --termination-grace-period 5q",
    "runai submit-dist", "runai submit-dist --workers 2", "runai training x y z w v submit",
    "runai submit -i ${", "runai submit -i $", "runai submit --name=", "runai submit --ttl-after-finish=-5m",
    'runai submit -e "A=$((1+2))" -i "$(cat image.txt)" -- bash -c "python train.py',
    "X=1\nrunai submit -i $X$X ${X:-y} --pvc a:b:c:d:/e:ro",
])
def test_broken_command_lines(text: str) -> None:
    load("submit.sh", text + "\n", strict=False)


def test_non_map_documents() -> None:
    assert load("list.yaml", "- apiVersion: v1\n  kind: Pod\n") == []
    assert load("scalar.json", "42") == []
    assert load("empty.yaml", "---\n...\n") == []
    assert load("nulls.yaml", "apiVersion: v1\nkind: Pod\nmetadata: null\nspec: null\n") == []
