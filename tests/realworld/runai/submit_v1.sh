#!/bin/bash
# Nightly BERT fine-tune with the legacy CLI (runai < 2.13).
set -e

PROJECT=nlp
JOB=bert-ft-$(date +%Y%m%d)  # expect: SPK406
IMAGE=harbor.example.org/nlp/bert-ft:1.4.2

# expect+8: SPK202
# expect+1: SPK405
runai submit "$JOB" \
  -p "$PROJECT" \
  -i "$IMAGE" \
  -g 1 \
  --pvc nlp-ckpt:/ckpt \
  -e WANDB_PROJECT=bert-ft \
  -e WANDB_API_KEY=2fc7cdace1eefac153cd247572fdc26f33a6c39b \
  --backoff-limit 2 \
  --command -- python train.py --output_dir "/ckpt/$JOB" --save_steps 1000 --seed 42
