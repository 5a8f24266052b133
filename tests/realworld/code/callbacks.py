"""Experiment tracking set-up shared by the training scripts."""

import os

import wandb

os.environ["WANDB_API_KEY"] = "df6c097c4489c5226cf9a9dba1abbabf2374fdfa"  # expect: SPK201
os.environ.setdefault("WANDB_PROJECT", "llm-sft")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def init_tracking(run_name: str, config: dict) -> None:
    wandb.login(key=os.environ.get("WANDB_API_KEY"))
    wandb.init(project=os.environ["WANDB_PROJECT"], name=run_name, config=config, resume="allow", id=run_name)


def hub_token() -> str:
    return os.getenv("HF_TOKEN", "")
