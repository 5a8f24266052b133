"""SPK105/SPK106 in run configs (YAML, JSON, TOML): hub ids under known keys, sibling revisions."""

from __future__ import annotations

import pytest

from tests.hub.conftest import SHA
from tests.hub.conftest import found
from tests.hub.conftest import lint


@pytest.mark.parametrize("filename, text, line", [
    ("recipes/sft.yaml", "model_name_or_path: mistralai/Mistral-7B-v0.1\nlearning_rate: 2.0e-5\n", 1),
    ("recipes/sft.yaml", "torch_dtype: bfloat16\nmodel_name_or_path: org/m\nmodel_revision: main\n", 2),
    ("axolotl/lora.yml", "base_model: NousResearch/Llama-2-7b-hf\nadapter: lora\n", 1),
    ("configs/data.yaml", "dataset_name: HuggingFaceH4/ultrachat_200k\n", 1),
    ("configs/eval.yaml", "tasks:\n  - hf_path: cais/mmlu\n", 2),
    ("configs/train.yaml", "model:\n  name: meta-llama/Llama-3.1-8B\n  dtype: bf16\n", 2),
    ("configs/tok.yaml", "tokenizer_name: EleutherAI/gpt-neox-20b\n", 1),
    ("configs/sft.json", '{\n  "model_name_or_path": "org/m",\n  "output_dir": "/ckpt/run"\n}\n', 2),
    ("configs/train.toml", '[model]\nname = "org/m"\nflavor = "8B"\n', 2),
])
def test_unpinned_config_ids(filename: str, text: str, line: int) -> None:
    assert found(filename, text) == {(line, "SPK105")}


@pytest.mark.parametrize("filename, text", [
    ("recipes/sft.yaml", f"model_name_or_path: org/m\nmodel_revision: {SHA}\n"),
    ("recipes/sft.yaml", f"model_name_or_path: org/m\nrevision: {SHA}\n"),
    ("recipes/sft.yaml", f"dataset_name: org/d\ndataset_revision: {SHA}\n"),
    ("recipes/sft.yaml", "model_name_or_path: ./checkpoints/base\n"),
    ("recipes/sft.yaml", "model_name_or_path: /models/llama-3-8b\n"),
    ("recipes/sft.yaml", "model_name_or_path: ${oc.env:MODEL}\n"),
    ("recipes/sft.yaml", "model_name_or_path: gpt2\n"),
    ("recipes/sft.yaml", "model_name_or_path: null\n"),
    ("recipes/sft.yaml", "output_dir: org/m\n"),  # not a hub key
    ("recipes/sft.yaml", "dataset_name: data/local_corpus\n"),
    ("configs/train.yaml", "trainer:\n  name: org/m\n"),  # `name` counts only under `model`
    # a Kubernetes object is a workload, not a run config
    ("k8s/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  model_name_or_path: org/m\n"),
])
def test_config_near_misses(filename: str, text: str) -> None:
    assert found(filename, text) == set()


def test_trust_remote_code_key_replaces_the_unpinned_finding() -> None:
    text = "model_name_or_path: org/m\ntrust_remote_code: true\ndataset_name: org/d\n"
    findings = lint("recipes/sft.yaml", text)
    assert {(f.line, f.rule) for f in findings} == {(2, "SPK106"), (3, "SPK105")}
    spk106 = next(f for f in findings if f.rule == "SPK106")
    assert "model_revision: <40-hex sha>" in spk106.message


@pytest.mark.parametrize("text", [
    f"model_name_or_path: org/m\nmodel_revision: {SHA}\ntrust_remote_code: true\n",
    "model_name_or_path: ./vendored\ntrust_remote_code: true\n",
])
def test_trust_remote_code_pinned_or_local(text: str) -> None:
    assert found("recipes/sft.yaml", text) == set()


def test_trust_false_leaves_spk105() -> None:
    assert found("recipes/sft.yaml", "model_name_or_path: org/m\ntrust_remote_code: false\n") == {(1, "SPK105")}


def test_one_finding_per_id_per_file() -> None:
    text = "model_name_or_path: org/m\ntokenizer_name: org/m\nref:\n  base_model: org/m\n"
    assert found("recipes/sft.yaml", text) == {(1, "SPK105")}


def test_short_sha_is_named_as_such() -> None:
    (finding,) = lint("examples/qlora.yaml", "base_model: org/m\nrevision_of_model: 6299b5a\n")
    assert (finding.line, finding.rule) == (1, "SPK105")
    assert "abbreviated sha" in finding.message


def test_push_branch_is_not_the_model_revision() -> None:
    (finding,) = lint("recipes/sft.yaml", "model_name_or_path: org/m\nhub_model_revision: v1.0\n")
    assert "no commit is pinned" in finding.message


def test_axolotl_revision_of_model_pins() -> None:
    assert found("examples/qlora.yaml", f"base_model: org/m\nrevision_of_model: {SHA}\n") == set()
