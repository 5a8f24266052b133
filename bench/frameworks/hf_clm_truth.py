"""Establish, without spikelint, whether transformers' run_clm.py / run_clm_no_trainer.py resume bit for bit.

    python bench/frameworks/hf_clm_setup.py path/to/transformers/examples/pytorch/language-modeling/run_clm.py --work /tmp/hf-clm
    python bench/frameworks/hf_clm_truth.py path/to/transformers/examples/pytorch/language-modeling/run_clm.py --work /tmp/hf-clm
    python bench/frameworks/hf_clm_truth.py path/to/transformers/examples/pytorch/language-modeling/run_clm_no_trainer.py --work /tmp/hf-clm

The script is told apart by its file name. For it, this

1. runs it uninterrupted twice (24 optimizer steps, a checkpoint every 4; two runs must be equal at all);
2. for every kill point, `--repeat` times: runs it in a new session, SIGKILLs the process group when the
   trigger shows in its output (a step count, or the line that a checkpoint's weights were written), lists the
   checkpoint folders then on disk, and resumes with the script's own mechanism, --resume_from_checkpoint
   OUT/<newest checkpoint folder> (what get_last_checkpoint would pick: the highest number);
3. compares with the reference: the final model.safetensors (every tensor, dtype, shape, raw bytes), every
   checkpoint folder the resumed run wrote (file by file; tensors bitwise, other leaves by ==), the per-step
   losses (run_clm.py: trainer_state.json log_history at full precision and the printed 4-digit losses;
   run_clm_no_trainer.py prints no per-step loss, only 'epoch E: perplexity: P eval_loss: L');
4. run_clm.py only: probes the Trainer's "resume from the last checkpoint in output_dir" behaviour (rerunning the
   same command on the killed output_dir, and --resume_from_checkpoint True).

Kill points: just after checkpoint 12 (step 13 seen), between checkpoints 16 and 20, and while checkpoint 20 is
written (its weights-saved log line); run_clm_no_trainer.py also right after the epoch-0 eval line (checkpoint 16).
run_clm_no_trainer.py's only progress is a tqdm bar that may skip counts, so a "between" kill can land inside the
next checkpoint's write; the JSON records the steps seen and the files on disk at each kill.
--only NAME,... runs some kill points ('auto' for the run_clm.py probes) and --tag T writes truth-<script>-T instead.

It prints one line per run and writes WORK/truth-<script>.json.
"""

import argparse
import glob
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time

import torch

PY = os.environ.get("FRAMEWORK_PYTHON", sys.executable)  # the environment with the framework installed
ENV = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
           PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES="")
STEPS, EVERY = 24, 4


class RunClm:
    """run_clm.py (Trainer): checkpoint-N/ folders, one printed {'loss': ...} dict per step (logging_steps=1)."""
    ckpt_re = re.compile(r"checkpoint-(\d+)$")
    kill_points = {"just-after-checkpoint-12": ("steps", 13), "between-checkpoints-16-20": ("steps", 18),
                   "during-write-of-checkpoint-20": ("regex", r"Model weights saved in \S*/checkpoint-20/")}

    def __init__(self, script, work):
        self.script, self.work = os.path.abspath(script), work

    def cmd(self, out, resume=None):
        w = self.work
        overrides = open(os.path.join(w, "config_overrides.txt")).read().strip()
        c = [PY, self.script, "--model_type", "gpt2", "--config_overrides", overrides,
             "--tokenizer_name", f"{w}/tokenizer", "--train_file", f"{w}/data/train.txt", "--block_size", "32",
             "--per_device_train_batch_size", "4", "--do_train", "--max_steps", str(STEPS),
             "--save_steps", str(EVERY), "--logging_steps", "1", "--output_dir", out, "--seed", "42",
             "--report_to", "none"]
        return c + (["--resume_from_checkpoint", resume] if resume else [])

    @staticmethod
    def steps_done(text):
        return text.count("{'loss': ")

    @staticmethod
    def printed_losses(text):
        return re.findall(r"\{'loss': '([^']+)'", text)

    @staticmethod
    def step_losses(out):
        """{step: (loss, grad_norm, learning_rate)} from OUT/trainer_state.json at full precision."""
        path = os.path.join(out, "trainer_state.json")
        if not os.path.exists(path):
            return {}
        hist = json.load(open(path))["log_history"]
        return {e["step"]: (e["loss"], e.get("grad_norm"), e.get("learning_rate")) for e in hist if "loss" in e}


