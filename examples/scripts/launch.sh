#!/usr/bin/env bash
# Submit the sweep to the cluster and keep a local copy of the evaluation log.
set -eu

IMAGE=harbor.example.org/nlp/bert-ft:v1.4.2@sha256:1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c

runai training submit bert-sweep-lr3e5 \
  --project nlp-team \
  --image "$IMAGE" \
  --gpu-devices-request 1 \
  --existing-pvc claimname=nlp-checkpoints,path=/checkpoints \
  --env-secret WANDB_API_KEY=wandb-credentials,api-key \
  --backoff-limit 2 \
  -- python -u train.py --output_dir /checkpoints/sweep --save_steps 500 \
     --resume_from_checkpoint /checkpoints/sweep/last --seed 11

python evaluate.py --checkpoint /checkpoints/sweep/last | tee eval.log
