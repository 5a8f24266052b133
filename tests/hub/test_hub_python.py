"""SPK105/SPK106 on Python calls: literal ids fire at the first use, expressions and shas never."""

from __future__ import annotations

import pytest

from tests.hub.conftest import SHA
from tests.hub.conftest import found
from tests.hub.conftest import lint


@pytest.mark.parametrize("code, line", [
    ('from transformers import AutoModel\nm = AutoModel.from_pretrained("bert-org/bert-base")\n', 2),
    ('from transformers import AutoTokenizer\n\nt = AutoTokenizer.from_pretrained(\n    "Qwen/Qwen2.5-7B")\n', 4),
    ('from transformers import pipeline\np = pipeline("text-generation", model="openai-community/gpt2")\n', 2),
    ('from transformers import pipeline\np = pipeline("ner", "dslim/bert-base-NER")\n', 2),
    ('from sentence_transformers import SentenceTransformer\nm = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")\n', 2),
    ('import datasets\nd = datasets.load_dataset("HuggingFaceH4/ultrachat_200k", split="train_sft")\n', 2),
    ('from huggingface_hub import snapshot_download\nsnapshot_download(repo_id="meta-llama/Llama-3.1-8B")\n', 2),
    ('from huggingface_hub import hf_hub_download\nhf_hub_download("org/repo", "config.json")\n', 2),
    ('import timm\nm = timm.create_model("hf-hub:timm/vit_base_patch16_224.augreg_in21k", pretrained=True)\n', 2),
    ('import torch\nm = torch.hub.load("facebookresearch/dinov2", "dinov2_vits14")\n', 2),
    ('import torch\nm = torch.hub.load("pytorch/vision:v0.10.0", "resnet18")\n', 2),
    ('from peft import PeftModel\nm = PeftModel.from_pretrained(base, "tloen/alpaca-lora-7b")\n', 2),
    # a branch or tag revision moves
    ('from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", revision="main")\n', 2),
    ('from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", revision="v1.0")\n', 2),
    # a name bound to a literal in the same scope, and a module constant read in a function
    ('from transformers import AutoModel\ndef f():\n    name = "org/m"\n    return AutoModel.from_pretrained(name)\n', 4),
    ('from transformers import AutoModel\nBASE = "org/m"\ndef f():\n    return AutoModel.from_pretrained(BASE)\n', 4),
    ('from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", local_files_only=False)\n', 2),
])
def test_unpinned_literal_ids(code: str, line: int) -> None:
    assert found("train/load.py", code) == {(line, "SPK105")}


@pytest.mark.parametrize("code", [
    # local paths and checkout folders
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("./checkpoints/final")\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("/mnt/models/llama")\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("~/models/llama")\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("output/checkpoint-500")\n',
    'from datasets import load_dataset\nd = load_dataset("json", data_files="data/train.jsonl")\n',
    'from datasets import load_dataset\nd = load_dataset("data/my_corpus")\n',
    'from datasets import load_dataset\nd = load_dataset("csv", data_files={"train": "train.csv"})\n',
    # no organisation: not an ``org/name`` id
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("gpt2")\n',
    # expressions: a parameter, an attribute, an f-string, os.path.join, argparse
    'from transformers import AutoModel\ndef f(name):\n    return AutoModel.from_pretrained(name)\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained(args.model_name_or_path)\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained(f"{org}/model")\n',
    'import os\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained(os.path.join(root, "model"))\n',
    'import argparse\nfrom transformers import AutoModel\np = argparse.ArgumentParser()\n'
    'p.add_argument("--model_name_or_path", default="org/m")\nargs = p.parse_args()\n'
    'm = AutoModel.from_pretrained(args.model_name_or_path)\n',
    # a name rebound before the use
    'from transformers import AutoModel\nname = "org/m"\nname = resolve(name)\nm = AutoModel.from_pretrained(name)\n',
    # pinned: a sha literal, a sha constant, or an expression (it may be one)
    f'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", revision="{SHA}")\n',
    f'from transformers import AutoModel\nREV = "{SHA}"\nm = AutoModel.from_pretrained("org/m", revision=REV)\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", revision=args.revision)\n',
    f'import torch\nm = torch.hub.load("pytorch/vision:{SHA}", "resnet18")\n',
    'import torch\nm = torch.hub.load("hub/dir", "resnet18", source="local")\n',
    # offline, or **kwargs that may carry the revision
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", local_files_only=True)\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", **model_kwargs)\n',
    # not a hub call
    'import json\nx = json.load(open("org/m"))\n',
    'x = "meta-llama/Llama-3.1-8B"\n',
])
def test_near_misses(code: str) -> None:
    assert found("train/load.py", code) == set()


def test_one_finding_per_id_per_file_at_the_first_use() -> None:
    code = ('from transformers import AutoModel, AutoTokenizer\n'
            'tok = AutoTokenizer.from_pretrained("org/m")\n'
            'model = AutoModel.from_pretrained("org/m")\n'
            'other = AutoModel.from_pretrained("org/other")\n')
    assert found("train/load.py", code) == {(2, "SPK105"), (4, "SPK105")}


