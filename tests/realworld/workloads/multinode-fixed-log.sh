#!/bin/bash
# Run on both nodes (NODE_RANK=0/1); logs go to the shared NFS home.
set -euo pipefail
torchrun --nnodes=2 --nproc_per_node=8 --node_rank="${NODE_RANK}" --master_addr="${MASTER_ADDR}" --master_port=29500 \
  train.py --config configs/base.yaml 2>&1 | tee -a /nfs/home/bob/logs/train.log  # expect: SPK503
