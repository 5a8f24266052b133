#!/bin/bash
set -euo pipefail
# Scratch box for data inspection (a workspace, not a training run).
# expect+3: SPK102,SPK103
runai workspace submit inspect-laion \
  -p vision \
  -i ubuntu:22.04 \
  --existing-pvc claimname=laion,path=/data \
  -- sleep infinity
