#!/usr/bin/env bash
# The prepared GPU verification of `spikelint smoke` (run once on a machine with NVIDIA GPUs,
# from the repository root, with torch built for CUDA importable): the default CUDA run, the same
# under torch.distributed with NCCL when two GPUs are present, user jobs through --job (one with
# DataLoader workers under SIGTERM, one that forgets its EMA), every run in a fresh interpreter,
# and the example train.py through --cmd.
# Summaries (JSON) and progress logs go to the folder given as $1 (default ./gpu-check).
set -uo pipefail
out=${1:-./gpu-check}
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD:$PWD/tests/smoke"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpus.csv" 2>&1
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count())" > "$out/torch.txt" 2>&1

run() {  # name, then smoke options
  local name=$1; shift
  local started=$SECONDS
  python -m spikelint smoke --device cuda --format json --run-dir "$out/run-$name" "$@" \
    > "$out/$name.json" 2> "$out/$name.log"
  echo "$name: exit $? in $((SECONDS - started)) s" | tee -a "$out/results.txt"
}

run default
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  run nproc2 --nproc 2
fi
run job-verified --job user_jobs:minimal
run job-no-optimizer --job user_jobs:without_optimizer
run job-loader-workers --signal term --job user_jobs:loader_workers
run job-forgotten-ema --signal term --job user_jobs:hand_written_ema
run restart-exec --signal term --restart exec
run cmd-example --signal term --steps 12 --kill-at-step 7 \
  --cmd "python -m spikelint.smoke.example_train --max-steps {steps} --save-every {every} --ckpt-dir {ckpt} {resume}"
