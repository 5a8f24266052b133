"""``smoke --cmd`` on the real training scripts of tests/smoke/jobs/, several times each: the verdicts
(a correct job must verify every time, a broken one fail every time) and the wall time of each run.

    python bench/smoke_cmd_jobs.py [--repeat 3] [--jobs plain,lightning,plain-no-loader-generator]

Meant for a loaded machine too: run it beside something else that keeps the CPUs busy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS_DIR = Path(__file__).resolve().parents[1] / "tests" / "smoke" / "jobs"
COMMON = "--max-steps {steps} --save-every {every} {resume}"
LONG = "--samples 256 --no-epoch-lines"  # 64 steps an epoch, longer than the default plan; no epoch= on the lines
PLAIN = f"{JOBS_DIR / 'plain_torch.py'} --output-dir {{ckpt}} {COMMON}"
LIGHTNING = f"{JOBS_DIR / 'lightning_job.py'} --ckpt-dir {{ckpt}} {COMMON}"
JOBS = {
    "plain": ("verified", [], PLAIN),
    "lightning": ("verified", [], LIGHTNING),
    "hf-trainer": ("resume_failed", ["--signal", "kill"], f"{JOBS_DIR / 'hf_trainer_job.py'} --output-dir {{ckpt}} {COMMON}"),
    "plain-step-off-by-one": ("state_differs", ["--signal", "kill"], f"{PLAIN} --bug step-off-by-one"),
    "plain-no-loader-generator": ("state_differs", ["--signal", "kill", "--steps-per-epoch", "32"],
                                  f"{PLAIN} --samples 128 --bug no-loader-generator"),
    "lightning-ema": ("state_differs", ["--signal", "kill"], f"{LIGHTNING} --bug ema-outside-checkpoint"),
    "lightning-epoch-end-skip": ("state_differs", ["--signal", "kill"], f"{LIGHTNING} --bug epoch-end-skip"),
    # the planted bugs again with epochs longer than the default plan and no epoch= on the step lines
    "long-plain": ("verified", [], f"{PLAIN} {LONG}"),
    "long-lightning": ("verified", [], f"{LIGHTNING} {LONG}"),
    "long-no-loader-generator": ("state_differs", ["--signal", "kill"], f"{PLAIN} {LONG} --bug no-loader-generator"),
    "long-epoch-end-order": ("state_differs", ["--signal", "kill"], f"{PLAIN} {LONG} --bug restart-epoch"),
    "long-step-off-by-one": ("state_differs", ["--signal", "kill"], f"{PLAIN} {LONG} --bug step-off-by-one"),
    "long-no-scheduler": ("state_differs", ["--signal", "kill"], f"{PLAIN} {LONG} --bug no-scheduler"),
    "long-torn-write": ("resume_failed", [], f"{PLAIN} {LONG} --bug no-fallback"),
    "long-lightning-ema": ("state_differs", ["--signal", "kill"], f"{LIGHTNING} {LONG} --bug ema-outside-checkpoint"),
    "long-lightning-plain-loader": ("state_differs", ["--signal", "kill"], f"{LIGHTNING} {LONG} --bug plain-loader"),
}


def run(name: str, folder: Path) -> tuple[str, float, str]:
    _, options, command = JOBS[name]
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "spikelint", "smoke", "--device", "cpu", "--run-dir", str(folder),
                    *options, "--format", "json", "--cmd", f"{sys.executable} {command}"],
                   capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return summary["verdict"], wall, summary["message"][:220].replace("\n", " ")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", default="plain,lightning")
    args = parser.parse_args(argv)
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.jobs.split(","):
            expected = JOBS[name][0]
            for attempt in range(args.repeat):
                verdict, wall, message = run(name, Path(scratch) / f"{name}-{attempt}")
                ok = verdict == expected
                failures += not ok
                print(f"{name:28} run {attempt + 1}: {verdict:14} {'ok ' if ok else 'BAD'} {wall:6.1f} s  {message}",
                      flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
