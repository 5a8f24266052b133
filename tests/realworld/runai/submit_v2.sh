#!/usr/bin/env bash
# Vision team: ViT-B/16 fine-tune on the v2 CLI (runai >= 2.18).  Saved on Windows (CRLF).
set -euo pipefail

RUN_ID=${RUN_ID:-vit-b16-r7}

runai training submit "${RUN_ID}" \
  --project vision \
  --image harbor.example.org/vision/vit:2.0.0@sha256:2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6 \
  --gpu-devices-request 1 \
  --existing-pvc claimname=vision-ckpt,path=/ckpt \
  --env-secret WANDB_API_KEY=wandb,key=api-key \
  --environment-variable PYTHONUNBUFFERED=1 \
  --environment-variable GIT_COMMIT="$(git rev-parse HEAD)" \
  --working-dir /workspace \
  --backoff-limit 3 \
  --termination-grace-period 5m \
  --auto-deletion-time-after-completion 24h \
  -- python train.py fit --config configs/vit_b16.yaml
