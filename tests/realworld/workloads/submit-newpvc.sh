#!/bin/bash
# YOLO fine-tune on node-local scratch that is deleted with the workload.
set -euo pipefail

# expect+8: SPK703
# expect+1: SPK504
runai training submit yolo-r1 \
  -p vision \
  -i harbor.example.org/vision/yolo:8.2.31 \
  -g 1 \
  --new-pvc claimname=yolo-r1-scratch,storageclass=local-path,size=50G,path=/runs,ephemeral \
  --working-dir /workspace \
  --termination-grace-period 10s \
  -e SEED=0 -e GIT_SHA=1a2b3c4 -e DATASET_VERSION=coco-2017 \
  -- python -u tools/train.py --checkpoint-dir /runs/yolo-r1 --save-every 5 --resume-from /runs/yolo-r1/last.pt  # expect: SPK301
