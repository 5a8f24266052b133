#!/bin/bash
# Multi-node pretraining: run the same script on every node with NODE_RANK set.
set -euo pipefail

: "${NNODES:=2}"
: "${NODE_RANK:?set NODE_RANK}"
: "${MASTER_ADDR:?set MASTER_ADDR}"
RUN_NAME=${RUN_NAME:-llama-pretrain-r3}
CKPT=/mnt/ckpt/${RUN_NAME}
export PYTHONUNBUFFERED=1
export HF_TOKEN_PATH=/run/secrets/hf_token

mkdir -p "$CKPT/logs"
torchrun --nnodes="$NNODES" --node_rank="$NODE_RANK" --nproc_per_node=8 \
  --master_addr="$MASTER_ADDR" --master_port=29500 \
  pretrain.py --checkpoint-dir "$CKPT" --save-interval 1000 --resume-from "$CKPT/latest" \
  2>&1 | tee -a "$CKPT/logs/node-${NODE_RANK}.log"

if [ "$NODE_RANK" = 0 ]; then
  python tools/summarize.py --run "$CKPT" > "$CKPT/summary.txt"
fi