class RunClmNoTrainer(RunClm):
    """run_clm_no_trainer.py (Accelerate): step_N/ folders from accelerator.save_state, a tqdm bar, no step losses."""
    ckpt_re = re.compile(r"step_(\d+)$")
    # tqdm redraws at most every 0.1 s and may skip counts: "between" fires at the first count >= 17 (17..19 seen)
    kill_points = {"just-after-checkpoint-12": ("steps", 13), "between-checkpoints-16-20": ("steps", 17),
                   "just-after-epoch-0-eval-checkpoint-16": ("regex", r"epoch 0: perplexity"),
                   "during-write-of-step_20": ("regex", r"Model weights saved in \S*/step_20/")}

    def cmd(self, out, resume=None):
        w = self.work
        c = [PY, self.script, "--config_name", f"{w}/config", "--tokenizer_name", f"{w}/tokenizer",
             "--train_file", f"{w}/data/train.txt", "--validation_file", f"{w}/data/validation.txt",
             "--block_size", "32", "--per_device_train_batch_size", "4", "--max_train_steps", str(STEPS),
             "--checkpointing_steps", str(EVERY), "--output_dir", out, "--seed", "42"]
        return c + (["--resume_from_checkpoint", resume] if resume else [])

    @staticmethod
    def steps_done(text):
        counts = [int(n) for n in re.findall(r"(\d+)/%d \[" % STEPS, text)]
        return max(counts, default=0)

    @staticmethod
    def printed_losses(text):
        return re.findall(r"epoch (\d+): perplexity: (\S+) eval_loss: (\S+)", text)

    @staticmethod
    def step_losses(out):
        return {}


# --------------------------------------------------------------------------- running and killing
def run(job, out, resume=None, kill=None, log=None):
    """Run the command; with kill=(kind, value) SIGKILL its process group when the trigger shows."""
    t0 = time.time()
    proc = subprocess.Popen(job.cmd(out, resume), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV,
                            cwd=job.work, start_new_session=True)
    buf, killed_at = b"", None
    os.set_blocking(proc.stdout.fileno(), False)
    while True:
        chunk = proc.stdout.read()
        if chunk:
            buf += chunk
        elif proc.poll() is not None:
            break
        else:
            time.sleep(0.01)
        if kill and killed_at is None:
            text = buf.decode("utf-8", "replace")
            kind, value = kill
            if (kind == "steps" and job.steps_done(text) >= value) or (kind == "regex" and re.search(value, text)):
                os.killpg(proc.pid, signal.SIGKILL)
                killed_at = job.steps_done(text)
    proc.wait()
    text = buf.decode("utf-8", "replace")
    if log:
        with open(log, "w") as f:
            f.write(text)
    return {"rc": proc.returncode, "seconds": round(time.time() - t0, 1), "text": text, "killed_after_steps": killed_at}


def checkpoints(job, out):
    found = []
    for d in glob.glob(os.path.join(out, "*")):
        m = job.ckpt_re.search(d)
        if m and os.path.isdir(d):
            found.append((int(m.group(1)), d))
    return sorted(found)


# --------------------------------------------------------------------------- comparison
def load_any(path):
    if path.endswith(".safetensors"):
        from safetensors.torch import load_file
        return load_file(path)
    if path.endswith(".json"):
        return json.load(open(path))
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception:  # noqa: BLE001 - not a torch file: try a plain pickle, else compare the bytes
        try:
            return pickle.load(open(path, "rb"))
        except Exception:  # noqa: BLE001 - compared as bytes below
            return open(path, "rb").read()


TIMING = re.compile(r"(_runtime|_per_second)$")


def diff(a, b, path=""):
    """Differences between two nested states: tensors by dtype, shape and raw bytes; other leaves by ==."""
    import numpy as np
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if TIMING.search(str(k)):
                continue
            if k not in a or k not in b:
                out.append((f"{path}/{k}", "missing on one side"))
            else:
                out += diff(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [(path, f"length {len(a)} != {len(b)}")]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}[{i}]")]
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return [(path, f"dtype/shape {a.dtype}{tuple(a.shape)} != {b.dtype}{tuple(b.shape)}")]
        ac, bc = a.detach().cpu().reshape(-1).contiguous(), b.detach().cpu().reshape(-1).contiguous()
        if ac.view(torch.uint8).numpy().tobytes() != bc.view(torch.uint8).numpy().tobytes():
            big = (ac.double() - bc.double()).abs().max().item() if ac.is_floating_point() else "n/a"
            return [(path, f"tensor bytes differ, max |diff| {big}")]
        return []
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return [] if (a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()) else [(path, "ndarray differs")]
    if type(a) is not type(b):
        return [(path, f"type {type(a).__name__} != {type(b).__name__}")]
    if hasattr(a, "__dict__") and not isinstance(a, (int, float, str, bytes)):
        return diff(vars(a), vars(b), path)
    return [] if a == b else [(path, f"{str(a)[:60]!r} != {str(b)[:60]!r}")]


