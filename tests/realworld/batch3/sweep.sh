#!/bin/bash
# Learning-rate sweep on one 8-GPU box: one run per GPU, in the background.
set -e
mkdir -p logs
gpu=0
for lr in 1e-4 3e-4 1e-3 3e-3; do
  CUDA_VISIBLE_DEVICES=$gpu python train.py --lr "$lr" --output_dir "/mnt/ckpt/sweep/lr-$lr" --save_steps 1000 > "logs/lr-$lr.log" 2>&1 &  # expect: SPK502
  gpu=$((gpu + 1))
done
wait
