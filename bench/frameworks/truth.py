"""Establish, without spikelint, whether a framework script's own resume reproduces an uninterrupted run.

    python bench/frameworks/truth.py nanogpt   path/to/nanoGPT/train.py  --work /tmp/t-nano
    python bench/frameworks/truth.py lightning path/to/lightning/examples/pytorch/domain_templates/imagenet.py --work /tmp/t-pl
    python bench/frameworks/truth.py dcp       bench/frameworks/dcp_train.py       --work /tmp/t-dcp
    (dcp-seeded: the same DCP script with --step-seeded-data; lightning-last: resumed with --ckpt_path last)

(run nanogpt_setup.py / lightning_setup.py first). For the chosen script it

1. runs the command uninterrupted twice (reference, and a second one to see that two
   uninterrupted runs are equal at all);
2. for every kill point, `--repeat` times (default 2): runs it again in a new session, SIGKILLs
   the whole process tree (torchrun's workers included) as soon as the step line of that step is
   read, lists the checkpoint files then on disk, and resumes with the framework's own mechanism
   (nanoGPT --init_from=resume; Lightning --ckpt_path <the newest .ckpt on disk> or last; DCP --resume);
3. compares the resumed run with the reference: the final state (every tensor, dtype, shape and
   raw bytes; every other leaf by ==) and the loss printed at every step after the resume.

It prints one line per run and writes WORK/truth.json (commands, outputs' step/loss lines, the
script's own resume lines, files beside the checkpoints, and every difference found).
"""

import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("FRAMEWORK_PYTHON", sys.executable)  # the environment with the framework installed
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": ""}


# --------------------------------------------------------------------------- the three scripts
class NanoGPT:
    """nanoGPT train.py with config/tiny_char.py: ckpt.pt saved at iter 0 mod 8 (before that step trains)."""
    step_re = re.compile(r"^iter (\d+): loss (\S+?),")
    kill_points = {"just-after-checkpoint": 8, "between-checkpoints": 13}
    ignore = {"config.out_dir", "config.init_from"}  # the command line stored in ckpt.pt, not training state

    def __init__(self, script):
        self.script, self.cwd = os.path.abspath(script), os.path.dirname(os.path.abspath(script))

    def cmd(self, ckpt, resume):
        return [PY, self.script, "config/tiny_char.py", f"--out_dir={ckpt}"] + (["--init_from=resume"] if resume else [])

    def final_state(self, ckpt):
        return torch.load(os.path.join(ckpt, "ckpt.pt"), map_location="cpu", weights_only=True)


class Lightning:
    """Lightning's imagenet.py through its LightningCLI; ModelCheckpoint(monitor='val_acc1') after each epoch's validation."""
    ignore = ()
    python = os.environ.get("TORCHVISION_PYTHON", PY)  # torchvision needs a full (not +cpu) torch build
    step_re = re.compile(r"probe epoch=\d+ batch=\d+ global_step=(\d+) loss=(\S+)$")
    kill_points = {"just-after-checkpoint": 5, "between-checkpoints": 10}
    env = {"PYTHONPATH": HERE}

    def __init__(self, script):
        self.script, self.cwd = os.path.abspath(script), os.path.dirname(os.path.abspath(script))

    def cmd(self, ckpt, resume):
        c = [self.python, self.script, "fit", "--model.data_path", os.path.join(self.cwd, "tiny-imagenet"),
             "--model.arch", "mobilenet_v3_small", "--model.batch_size", "2", "--model.workers", "0",
             "--trainer.max_epochs", "3", "--trainer.limit_train_batches", "4", "--trainer.limit_val_batches", "2",
             "--trainer.default_root_dir", ckpt,
             "--trainer.callbacks+=lightning_probe.Probe", "--trainer.callbacks.out_dir", os.path.join(ckpt, "probe")]
        if resume:
            ckpts = sorted(glob.glob(os.path.join(ckpt, "checkpoints", "*.ckpt")), key=os.path.getmtime)
            c += ["--ckpt_path", ckpts[-1]] if ckpts else []
        return c

    def final_state(self, ckpt):
        return torch.load(os.path.join(ckpt, "probe", "final.pt"), map_location="cpu", weights_only=True)


