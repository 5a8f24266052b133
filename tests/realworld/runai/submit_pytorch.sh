#!/bin/bash
# DPO on 4 nodes x 8 GPUs with the v2 CLI's PyTorch framework.
set -euo pipefail

# expect+5: SPK102
# (-g 8 is SPK701's only when max_gpus is configured)
# expect+1: SPK405
runai training pytorch submit llm-dpo \
  -p llm \
  -i nvcr.io/nvidia/pytorch:24.05-py3 \
  -g 8 \
  --workers 3 \
  --backoff-limit 2 \
  --existing-pvc claimname=llm-ckpt,path=/ckpt \
  -e HF_HUB_ENABLE_HF_TRANSFER=1 \
  -e HF_TOKEN=SECRET:hf-token,token \
  --command -- bash -c "accelerate launch --num_processes 32 dpo.py --output_dir /ckpt/llm-dpo --save_steps 200 --logging_dir /ckpt/llm-dpo/logs >> /ckpt/llm-dpo/train.log 2>&1"  # expect: SPK503
