#!/bin/bash
# Nightly smoke training; IMAGE and RUN can be overridden from CI.
set -euo pipefail

IMAGE="${IMAGE:-harbor.example.org/ml/trainer:main}"
RUN="${RUN:-nightly-smoke}"

# expect+3: SPK104
runai training submit "$RUN" \
  -p ml \
  -i "$IMAGE" \
  --existing-pvc claimname=ml-ckpt,path=/ckpt \
  --environment-variable SEED=0 \
  --environment-variable GIT_SHA="$(git rev-parse --short HEAD)" \
  --environment-variable DATASET_VERSION=tiny-v1 \
  --backoff-limit 0 \
  -- python -u train.py --max-steps 50 --checkpoint-dir "/ckpt/$RUN" --resume-from "/ckpt/$RUN/last.pt" --log-dir "/ckpt/$RUN/logs"