class LightningLast(Lightning):
    """The same, resumed with Lightning's `--ckpt_path last` instead of the checkpoint's file name."""

    def cmd(self, ckpt, resume):
        return super().cmd(ckpt, False) + (["--ckpt_path", "last"] if resume else [])


class DCP:
    """bench/frameworks/dcp_train.py under torchrun, 2 ranks (gloo): DIR/step-N every 4 steps and at step 24."""
    step_re = re.compile(r"^step (\d+) loss (\S+)$")
    kill_points = {"just-after-checkpoint": 9, "between-checkpoints": 13, "as-step-16-is-saved": 16}
    extra = []
    ignore = ()

    def __init__(self, script):
        self.script, self.cwd = os.path.abspath(script), os.path.dirname(os.path.abspath(script))

    def cmd(self, ckpt, resume):
        return ([os.path.join(os.path.dirname(PY), "torchrun"), "--standalone", "--nproc_per_node", "2", self.script,
                 "--ckpt-dir", ckpt, "--steps", "24", "--save-every", "4"] + self.extra + (["--resume"] if resume else []))

    def final_state(self, ckpt):
        from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
        out = ckpt + "-final.pt"
        dcp_to_torch_save(os.path.join(ckpt, "step-24"), out)
        return torch.load(out, map_location="cpu", weights_only=True)


class DCPSeeded(DCP):
    extra = ["--step-seeded-data"]


PRESETS = {"nanogpt": NanoGPT, "lightning": Lightning, "lightning-last": LightningLast, "dcp": DCP, "dcp-seeded": DCPSeeded}


# --------------------------------------------------------------------------- running and killing
def descendants(pid):
    children = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = open(stat).read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.split("/")[2]))
        except (OSError, IndexError, ValueError):
            pass
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def files_under(folder):
    out = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, folder)] = os.path.getsize(p)
    return out