def compare_folder(ref, got, skip=("training_args.bin",)):
    """File-by-file comparison of two checkpoint folders; {file: [differences]} for the files that differ."""
    result = {}
    names = {os.path.relpath(p, ref) for p in glob.glob(os.path.join(ref, "**", "*"), recursive=True) if os.path.isfile(p)}
    names |= {os.path.relpath(p, got) for p in glob.glob(os.path.join(got, "**", "*"), recursive=True) if os.path.isfile(p)}
    for name in sorted(names):
        if os.path.basename(name) in skip:
            continue
        a, b = os.path.join(ref, name), os.path.join(got, name)
        if not (os.path.exists(a) and os.path.exists(b)):
            result[name] = [("", "only in " + ("reference" if os.path.exists(a) else "resumed run"))]
            continue
        d = diff(load_any(a), load_any(b))
        if d:
            result[name] = d[:5] + ([("", f"... {len(d) - 5} more")] if len(d) > 5 else [])
    return result


def compare(job, ref, got, resumed_from, ref_text, got_text):
    """Truth for one resumed run against the reference."""
    res = {}
    final = "model.safetensors"
    if not os.path.exists(os.path.join(got, final)):
        res["final_weights"] = "missing (the resumed run wrote no final model)"
    else:
        d = diff(load_any(os.path.join(ref, final)), load_any(os.path.join(got, final)))
        res["final_weights"] = "equal" if not d else d[:5]
    later = [(s, d) for s, d in checkpoints(job, got) if s > resumed_from]
    res["checkpoints_after_resume"] = {}
    for s, d in later:
        c = compare_folder(os.path.join(ref, os.path.basename(d)), d)
        res["checkpoints_after_resume"][os.path.basename(d)] = c or "equal"
    ref_l, got_l = job.step_losses(ref), job.step_losses(got)
    if ref_l:
        steps = [s for s in sorted(got_l) if s > resumed_from]
        bad = [s for s in steps if got_l[s] != ref_l.get(s)]
        res["step_losses_full_precision"] = {
            "steps_compared": steps, "first_differing_step": bad[0] if bad else None,
            "example": {"ref": ref_l.get(bad[0]), "resumed": got_l[bad[0]]} if bad else None,
            "missing_steps": [s for s in range(resumed_from + 1, STEPS + 1) if s not in got_l]}
    printed_ref, printed_got = job.printed_losses(ref_text), job.printed_losses(got_text)
    if isinstance(job, RunClmNoTrainer):
        res["printed_eval_lines"] = {"ref": printed_ref, "resumed": printed_got}
    else:
        want = printed_ref[resumed_from:]
        res["printed_losses_after_resume"] = {"equal": want == printed_got, "ref": want, "resumed": printed_got}
    res["equal"] = (res["final_weights"] == "equal"
                    and all(v == "equal" for v in res["checkpoints_after_resume"].values())
                    and (not ref_l or res["step_losses_full_precision"]["first_differing_step"] is None)
                    and (isinstance(job, RunClmNoTrainer) or res["printed_losses_after_resume"]["equal"])
                    and (not isinstance(job, RunClmNoTrainer)
                         or res["printed_eval_lines"]["ref"][-1:] == res["printed_eval_lines"]["resumed"][-1:]))
    return res


