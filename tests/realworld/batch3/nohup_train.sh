#!/bin/bash
# Detached single-GPU run on the workstation.
set -euo pipefail
RUN=bert-base-r9
nohup python -u train.py --output_dir "/data/runs/$RUN" --save_steps 500 --seed 9 > "/data/runs/$RUN.log" 2>&1 &
echo "started $RUN (pid $!)"
