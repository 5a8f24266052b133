"""Bad input never crashes the workload rules: every value of real workloads replaced by the wrong shape."""

from __future__ import annotations

import copy
import json
from typing import Any
from typing import Iterator

import pytest
import yaml

from spikelint.engine import lint_snippet
from spikelint.model import Finding
from tests.workload_rules.conftest import WORKLOAD_RULES
from tests.workload_rules.conftest import lint
from tests.workload_rules.test_four_forms import CRD_BAD
from tests.workload_rules.test_four_forms import K8S_BAD
from tests.workload_rules.test_four_forms import REST_BAD

WRONG = [None, [], {}, 7, "x y", [None], {"value": None}, True]


def sane(filename: str, text: str) -> list[Finding]:
    """Lint (an internal error raises) and check what came out: selected rules on lines the file has."""
    findings = lint(filename, text)
    last = text.count("\n") + 1
    for finding in findings:
        assert finding.path == filename and 1 <= finding.line <= last, finding
        assert finding.rule.startswith("SPK00") or finding.rule.startswith(tuple(WORKLOAD_RULES)), finding
    return findings


def paths_of(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from paths_of(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from paths_of(value, prefix + (index,))


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    result = copy.deepcopy(data)
    holder = result
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return result


def variants(text: str, loads: Any) -> Iterator[Any]:
    data = loads(text)
    for index, path in enumerate(paths_of(data)):
        yield replaced(data, path, WRONG[index % len(WRONG)])
        yield replaced(data, path, WRONG[(index + 3) % len(WRONG)])


@pytest.mark.parametrize("name,text", [("k8s/job.yaml", K8S_BAD), ("runai/crd.yaml", CRD_BAD)], ids=["kubernetes", "runai-crd"])
def test_yaml_workloads_of_the_wrong_shape_never_crash(name: str, text: str) -> None:
    for data in variants(text, yaml.safe_load):
        sane(name, yaml.safe_dump(data))


def test_rest_workloads_of_the_wrong_shape_never_crash() -> None:
    for data in variants(REST_BAD, json.loads):
        sane("runai/rest.json", json.dumps(data))


CONFIG = {
    "ckpt_path": "last",
    "output_dir": "/ckpt/${run_name}",
    "run_name": "${now:%Y}",
    "checkpoint": {"dirpath": "${output_dir}/c", "every_n_train_steps": 5, "enable_checkpoint": True},
    "trainer": {"callbacks": [{"class_path": "x.ModelCheckpoint", "init_args": {"save_weights_only": True}}]},
    "hydra": {"run": {"dir": "${now:%H}"}},
}


def test_run_configs_of_the_wrong_shape_never_crash() -> None:
    for data in variants(json.dumps(CONFIG), json.loads):
        sane("configs/run.yaml", yaml.safe_dump(data))
        sane("configs/run.json", json.dumps(data))


@pytest.mark.parametrize("text", [
    "bash -c 'unterminated\n",
    "runai training submit x -- bash -c\n",
    "python train.py --output_dir\n",
    "OUT=$(date\ncd\ncd $UNKNOWN && python t.py --output_dir x > y\n",
    "runai submit --workers -- torchrun --nnodes --output_dir=\n",
    "A=${A}${A}\npython t.py --output_dir $A --resume auto\n",
    "if [ \"$RANK\" = 0 ; then\n python t.py | tee\nfi\n",
])
def test_odd_scripts_never_crash(text: str) -> None:
    sane("scripts/run.sh", "#!/bin/bash\n" + text)


@pytest.mark.parametrize("text", [
    "import torch\ntorch.save(*args)\n",
    "import torch\ntorch.save(**kwargs)\n",
    "import torch\nstate = {}\nstate[0] = 1\ntorch.save(state, p)\n",
    "from torch import save\nsave({'model': m.state_dict()}, p)\n",
    "import torch\ndef f():\n    s = {**other, 'model': m.state_dict()}\n    torch.save(s, p)\n",
    "import torch\nx = lambda: torch.save({'model': m.state_dict()}, p)\n",
])
def test_odd_python_never_crashes(text: str) -> None:
    sane("train.py", text)


def test_a_long_argument_is_read_in_linear_time() -> None:
    """One 200 KB word in a command (a JSON blob, a base64 payload) once took minutes in the
    config-file pattern of SPK604; it must take about as long as reading it."""
    import time

    word = "a" * 200_000
    text = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: c\n          image: c:1.0.0\n"
            f"          command: [python, train.py, --blob, {word}, --config, {word}.yaml]\n")
    started = time.perf_counter()
    findings = lint_snippet("job.yaml", text, {"select": ["SPK604"], "required_run_identity": ["seed"]})
    assert time.perf_counter() - started < 10  # quadratic: ~minutes; linear: well under a second
    assert [finding.rule for finding in findings] == ["SPK604"]
