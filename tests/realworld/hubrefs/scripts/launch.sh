#!/usr/bin/env bash
set -euo pipefail

MODEL=mistralai/Mistral-7B-v0.1
OUT=/mnt/ckpt/sft-${RUN_ID}  # expect+4: SPK105

torchrun --nproc_per_node 8 train/finetune.py \
    --model_name_or_path "$MODEL" \
    --dataset_name HuggingFaceH4/ultrachat_200k \
    --output_dir "$OUT" --save_steps 500 \
    --trust_remote_code  # expect: SPK106

torchrun --nproc_per_node 8 train/finetune.py \
    --model_name_or_path "$MODEL" \
    --output_dir "$OUT/stage2" --save_steps 500

torchrun --nproc_per_node 8 train/finetune.py \
    --model_name_or_path Qwen/Qwen2.5-7B \
    --model_revision a09a35458c702b33eeacc393d103063234e8bc28 \
    --output_dir "$OUT/qwen" --save_steps 500

torchrun --nproc_per_node 8 train/finetune.py \
    --model_name_or_path "$BASE_CHECKPOINT" \
    --output_dir "$OUT/cont" --save_steps 500