def interesting_lines(text):
    keep = re.compile(r"(?i)resum|checkpoint|Skipping|Continuing|Loading|load_state|Saving current state|perplexity"
                      r"|Error|Traceback|warn")
    lines = re.split(r"[\r\n]+", text)
    return [line.strip()[:220] for line in lines if keep.search(line)][:60]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script")
    parser.add_argument("--work", default="/tmp/hf-clm")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", help="comma-separated kill point names ('auto': the run_clm.py probes)")
    parser.add_argument("--tag", default="", help="suffix of the output folder and JSON (keeps earlier results)")
    args = parser.parse_args()
    job = (RunClmNoTrainer if "no_trainer" in os.path.basename(args.script) else RunClm)(args.script, args.work)
    name = os.path.splitext(os.path.basename(args.script))[0]
    base = os.path.join(args.work, "truth-" + name + (f"-{args.tag}" if args.tag else ""))
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    report = {"script": args.script, "commands": {}, "runs": {}}

    ref, ref2 = os.path.join(base, "ref"), os.path.join(base, "ref2")
    report["commands"]["reference"] = job.cmd(ref)
    report["commands"]["resume"] = job.cmd("OUT", "OUT/<newest checkpoint folder>")
    r1 = run(job, ref, log=ref + ".log")
    r2 = run(job, ref2, log=ref2 + ".log")
    same = compare(job, ref, ref2, 0, r1["text"], r2["text"])
    report["runs"]["reference"] = {"rc": r1["rc"], "seconds": r1["seconds"], "files_in_last_checkpoint":
                                   sorted(os.listdir(checkpoints(job, ref)[-1][1])) if checkpoints(job, ref) else [],
                                   "files_in_output_dir": sorted(os.listdir(ref)), "lines": interesting_lines(r1["text"])}
    report["runs"]["two_uninterrupted_runs_equal"] = same["equal"]
    print(f"reference rc={r1['rc']} {r1['seconds']}s; second uninterrupted run equal: {same['equal']}", flush=True)
    if not same["equal"]:
        report["runs"]["uninterrupted_difference"] = same

    points = {k: v for k, v in job.kill_points.items() if not args.only or k in args.only.split(",")}
    for point, trigger in points.items():
        for i in range(1, args.repeat + 1):
            out = os.path.join(base, f"{point}-{i}")
            k = run(job, out, kill=trigger, log=out + ".killed.log")
            on_disk = checkpoints(job, out)
            entry = {"trigger": trigger, "killed_rc": k["rc"], "killed_after_steps": k["killed_after_steps"],
                     "checkpoints_on_disk": {os.path.basename(d): sorted(os.listdir(d)) for _, d in on_disk}}
            if not on_disk:
                entry["resume"] = "no checkpoint on disk"
                report["runs"][f"{point}-{i}"] = entry
                print(f"{point}-{i}: killed after {k['killed_after_steps']} steps, no checkpoint", flush=True)
                continue
            step, newest = on_disk[-1]
            r = run(job, out, resume=newest, log=out + ".resumed.log")
            entry.update({"resumed_from": os.path.basename(newest), "resumed_rc": r["rc"],
                          "resumed_lines": interesting_lines(r["text"])})
            if r["rc"] == 0:
                entry["truth"] = compare(job, ref, out, step, r1["text"], r["text"])
            else:
                entry["truth"] = {"equal": False, "error": re.split(r"[\r\n]+", r["text"].strip())[-3:]}
            report["runs"][f"{point}-{i}"] = entry
            print(f"{point}-{i}: killed after {k['killed_after_steps']} steps, resumed from "
                  f"{os.path.basename(newest)} rc={r['rc']}: equal={entry['truth']['equal']}", flush=True)

    if isinstance(job, RunClm) and not isinstance(job, RunClmNoTrainer) and (not args.only or "auto" in args.only):
        # the Trainer's own "resume from the last checkpoint in output_dir"
        out = os.path.join(base, "auto-rerun")
        run(job, out, kill=("steps", 18), log=out + ".killed.log")
        before = [os.path.basename(d) for _, d in checkpoints(job, out)]
        r = run(job, out, log=out + ".rerun.log")
        rl = job.printed_losses(r["text"])
        report["runs"]["auto-rerun-same-command"] = {
            "checkpoints_before": before, "rc": r["rc"], "printed_steps": len(rl),
            "starts_with_ref_step1_loss": bool(rl) and rl[0] == job.printed_losses(r1["text"])[0],
            "lines": interesting_lines(r["text"])}
        out2 = os.path.join(base, "auto-true")
        run(job, out2, kill=("steps", 18), log=out2 + ".killed.log")
        r = run(job, out2, resume="True", log=out2 + ".resumed.log")
        report["runs"]["auto-resume_from_checkpoint-True"] = {
            "rc": r["rc"], "last_lines": re.split(r"[\r\n]+", r["text"].strip())[-3:]}
        print("auto-rerun:", json.dumps(report["runs"]["auto-rerun-same-command"])[:400], flush=True)
        print("auto-true:", json.dumps(report["runs"]["auto-resume_from_checkpoint-True"])[:400], flush=True)

    with open(base + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
    print("wrote", base + ".json")


if __name__ == "__main__":
    main()
