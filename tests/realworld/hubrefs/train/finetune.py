"""Supervised fine-tuning of a causal LM with LoRA adapters."""

import argparse
import os
import pickle

import torch
from datasets import load_dataset
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer

BASE_MODEL = "meta-llama/Llama-3.1-8B"
TOKENIZER_REVISION = "0e9e39f249a16976918f6564b8830bc894c89659"
JUDGE = "Skywork/Skywork-Reward-V2-Qwen3-8B"


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="Qwen/Qwen2.5-7B")
    parser.add_argument("--adapter", default=None)
    parser.add_argument("--data_dir", default="data/sft")
    parser.add_argument("--resume_dir", default=None)
    return parser.parse_args()


def load_model(args):
    tokenizer = AutoTokenizer.from_pretrained(BASE_MODEL, revision=TOKENIZER_REVISION)
    model = AutoModelForCausalLM.from_pretrained(
        BASE_MODEL,  # expect: SPK105
        torch_dtype=torch.bfloat16,
    )
    if args.adapter:
        model = PeftModel.from_pretrained(model, args.adapter)
    else:
        model = PeftModel.from_pretrained(model, "acme-research/llama-sft-lora")  # expect: SPK105
    reference = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    return tokenizer, model, reference


def load_judge():
    return AutoModelForCausalLM.from_pretrained(
        JUDGE,
        revision="main",
        trust_remote_code=True,  # expect: SPK106
    )


def load_data(args):
    local = load_dataset("json", data_files=os.path.join(args.data_dir, "train.jsonl"))
    mixed = load_dataset("HuggingFaceH4/ultrachat_200k", split="train_sft")  # expect: SPK105
    again = load_dataset("HuggingFaceH4/ultrachat_200k", split="test_sft")
    return local, mixed, again


def load_offline():
    return AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", local_files_only=True)


def resume(model, args):
    if args.resume_dir is None:
        return 0
    state = torch.load(os.path.join(args.resume_dir, "trainer_state.pt"), weights_only=False)  # expect: SPK107
    model.load_state_dict(state["model"])
    with open(os.path.join(args.resume_dir, "rng.pkl"), "rb") as handle:
        rng = pickle.load(handle)  # expect: SPK107
    torch.set_rng_state(rng["torch"])
    return state["step"]


def features_cache(path, rows):
    with open(path, "wb") as out:
        pickle.dump(rows, out)
    with open(path, "rb") as again:
        return pickle.load(again)


def load_tensors(ckpt_path):
    return torch.load(ckpt_path, map_location="cpu")


def load_cached_model(cache_dir):
    with open(os.path.join(cache_dir, "model.pkl"), "rb") as handle:
        return pickle.load(handle)  # expect: SPK107
