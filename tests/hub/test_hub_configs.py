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


# --------------------------------------------------------------------------- another vendor's model names


@pytest.mark.parametrize("text", [
    # a sibling key names the service the name belongs to
    "model_name_or_path: nova-lite/prod\nmodel_type: amazon.nova-lite-v1:0\n",
    "provider: bedrock\nbase_model: acme-team/claims-v2\n",
    "platform: sagemaker-jumpstart\nmodel_name_or_path: acme-team/claims-v2\n",
    "llm_provider: openai\ntokenizer_name: acme-team/router\n",
    # an ancestor key does, for everything under it
    "model_type: amazon.nova-micro-v1:0\ntraining:\n  model:\n    name: nova-micro/ft\n  dataset_name: acme-team/tickets\n",
    "judge:\n  provider: azure-openai\n  model:\n    name_or_path: acme-team/judge\n",
    # a section named after the service
    "bedrock:\n  base_model: acme-team/claims-v2\n",
    # another service's id shapes and object-store URIs
    "model_name_or_path: bedrock/meta.llama3-8b-instruct-v1\n",
    "model_name_or_path: us.anthropic.claude-3-haiku-20240307-v1:0\n",
    "base_model: jumpstart/huggingface-llm-falcon-7b-bf16\n",
    "model_name_or_path: s3://acme-models/llama/\n",
    "model_name_or_path: gs://acme-models/llama\n",
    "dataset_name: az://acme-data/tickets\n",
])
def test_another_services_model_names_are_not_hub_ids(text: str) -> None:
    assert found("configs/finetune.yaml", text) == set()


@pytest.mark.parametrize("text, line", [
    # a Hugging Face model type (run_clm's --model_type) says nothing about another service
    ("model_type: openai-gpt\nmodel_name_or_path: acme-team/gpt-small\n", 2),
    ("model_type: llama\nmodel_name_or_path: acme-team/llama-small\n", 2),
    # a service named in a sibling map does not cover this one
    ("judge:\n  provider: openai\n  model: gpt-4o\npolicy:\n  model_name_or_path: acme-team/policy\n", 5),
    # the HF org that shares a vendor's name is still a hub id
    ("model_name_or_path: openai/whisper-small\n", 1),
])
def test_hub_ids_beside_words_that_are_not_another_service(text: str, line: int) -> None:
    assert found("configs/finetune.yaml", text) == {(line, "SPK105")}


# --------------------------------------------------------------------------- nested layouts and added keys


@pytest.mark.parametrize("text, line", [
    ("model:\n  name_or_path: acme-team/base-7b\n  revision: main\n", 2),
    ("model:\n  pretrained_model_name_or_path: acme-team/base-7b\n  dtype: bf16\n", 2),
    ("model:\n  name: acme-team/base-7b\n  revision: v1.0\n", 2),
    ("dataset:\n  name: acme-team/tickets\n  split: train\n", 2),
    ("datasets:\n  - name: acme-team/tickets\n    split: train\n    streaming: true\n", 2),
    ("tokenizer: acme-team/base-7b-tok\nseq_len: 4096\n", 1),
    ("initialize_from_hf: acme-team/base-7b\n", 1),
    ("initialize_from_hf: acme-team/base-7b@main\n", 1),
    ("hf_dataset_name: acme-team/tickets\n", 1),
])
def test_nested_and_added_keys_fire(text: str, line: int) -> None:
    assert found("configs/train.yaml", text) == {(line, "SPK105")}


@pytest.mark.parametrize("text", [
    f"model:\n  name_or_path: acme-team/base-7b\n  revision: {SHA}\n",
    f"model:\n  name: acme-team/base-7b\n  revision: {SHA}\n",
    f"dataset:\n  name: acme-team/tickets\n  split: train\n  revision: {SHA}\n",
    f"initialize_from_hf: acme-team/base-7b@{SHA}\n",
    "initialize_from_hf: true\n",
    # a dataset section that is not load_dataset's arguments
    "dataset:\n  name: acme-team/tickets\n  format: jsonl\n",
    # a tokenizer file of the checkout, not a hub id
    "tokenizer: tokenizers/spm.model\n",
    "tokenizer: gpt2\n",
    "tokenizer:\n  name: acme-team/base-7b-tok\n",  # `name` counts under `model` and a load_dataset-shaped dataset
])
def test_nested_and_added_keys_near_misses(text: str) -> None:
    assert found("configs/train.yaml", text) == set()


def test_nested_message_names_the_section() -> None:
    (finding,) = lint("configs/train.yaml", "model:\n  name_or_path: acme-team/base-7b\n  revision: main\n")
    assert finding.message.startswith("model.name_or_path fetches the model 'acme-team/base-7b'")
    assert "'main' is a branch or tag" in finding.message
    (finding,) = lint("configs/train.yaml", "dataset:\n  name: acme-team/tickets\n  split: train\n")
    assert finding.message.startswith("dataset.name fetches the dataset 'acme-team/tickets'")


@pytest.mark.parametrize("filename, text, fix", [
    ("configs/train.yaml", "initialize_from_hf: acme-team/base-7b\n", "write it as acme-team/base-7b@<40-hex sha>"),
    ("configs/train.yaml", "initialize_from_hf: acme-team/base-7b@main\n",
     "write it as acme-team/base-7b@<40-hex sha>"),
    # Levanter hands `data.tokenizer` to AutoTokenizer with no revision: no key beside it would pin it
    ("configs/train.yaml", "data:\n  tokenizer: acme-team/base-7b-tok\n", "point it at a copy downloaded at a "
                                                                          "pinned commit"),
    ("recipes/sft.yaml", "model_name_or_path: acme-team/base-7b\n", "set model_revision: <40-hex sha>"),
    ("configs/tok.yaml", "tokenizer_name: acme-team/base-7b-tok\n", "set model_revision: <40-hex sha>"),
])
def test_the_fix_is_in_the_keys_own_terms(filename: str, text: str, fix: str) -> None:
    (finding,) = lint(filename, text)
    assert f" — {fix}" in finding.message


def test_a_flag_that_takes_the_revision_in_its_value() -> None:
    (finding,) = lint("launch.sh", "#!/bin/bash\npython -m levanter.main.train_lm --initialize_from_hf acme-team/m\n")
    assert " — write it as acme-team/m@<40-hex sha>" in finding.message