def test_remote_code_replaces_the_unpinned_finding_at_the_argument() -> None:
    code = ('from transformers import AutoConfig, AutoModel\n'
            'cfg = AutoConfig.from_pretrained("org/m")\n'
            'model = AutoModel.from_pretrained(\n'
            '    "org/m",\n'
            '    trust_remote_code=True,\n'
            ')\n')
    findings = lint("train/load.py", code)
    assert [(f.line, f.column, f.rule) for f in findings] == [(5, 5, "SPK106")]
    assert 'revision="<40-hex sha>"' in findings[0].message
    assert "model_info('org/m').sha" in findings[0].message


@pytest.mark.parametrize("code", [
    f'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", revision="{SHA}", trust_remote_code=True)\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("./vendored/model", trust_remote_code=True)\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", trust_remote_code=False, revision="'
    + SHA + '")\n',
])
def test_remote_code_pinned_or_local(code: str) -> None:
    assert found("train/load.py", code) == set()


@pytest.mark.parametrize("code", [
    'from transformers import Idefics2ForConditionalGeneration\n'
    'm = Idefics2ForConditionalGeneration.from_pretrained("acme/vision-chat", trust_remote_code=True)\n',
    'import transformers\nm = transformers.LlamaForCausalLM.from_pretrained("acme/llm", trust_remote_code=True)\n',
    'import transformers as tf\ntok = tf.PreTrainedTokenizerFast.from_pretrained("acme/llm", trust_remote_code=True)\n',
    'from transformers.models.llama import LlamaForCausalLM as Model\n'
    'm = Model.from_pretrained("acme/llm", trust_remote_code=True)\n',
])
def test_remote_code_on_a_class_transformers_ships_runs_no_hub_code(code: str) -> None:
    """The concrete class is transformers' own code: the flag has nothing to run, the id still moves."""
    assert found("train/load.py", code) == {(2, "SPK105")}


@pytest.mark.parametrize("code", [
    'from transformers import AutoModelForVision2Seq\n'
    'm = AutoModelForVision2Seq.from_pretrained("acme/vision-chat", trust_remote_code=True)\n',
    'from transformers import AutoModel as Loader\nm = Loader.from_pretrained("acme/llm", trust_remote_code=True)\n',
    'import transformers\ncfg = transformers.AutoConfig.from_pretrained("acme/llm", trust_remote_code=True)\n',
    'from transformers import pipeline\np = pipeline("text-generation", model="acme/llm", trust_remote_code=True)\n',
    'from datasets import load_dataset\nd = load_dataset("acme/corpus", trust_remote_code=True)\n',
    # a class from elsewhere (or defined here) may wrap an Auto class: still reported
    'from acme_models import ChatModel\nm = ChatModel.from_pretrained("acme/llm", trust_remote_code=True)\n',
    'from sentence_transformers import SentenceTransformer\n'
    'm = SentenceTransformer("acme/embedder", trust_remote_code=True)\n',
])
def test_remote_code_on_auto_classes_pipelines_and_datasets_fires(code: str) -> None:
    assert found("train/load.py", code) == {(2, "SPK106")}


def test_remote_code_flag_false_is_only_unpinned() -> None:
    code = 'from transformers import AutoModel\nm = AutoModel.from_pretrained("org/m", trust_remote_code=False)\n'
    assert found("train/load.py", code) == {(2, "SPK105")}


def test_a_folder_of_the_tree_is_local() -> None:
    code = 'from transformers import AutoModel\nm = AutoModel.from_pretrained("acme/tiny-bert")\n'
    assert found("train/load.py", code, {"acme/tiny-bert/config.json": "{}"}) == set()
    assert found("train/load.py", code) == {(2, "SPK105")}


def test_dataset_message_names_dataset_info() -> None:
    code = 'from datasets import load_dataset\nd = load_dataset("org/data")\n'
    (finding,) = lint("train/data.py", code)
    assert "dataset_info('org/data').sha" in finding.message
    assert "dataset" in finding.message


def test_unparsable_python_gives_no_crash() -> None:
    findings = lint("train/broken.py", 'AutoModel.from_pretrained("org/m"\n')
    assert all(f.rule not in ("SPK105", "SPK106") for f in findings)


@pytest.mark.parametrize("code", [
    # another service's ids and object-store URIs are not hub ids
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("s3://acme-models/llama")\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("gs://acme-models/llama")\n',
    'from huggingface_hub import snapshot_download\nsnapshot_download("bedrock/amazon.titan-embed-text-v2")\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("jumpstart/huggingface-llm-falcon-7b-bf16")\n',
    'from transformers import AutoModel\nm = AutoModel.from_pretrained("meta.llama3-8b-instruct-v1:0")\n',
    # a sentencepiece file of the checkout
    'from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained("tokenizers/spm.model")\n',
])
def test_other_services_and_files_are_not_hub_ids(code: str) -> None:
    assert found("train/load.py", code) == set()
