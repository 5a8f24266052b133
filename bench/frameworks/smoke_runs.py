"""Run `spikelint smoke --cmd` on the frameworks' own scripts as docs/smoke.md tells a user, N times each.

    python bench/frameworks/smoke_runs.py --spikelint VENV/bin/spikelint \
        --hf-work /tmp/hf-clm --transformers-dir DIR_WITH_run_clm.py \
        --nanogpt-dir DIR_WITH_train.py --lightning-dir DIR_WITH_imagenet.py \
        --out /tmp/smoke-runs [--repeat 3] [--only run_clm,nanogpt] \
        [--spikelint-torchvision VENV_TV/bin/spikelint] [--compat DIR] [--add NAME=OPTIONS]

Prepare the folders first with the setup scripts beside this file (hf_clm_setup.py writes --hf-work,
nanogpt_setup.py and lightning_setup.py write next to the scripts). Jobs (--only takes their names):

    run_clm            transformers' run_clm.py (Trainer), --resume_from_checkpoint {ckpt}/checkpoint-{step}
    run_clm_no_trainer transformers' run_clm_no_trainer.py (Accelerate), ... {ckpt}/step_{step}
    nanogpt            nanoGPT's train.py with config/tiny_char.py, --init_from=resume
    lightning          Lightning's imagenet.py through LightningCLI, --ckpt_path last
    lightning_probe    the same with bench/frameworks/lightning_probe.py's print-only callback added
    dcp                dcp_train.py (this folder) under torchrun, 2 processes, gloo
    dcp_seeded         the same with --step-seeded-data

Every run gets a fresh folder OUT/<job>-<n>/: work/ (a copy of the script's folder, the command's
working directory), smoke/ (spikelint's --run-dir), summary.json (what `--format json` printed),
stderr.log and hf-home/. The command is the one docs/smoke.md shows, with `python` and `torchrun`
found first in the folder of the spikelint executable given (its virtual environment, as if
activated); nothing is downloaded (HF_*_OFFLINE=1). Lightning's imagenet.py needs torchvision, which
needs its own torch build: --spikelint-torchvision names that environment's spikelint (default
--spikelint). --compat DIR is put on PYTHONPATH for run_clm_no_trainer only (a sitecustomize that
supplies names an older copy of the script imports and newer libraries removed; the script and the
command stay as they are). --add NAME=OPTIONS appends smoke options to one job's command line (to try
the minimal fix of a documented command that does not work as written); it is recorded.

Each run appends one JSON line to OUT/results.jsonl (job, attempt, exit code, verdict, headline,
per-variant verdicts and messages, wall time, the exact argv) and a table is printed at the end.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# What the scripts do without spikelint (docs/smoke.md, "On the frameworks' own scripts").
TRUTH = {
    "run_clm": "bit for bit between checkpoints; torn newest crashes; no SIGTERM handler",
    "run_clm_no_trainer": "never bit for bit (no data position saved); torn newest crashes",
    "nanogpt": "never bit for bit (global generator, no RNG state in ckpt.pt)",
    "lightning": "never bit for bit (no RNG or loader state; --ckpt_path last loads nothing)",
    "lightning_probe": "never bit for bit (no RNG or loader state; --ckpt_path last loads nothing)",
    "dcp": "never bit for bit (batches from the global generator)",
    "dcp_seeded": "bit for bit between saves; torn step-N/ crashes",
}


def jobs(args: argparse.Namespace) -> dict[str, dict]:
    """Each job: the folder copied as the working directory, the smoke options and the --cmd text."""
    hf = Path(args.hf_work).resolve() if args.hf_work else None
    out: dict[str, dict] = {}
    if hf and args.transformers_dir:
        overrides = (hf / "config_overrides.txt").read_text().strip()
        out["run_clm"] = {
            "folder": args.transformers_dir, "spikelint": args.spikelint,
            "options": ["--steps", "24", "--checkpoint-every", "4",
                        "--resume-arg", "--resume_from_checkpoint {ckpt}/checkpoint-{step}"],
            "cmd": (f"python run_clm.py --model_type gpt2 --config_overrides {overrides} "
                    f"--tokenizer_name {hf}/tokenizer --train_file {hf}/data/train.txt --block_size 32 "
                    f"--per_device_train_batch_size 4 --do_train --report_to none "
                    "--max_steps {steps} --save_steps {every} --logging_steps 1 --output_dir {ckpt} "
                    "--seed {seed} {resume}"),
        }
        out["run_clm_no_trainer"] = {
            "folder": args.transformers_dir, "spikelint": args.spikelint,
            "env": {"PYTHONPATH": str(Path(args.compat).resolve())} if args.compat else {},
            "options": ["--steps", "24", "--checkpoint-every", "4",
                        "--resume-arg", "--resume_from_checkpoint {ckpt}/step_{step}"],
            "cmd": (f"python run_clm_no_trainer.py --config_name {hf}/config --tokenizer_name {hf}/tokenizer "
                    f"--train_file {hf}/data/train.txt --validation_file {hf}/data/validation.txt "
                    "--block_size 32 --per_device_train_batch_size 4 "
                    "--max_train_steps {steps} --checkpointing_steps {every} --output_dir {ckpt} "
                    "--seed {seed} {resume}"),
        }
    if args.nanogpt_dir:
        out["nanogpt"] = {
            "folder": args.nanogpt_dir, "spikelint": args.spikelint,
            "options": ["--steps", "24", "--checkpoint-every", "8", "--progress-regex", r"^iter (\d+):",
                        "--resume-arg", "--init_from=resume"],
            "cmd": ("python train.py config/tiny_char.py --out_dir={ckpt} --max_iters={steps} "
                    "--lr_decay_iters={steps} --eval_interval={every} {resume}"),
        }
    if args.lightning_dir:
        out["lightning"] = {
            "folder": args.lightning_dir, "spikelint": args.spikelint_torchvision or args.spikelint,
            "options": ["--steps", "12", "--checkpoint-every", "4", "--resume-arg", "--ckpt_path last"],
            "cmd": ("python imagenet.py fit --model.data_path tiny-imagenet --model.arch mobilenet_v3_small "
                    "--model.batch_size 2 --model.workers 0 --trainer.max_steps {steps} "
                    "--trainer.limit_train_batches 4 --trainer.limit_val_batches 2 "
                    "--trainer.default_root_dir {ckpt} {resume}"),
        }
        # The same with the read-only callback the truth runs use (prints `probe epoch=E batch=B
        # global_step=N loss=L` after every step): the setup docs/smoke.md's table was measured with.
        out["lightning_probe"] = {
            **out["lightning"], "env": {"PYTHONPATH": str(HERE)},
            "cmd": out["lightning"]["cmd"].replace(" {resume}", " --trainer.callbacks+=lightning_probe.Probe {resume}"),
        }
    dcp_cmd = ("torchrun --standalone --nproc_per_node 2 dcp_train.py --ckpt-dir {ckpt} --steps {steps} "
               "--save-every {every} {resume}")
    out["dcp"] = {"folder": None, "files": [HERE / "dcp_train.py"], "spikelint": args.spikelint,
                  "options": ["--steps", "24", "--checkpoint-every", "4"], "cmd": dcp_cmd}
    out["dcp_seeded"] = {**out["dcp"], "cmd": dcp_cmd.replace(" {resume}", " --step-seeded-data {resume}")}
    for name, extra in (item.split("=", 1) for item in args.add):
        out[name]["options"] = out[name]["options"] + shlex.split(extra)
        out[name]["added"] = extra
    return out


def first_line(text: str, width: int = 240) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def run_one(name: str, job: dict, attempt: int, out: Path, timeout: float) -> dict:
    folder = out / f"{name}-{attempt}"
    if folder.exists():
        raise SystemExit(f"{folder} exists: give a new --out")
    work = folder / "work"
    if job.get("folder"):
        shutil.copytree(job["folder"], work, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        work.mkdir(parents=True)
    for f in job.get("files", []):
        shutil.copy2(f, work / Path(f).name)
    spikelint = str(Path(job["spikelint"]).absolute())
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_HOME=str(folder / "hf-home"), PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES="",
               PATH=os.path.dirname(spikelint) + os.pathsep + os.environ.get("PATH", ""))
    env.update(job.get("env", {}))
    if "PYTHONPATH" in job.get("env", {}) and os.environ.get("PYTHONPATH"):  # a job's own path comes on top
        env["PYTHONPATH"] = job["env"]["PYTHONPATH"] + os.pathsep + os.environ["PYTHONPATH"]
    argv = [spikelint, "smoke", "--device", "cpu", *job["options"], "--run-dir", str(folder / "smoke"),
            "--format", "json", "--cmd", job["cmd"]]
    started = time.monotonic()
    with open(folder / "stderr.log", "wb") as err:
        try:
            proc = subprocess.run(argv, cwd=work, env=env, stdout=subprocess.PIPE, stderr=err, timeout=timeout)
            rc, stdout = proc.returncode, proc.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            rc, stdout = None, (e.stdout or b"").decode("utf-8", "replace")
    wall = round(time.monotonic() - started, 1)
    (folder / "summary.json").write_text(stdout)
    record = {"job": name, "attempt": attempt, "exit_code": rc, "wall_s": wall, "argv": argv,
              "cwd": str(work), "env": job.get("env", {}), "added_options": job.get("added"),
              "truth": TRUTH.get(name), "run_folder": str(folder)}
    try:
        summary = json.loads(stdout)
    except ValueError:
        summary = None
        smoke_summary = folder / "smoke" / "summary.json"
        if smoke_summary.is_file():
            try:
                summary = json.loads(smoke_summary.read_text())
            except ValueError:
                summary = None
    if summary is None:
        tail = (folder / "stderr.log").read_text(errors="replace").strip().splitlines()[-5:]
        record.update(verdict="timeout (runner)" if rc is None else "no summary", headline=" | ".join(tail)[:400],
                      variants=[])
        return record
    plan = summary.get("plan") or {}
    record.update(
        verdict=summary.get("verdict"), headline=first_line(summary.get("message", "")),
        message=summary.get("message", ""),
        plan={k: plan.get(k) for k in ("steps", "checkpoint_every", "kill_at_step", "steps_per_epoch",
                                       "epoch_boundary_crossed", "variants", "not_applicable") if k in plan},
        variants=[{"name": v.get("name"), "verdict": v.get("verdict"), "headline": first_line(v.get("message", "")),
                   "interrupted_at_step": v.get("interrupted_at_step"),
                   "resumed_from_step": v.get("resumed_from_step"),
                   "losses": v.get("losses")} for v in summary.get("variants", [])],
        warnings=[first_line(w if isinstance(w, str) else json.dumps(w), 200) for w in summary.get("warnings", [])],
        errors=[first_line(e if isinstance(e, str) else json.dumps(e), 200) for e in summary.get("errors", [])],
        total_wall_s=(summary.get("measurements") or {}).get("total_wall_s"))
    return record


def short(verdict: str | None) -> str:
    return {"verified": "VERIFIED", "state_differs": "STATE DIFFERS", "resume_failed": "RESUME FAILED",
            "incomplete": "INCOMPLETE", "setup_error": "SETUP ERROR"}.get(verdict or "", str(verdict))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spikelint", required=True, help="the spikelint executable (its folder gives python, torchrun)")
    p.add_argument("--spikelint-torchvision", help="spikelint of the environment with torchvision (imagenet.py)")
    p.add_argument("--hf-work", help="the folder hf_clm_setup.py wrote (--work)")
    p.add_argument("--transformers-dir", help="folder holding run_clm.py and run_clm_no_trainer.py")
    p.add_argument("--nanogpt-dir", help="folder holding nanoGPT's train.py (after nanogpt_setup.py)")
    p.add_argument("--lightning-dir", help="folder holding imagenet.py (after lightning_setup.py)")
    p.add_argument("--compat", help="PYTHONPATH for run_clm_no_trainer only (see the docstring)")
    p.add_argument("--add", action="append", default=[], metavar="NAME=OPTIONS",
                   help="extra smoke options for one job (a fix of the documented command), recorded")
    p.add_argument("--out", required=True, help="folder for the runs and results.jsonl")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", help="comma-separated job names (default: every job whose folders were given)")
    p.add_argument("--timeout", type=float, default=1200, help="runner's own limit per smoke run, seconds")
    args = p.parse_args(argv)

    table = jobs(args)
    names = args.only.split(",") if args.only else list(table)
    missing = [n for n in names if n not in table]
    if missing:
        raise SystemExit(f"unknown or unprepared job(s): {', '.join(missing)}; known: {', '.join(table)}")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    rows = []
    for attempt in range(1, args.repeat + 1):
        for name in names:
            print(f"... {name} run {attempt}", file=sys.stderr, flush=True)
            record = run_one(name, table[name], attempt, out, args.timeout)
            with open(results, "a") as f:
                f.write(json.dumps(record) + "\n")
            rows.append(record)
            variants = " ".join(f"{v['name']}={short(v['verdict'])}" for v in record["variants"])
            print(f"{name:19} #{attempt} exit={record['exit_code']} {short(record['verdict']):14} "
                  f"{record['wall_s']:6.1f}s  {record['headline'][:150]}\n{'':24}{variants}", flush=True)

    print(f"\n{'job':19} {'run':>3} {'exit':>4} {'verdict':14} {'wall s':>7}  headline")
    for r in rows:
        print(f"{r['job']:19} {r['attempt']:>3} {str(r['exit_code']):>4} {short(r['verdict']):14} "
              f"{r['wall_s']:7.1f}  {r['headline'][:110]}")
    print(f"\nwrote {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
