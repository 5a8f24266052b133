#!/usr/bin/env bash
# The prepared GPU verification of `spikelint smoke`: run once on a machine with NVIDIA GPUs, from
# the repository root, with torch built for CUDA importable. About 5 minutes on one GPU, under 10.
#
#   default            the built-in job on CUDA, every interruption variant          expect exit 0
#   nproc2             the same under torch.distributed with NCCL (only with 2+ GPUs)   expect exit 0
#   job-*              user jobs through --job: verified, one without its optimizer, one
#                      that forgets its EMA                                             expect 0, 1, 1
#   workers*           two DataLoader workers with seeded augmentation: the default run,
#                      SIGTERM twice more, and a version that forgets its loader generator  expect 0, 0, 0, 1
#   no-det-kernel      an op without a deterministic CUDA kernel, no --warn-only       expect exit 2
#   no-det-kernel-warn the same with --warn-only (the op is named in the warnings)      expect exit 0
#   large-state        a 120 MB state resumed after SIGTERM: the device memory the load
#                      takes (map_location) must stay under twice the state's size      expect exit 0
#   restart-exec       every run in a fresh interpreter                                 expect exit 0
#   cmd-example        the example train.py through --cmd                               expect exit 0
#
# Results (results.txt, one line per check with PASS or FAIL), every summary (JSON) and progress
# log go to $OUT when it is set, else to the folder given as $1 (default ./gpu-check). The script
# exits 1 when any check failed. SMOKE_DEVICE=cpu runs the same checks on the CPU (a dry run of
# this script; the device memory check then reports "not measured").
set -uo pipefail
out=${OUT:-${1:-./gpu-check}}
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD:$PWD/tests/smoke"
python=${PYTHON:-python}
device=${SMOKE_DEVICE:-cuda}
per_run_limit=150  # seconds; the smoke run's own --timeout is a little shorter
failures=0
: > "$out/results.txt"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpus.csv" 2>&1 || true
"$python" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count())" \
  > "$out/torch.txt" 2>&1

record() {  # a line for results.txt, counted as a failure unless it says PASS
  echo "$1" | tee -a "$out/results.txt"
  case $1 in *PASS*) ;; *) failures=$((failures + 1)) ;; esac
}

check() {  # name, expected exit code, then smoke options
  local name=$1 expected=$2
  shift 2
  local started=$SECONDS code
  timeout "$per_run_limit" "$python" -m spikelint smoke --device "$device" --format json --timeout 140 \
    --run-dir "$out/run-$name" "$@" > "$out/$name.json" 2> "$out/$name.log"
  code=$?
  local verdict=PASS
  [ "$code" -eq "$expected" ] || verdict=FAIL
  record "$name: exit $code (expected $expected) in $((SECONDS - started)) s: $verdict"
}

summary_field() {  # summary file, Python expression over `s` (the parsed summary)
  "$python" -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

check default 0
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  check nproc2 0 --nproc 2
else
  echo "nproc2: skipped (one GPU)" | tee -a "$out/results.txt"
fi
check job-verified 0 --job user_jobs:minimal
check job-no-optimizer 1 --job user_jobs:without_optimizer
check job-forgotten-ema 1 --signal term --job user_jobs:hand_written_ema

check workers 0 --steps 20 --job user_jobs:loader_workers
check workers-sigterm-2 0 --steps 20 --signal term --job user_jobs:loader_workers
check workers-sigterm-3 0 --steps 20 --signal term --job user_jobs:loader_workers
check workers-no-generator 1 --steps 20 --signal term --job user_jobs:loader_workers_without_generator
named=$(summary_field "$out/workers-no-generator.json" \
  "sorted({i['piece'] for v in s['variants'] for i in v['restore_check']['not_restored']})")
case $named in
  *"worker rng"*"data position"* | *"data position"*"worker rng"*) record "workers-no-generator names $named: PASS" ;;
  *) record "workers-no-generator names $named: FAIL (expected worker rng and data position)" ;;
esac

check no-det-kernel 2 --steps 12 --signal term --job user_jobs:no_deterministic_kernel
message=$(summary_field "$out/no-det-kernel.json" "s['message']")
case $message in
  *"has no deterministic implementation on $device"*"--warn-only"*) record "no-det-kernel message: PASS: $message" ;;
  *) record "no-det-kernel message: FAIL: $message" ;;
esac
check no-det-kernel-warn 0 --steps 12 --signal term --warn-only --job user_jobs:no_deterministic_kernel
warned=$(summary_field "$out/no-det-kernel-warn.json" "[w for w in s['warnings'] if w.startswith('--warn-only')]")
case $warned in
  *"first in step 1 of the reference run"*) record "no-det-kernel-warn warning: PASS: $warned" ;;
  *) record "no-det-kernel-warn warning: FAIL: $warned" ;;
esac

check large-state 0 --steps 10 --checkpoint-every 4 --signal term --job user_jobs:large_state
memory=$(summary_field "$out/large-state.json" "s['measurements']['resume_device_memory']")
growth=$(summary_field "$out/large-state.json" "(lambda m: ('PASS' if m['peak_during_load_bytes'] - \
m['allocated_before_bytes'] < 2 * m['state_bytes'] else 'FAIL') if isinstance(m, dict) else 'not measured')(\
s['measurements']['resume_device_memory'])")
case $growth in
  PASS | FAIL) record "large-state resume memory (peak while loading minus before < 2 x state): $growth: $memory" ;;
  *) if [ "$device" = cuda ]; then
       record "large-state resume memory: FAIL: not measured: $memory"
     else
       record "large-state resume memory: not measured on $device (nothing to measure): PASS"
     fi ;;
esac

check restart-exec 0 --signal term --restart exec
check cmd-example 0 --signal term --steps 12 --kill-at-step 7 \
  --cmd "$python -m spikelint.smoke.example_train --max-steps {steps} --save-every {every} --ckpt-dir {ckpt} {resume}"

echo "$failures check(s) failed" | tee -a "$out/results.txt"
[ "$failures" -eq 0 ]
