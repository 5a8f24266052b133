#!/usr/bin/env bash
# Single-node SFT with accelerate; run inside the container on the GPU box.
export ACCELERATE_LOG_LEVEL=info
OUT_DIR=/mnt/ckpt/sft-$(date +%Y-%m-%d_%H-%M)  # expect: SPK406
mkdir -p "$OUT_DIR"

# expect+1: SPK501   expect+4: SPK105
accelerate launch --config_file configs/accelerate_fsdp.yaml \
    --num_processes 8 \
    train_sft.py \
    --model_name_or_path mistralai/Mistral-7B-v0.1 \
    --output_dir "$OUT_DIR" \
    --save_steps 500 \
    --report_to wandb 2>&1 | tee "$OUT_DIR/train.log"