def run(job, ckpt, resume=False, kill_at=None):
    """Run the command; with kill_at, SIGKILL the process tree once the step line of that step is read."""
    cmd = job.cmd(ckpt, resume)
    env = {**os.environ, **OFFLINE, **getattr(job, "env", {})}
    t0 = time.time()
    proc = subprocess.Popen(cmd, cwd=job.cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    lines, steps, killed, tree = [], {}, None, None
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        m = job.step_re.search(line.strip())
        if m:
            steps[int(m.group(1))] = m.group(2)
            if kill_at is not None and tree is None:
                tree = descendants(proc.pid)  # found once, early: the kill itself must not wait for /proc
            if kill_at is not None and killed is None and int(m.group(1)) >= kill_at:
                os.killpg(proc.pid, signal.SIGKILL)
                for pid in tree + descendants(proc.pid):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                killed = {"at_step_line": int(m.group(1)), "files_after_kill": None}
    rc = proc.wait()
    if killed:
        time.sleep(0.5)
        killed["files_after_kill"] = files_under(ckpt)
        killed["last_step_line"] = max(steps)
    return {"cmd": cmd, "rc": rc, "seconds": round(time.time() - t0, 1), "steps": steps, "killed": killed,
            "own_lines": [line for line in lines
                          if re.search(r"(?i)resum|restor|saving|saved|checkpoint|warn|error|Traceback", line)][:30],
            "tail": lines[-8:]}


# --------------------------------------------------------------------------- comparing
def leaves(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{prefix}{k}.")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{prefix}{i}.")
    else:
        yield prefix[:-1], obj


def compare_states(ref, other, ignore=()):
    a, b = dict(leaves(ref)), dict(leaves(other))
    diffs, ignored = [], []
    for k in list(a) + [k for k in b if k not in a]:
        if k not in a or k not in b:
            diffs.append({"key": k, "kind": "missing_in_resumed" if k not in b else "extra_in_resumed"})
            continue
        x, y = a[k], b[k]
        if k in ignore:
            if repr(x) != repr(y):
                ignored.append({"key": k, "ref": repr(x)[:60], "resumed": repr(y)[:60]})
            continue
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.dtype != y.dtype or x.shape != y.shape:
                diffs.append({"key": k, "kind": "dtype/shape"})
            elif x.numel() and not torch.equal(x.contiguous().view(-1).view(torch.uint8), y.contiguous().view(-1).view(torch.uint8)):
                d = (x.double() - y.double()).abs().max().item() if x.is_floating_point() else None
                diffs.append({"key": k, "kind": "value", "max_abs_diff": d})
        elif type(x) is not type(y) or x != y:
            diffs.append({"key": k, "kind": "value", "ref": repr(x)[:60], "resumed": repr(y)[:60]})
    return {"leaves": len(a), "equal": not diffs, "n_diffs": len(diffs), "diffs": diffs[:8], "ignored": ignored}


def compare_losses(ref_steps, steps):
    compared = sorted(s for s in steps if s in ref_steps)
    first = next((s for s in compared if steps[s] != ref_steps[s]), None)
    return {"compared_steps": [compared[0], compared[-1]] if compared else [], "equal": first is None,
            "first_diff": None if first is None else {"step": first, "ref": ref_steps[first], "resumed": steps[first]}}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("preset", choices=PRESETS)
    p.add_argument("script")
    p.add_argument("--work", required=True, help="new folder for the runs' checkpoints and truth.json")
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    job = PRESETS[args.preset](args.script)
    os.makedirs(args.work, exist_ok=False)
    out = {"preset": args.preset, "script": job.script, "runs": []}

    ref = run(job, os.path.join(args.work, "reference"))
    ref_state = job.final_state(os.path.join(args.work, "reference"))
    ref["files"] = files_under(os.path.join(args.work, "reference"))
    out["reference"] = ref
    again = run(job, os.path.join(args.work, "reference-2"))
    out["reference_2_vs_reference"] = {"state": compare_states(ref_state, job.final_state(os.path.join(args.work, "reference-2")), job.ignore),
                                       "losses": compare_losses(ref["steps"], again["steps"])}
    print(f"reference: rc={ref['rc']} {ref['seconds']}s steps {min(ref['steps'], default=None)}..{max(ref['steps'], default=None)}; "
          f"second uninterrupted run equal: state {out['reference_2_vs_reference']['state']['equal']}, "
          f"losses {out['reference_2_vs_reference']['losses']['equal']}", flush=True)

    for name, step in job.kill_points.items():
        for i in range(args.repeat):
            ckpt = os.path.join(args.work, f"{name}-{i + 1}")
            killed = run(job, ckpt, kill_at=step)
            resumed = run(job, ckpt, resume=True)
            r = {"point": name, "try": i + 1, "kill_at": step, "killed": killed, "resumed": resumed,
                 "before_kill_losses": compare_losses(ref["steps"], killed["steps"]),
                 "first_resumed_step": min(resumed["steps"], default=None)}
            try:
                r["state"] = compare_states(ref_state, job.final_state(ckpt), job.ignore)
            except BaseException as e:  # noqa: BLE001 - the resumed run may have written nothing (DCP raises a BaseException)
                r["state"] = {"equal": False, "error": repr(e)[:200]}
            r["losses"] = compare_losses(ref["steps"], resumed["steps"])
            out["runs"].append(r)
            first_diff = r["state"].get("diffs", [{}])[0].get("key") if r["state"].get("diffs") else r["state"].get("error")
            print(f"{name} #{i + 1}: killed on step line {killed['killed'] and killed['killed']['at_step_line']} "
                  f"(last printed {killed['killed'] and killed['killed']['last_step_line']}), "
                  f"resumed rc={resumed['rc']} first step {r['first_resumed_step']}; final state equal "
                  f"{r['state']['equal']} ({r['state'].get('n_diffs', '-')} leaves differ, first {first_diff}); "
                  f"losses equal {r['losses']['equal']} {r['losses']['first_diff'] or ''}", flush=True)

    with open(os.path.join(args.work, "truth.json"), "w") as f:
        json.dump(out, f, indent=1, default=str)
    print(f"wrote {args.work}/truth.json")


if __name__ == "__main__":
    sys.exit(main())
