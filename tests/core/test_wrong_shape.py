"""Documents of the wrong shape are skipped quietly: no crash, no internal error, no SPK001.

Hand-written shapes first, then a mutation sweep: every map and list of the catalog's realistic
examples is replaced in turn by a number, a string, null, an empty list, a list of nulls and an
empty map, and every document must still be checked without an internal error.
"""

from __future__ import annotations

import copy
import json
from datetime import date
from typing import Any
from typing import Iterator

import pytest
import yaml

from spikelint.catalog import load_catalog
from spikelint.config import Config
from spikelint.documents import parse_text
from spikelint.engine import Engine
from spikelint.engine import lint_snippet
from spikelint.files import detect_kind
from spikelint.model import SourceFile
from spikelint.discovery.project import Project

REPLACEMENTS: tuple[Any, ...] = (5, "x", None, [], [None, 3, "y"], {})

SHAPES = {
    "job-spec-number.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec: 3\n",
    "job-containers-number.yaml": "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers: 5\n",
    "job-containers-junk.yaml": """apiVersion: batch/v1
kind: Job
metadata: {name: a, annotations: [x], labels: 5}
spec:
  backoffLimit: many
  ttlSecondsAfterFinished: [1]
  template:
    metadata: 3
    spec:
      restartPolicy: [Never]
      terminationGracePeriodSeconds: {a: 1}
      volumes: [null, 3, {name: [x]}, {name: d, persistentVolumeClaim: 5}, {name: e, emptyDir: null}]
      initContainers: {a: 1}
      containers:
        - null
        - 3
        - "string"
        - {image: null}
        - {image: [1, 2]}
        - {image: {a: b}, env: 5}
        - {name: [x], env: [null, 3, {name: 3}, {name: A, valueFrom: 5}, {value: x}]}
        - {volumeMounts: "x", command: 5, args: {a: 1}}
        - {volumeMounts: [null, {mountPath: 5}, {name: 3, mountPath: /out}], resources: {limits: 5}}
        - {resources: {limits: {nvidia.com/gpu: [1]}, requests: null}, workingDir: [1]}
""",
    "job-nulls.yaml": "apiVersion:\nkind:\nmetadata:\nspec:\n",
    "list-of-nulls.yaml": "- null\n- null\n- ~\n",
    "scalars.yaml": "3\n---\nhello\n---\n[1, 2]\n",
    "kind-list.yaml": "apiVersion: v1\nkind: List\nitems: 5\n---\napiVersion: v1\nkind: List\nitems: [null, 3, {kind: Job}]\n",
    "kind-number.yaml": "apiVersion: 3\nkind: [Job]\nspec: {}\n",
    "pytorchjob.yaml": """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  runPolicy: 5
  elasticPolicy: [1]
  pytorchReplicaSpecs:
    Master: 5
    Worker: {replicas: many, restartPolicy: 3, template: null}
    Other: {replicas: 2, template: {spec: {containers: [{image: "x:latest", resources: 7}]}}}
""",
    "jobset.yaml": """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: j}
spec:
  failurePolicy: {maxRestarts: [1]}
  replicatedJobs: [null, 5, {name: w, replicas: x, template: 5}, {template: {spec: {template: {spec: 3}}}}]
""",
    "runai.yaml": """apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata: {name: t}
spec:
  image: {value: [1]}
  gpu: {value: abc}
  environment: {items: 5}
  pvcs: {items: {a: 3, b: {value: 5}}}
  command: {value: null}
  args: 5
  preemptible: {value: [true]}
""",
    "runai-distributed.yaml": """apiVersion: run.ai/v2alpha1
kind: DistributedWorkload
metadata: {name: d}
spec:
  jobType: 5
  workers: {value: many}
  master: [1]
  image: 7
""",
    "rest.json": '{"name": "x", "projectId": "1", "clusterId": "c", "spec": 5}',
    "rest2.json": '{"name": "x", "projectId": "1", "clusterId": "c", "spec": {"compute": 5, "image": [1],'
                  ' "environmentVariables": 5, "storage": {"pvc": 3, "dataSource": [null]}, "command": {},'
                  ' "args": 7, "restartPolicy": [], "distributed": "yes"}}',
    "top-list.json": "[null, 1, {\"kind\": 5}]",
    "hf-args.json": '{"output_dir": 5, "save_steps": [1], "resume_from_checkpoint": {}, "seed": null,'
                    ' "logging_dir": [null]}',
    "values.yaml": "image: 5\nsidecar: {image: {repository: [1], tag: {a: 1}}}\nimages: null\n",
    "kustomization.yaml": "images: 5\n---\nkind: Kustomization\nimages: [null, {name: 3, newTag: [1]}, {newTag: x}]\n",
    "config.toml": "[training]\ncheckpoint = 5\noutput_dir = [1, 2]\nseed = {a = 1}\n[[job]]\n[[job]]\nx = 1\n",
    "nb.ipynb": '{"cells": [5, null, {"cell_type": 3, "source": 7, "outputs": 5},'
                ' {"cell_type": "code", "source": [1, null, "x = 1"], "outputs": [null, 3, {"output_type": 5},'
                ' {"output_type": "stream", "text": 5}, {"output_type": "error", "evalue": [], "traceback": 3},'
                ' {"output_type": "execute_result", "data": 5}, {"output_type": "display_data", "data":'
                ' {"text/plain": 5}}]}], "nbformat": "four", "metadata": 3}',
    "train.py": "import torch\ntorch.save()\ntorch.save(*a)\ntorch.save(**k)\ntorch.save({}, )\n"
                "torch.save({**state}, path)\ntorch.save({1: 2, None: 3}, p)\nsave = torch.save\nsave(m, 'x')\n",
    "run.sh": "runai submit\nrunai submit --gpu\nrunai submit -i\nrunai training submit x --environment\n"
              "runai submit x -e =\ntorchrun\npython -u\nexport\nset -o\n",
    "Dockerfile": "ARG A=\nFROM ${X:-}\nFROM $\nENV A\nCOPY --from= . .\nRUN --mount=type=secret true\n"
                  "FROM ${A}${B:+x}@\nCOPY --from=${A} . .\n",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_wrong_shapes_are_skipped_quietly(name: str) -> None:
    findings = lint_snippet(name, SHAPES[name])  # raises on any internal error
    assert all(finding.rule not in ("SPK001",) for finding in findings if not name.endswith(".ipynb")), findings


# --------------------------------------------------------------------------- mutation sweep


def examples() -> Iterator[tuple[str, str, str]]:
    """(id, filename, text) of every YAML and JSON example in the catalog."""
    for rule_id, rule in sorted(load_catalog().items()):
        for side in ("bad", "good"):
            text = rule.examples.get(side)
            name = rule.examples.get(f"{side}_filename") or rule.examples.get("filename")
            if isinstance(text, str) and isinstance(name, str) and name.endswith((".yaml", ".yml", ".json")):
                yield f"{rule_id}-{side}", name, text


def containers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of every map and list (and every value under a map key) in plain data."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield path + (key,)
            yield from containers(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            if isinstance(child, (dict, list)):
                yield path + (index,)
                yield from containers(child, path + (index,))


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    copied = copy.deepcopy(document)
    target = copied
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copied


def mutants(name: str, text: str) -> Iterator[str]:
    try:
        if name.endswith(".json"):
            documents = [json.loads(text)]
        else:
            documents = [document for document in yaml.safe_load_all(text) if document is not None]
    except (ValueError, yaml.YAMLError):  # the SPK001/SPK003 examples do not parse on purpose
        return
    for index, document in enumerate(documents):
        for path in containers(document):
            for value in REPLACEMENTS:
                changed = replaced(document, path, value)
                everything = documents[:index] + [changed] + documents[index + 1:]
                if name.endswith(".json"):
                    yield json.dumps(changed, indent=1)
                else:
                    yield yaml.safe_dump_all(everything, sort_keys=False)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.create(Config(), today=date(2026, 6, 1))


@pytest.mark.parametrize(("name", "text"), [pytest.param(name, text, id=ident) for ident, name, text in examples()])
def test_every_mutation_of_a_realistic_example_is_checked_without_error(engine: Engine, name: str, text: str) -> None:
    source = SourceFile(name, name, detect_kind(name))
    failures = []
    count = 0
    for mutant in mutants(name, text):
        count += 1
        document = parse_text(source, mutant)
        result = engine.check_document(document, Project([source], {name: document}))
        if result.internal_errors or any(f.rule == "SPK001" for f in result.findings):
            failures.append((result.internal_errors, mutant))
    assert not failures, f"{len(failures)} of {count} mutants failed; first: {failures[0][0]}\n{failures[0][1]}"
