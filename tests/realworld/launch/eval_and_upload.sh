#!/bin/sh
# Evaluate the last checkpoint and push the scores; tokens come from the environment.
set -eu

huggingface-cli login --token "$HF_TOKEN"
curl -sSfL -H "Authorization: Bearer ${HF_TOKEN}" https://huggingface.co/api/whoami-v2 > /dev/null
wandb login df6c097c4489c5226cf9a9dba1abbabf2374fdfa  # expect: SPK203

python -u eval.py --ckpt /mnt/ckpt/llama-pretrain-r3/step-20000 | tee eval.log  # expect: SPK501
