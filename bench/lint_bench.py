"""Lint benchmark: generate a realistic ML repository and time ``spikelint check`` on it.

The repository mixes what GPU teams keep in Git: Kubernetes Jobs and PyTorchJobs, Run:ai
CRDs and REST bodies, launch scripts, Dockerfiles, Hydra/HF/torchtitan configs, small
notebooks and training code, with a few real problems sprinkled in (mutable tags, a literal
token, a pipe without pipefail, a model-only checkpoint).

Measured: cold CLI wall time (new process, median of N), in-process engine time, a per-phase
split (discovery, reading and parsing, checks, rendering) and the start-up time of
``spikelint --version``.

    python bench/lint_bench.py                 # 500 files, 5 repeats
    python bench/lint_bench.py --files 2000 --repeat 3 --git
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPOSITORY = Path(__file__).resolve().parents[1]
DIGEST = "@sha256:" + "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5f7a9b1d3f5e7a9c1b3d"
REGISTRY = "harbor.example.org/ml"

# --------------------------------------------------------------------------- file generators


def image(rng: random.Random, index: int) -> str:
    """Mostly pinned images; every 25th one uses a mutable tag (a real finding)."""
    name = rng.choice(("trainer", "bert-ft", "llama-sft", "vit-pretrain", "eval"))
    if index % 25 == 0:
        return f"{REGISTRY}/{name}:latest"
    return f"{REGISTRY}/{name}:1.{index % 9}.{index % 7}{DIGEST}"


def k8s_job(rng: random.Random, index: int) -> str:
    gpus = rng.choice((1, 2, 4, 8))
    return f"""# Fine-tuning job {index}
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune-{index}
  labels:
    runai/queue: team-nlp
    app.kubernetes.io/name: finetune
    seed: "{index}"
    code-revision: "{index:07x}"
    dataset-version: "v{index % 4}"
spec:
  backoffLimit: 3
  ttlSecondsAfterFinished: 86400
  activeDeadlineSeconds: 172800
  template:
    spec:
      schedulerName: runai-scheduler
      restartPolicy: Never
      terminationGracePeriodSeconds: 120
      containers:
        - name: trainer
          image: {image(rng, index)}
          command: ["python", "-u", "-m", "trainer.run"]
          args: ["--config", "/workspace/configs/exp-{index % 40}.yaml", "--output_dir", "/ckpt/run-{index}",
                 "--resume_from_checkpoint", "latest", "--seed", "{index}"]
          env:
            - name: WANDB_API_KEY
              valueFrom:
                secretKeyRef: {{name: wandb, key: api-key}}
            - name: HF_HOME
              value: /data/hf
          resources:
            limits:
              nvidia.com/gpu: "{gpus}"
          volumeMounts:
            - {{name: ckpt, mountPath: /ckpt}}
            - {{name: data, mountPath: /data, readOnly: true}}
      volumes:
        - name: ckpt
          persistentVolumeClaim: {{claimName: ckpt-pvc}}
        - name: data
          persistentVolumeClaim: {{claimName: datasets}}
"""


def pytorch_job(rng: random.Random, index: int) -> str:
    workers = rng.choice((1, 3, 7))
    return f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pretrain-{index}
  annotations:
    seed: "{index}"
    code_revision: "{index:07x}"
    dataset_version: "2024-0{1 + index % 9}"
spec:
  runPolicy:
    backoffLimit: 2
    ttlSecondsAfterFinished: 3600
    activeDeadlineSeconds: 604800
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: {image(rng, index)}
              command: [torchrun, --nnodes={workers + 1}, --nproc_per_node=8, train.py, --resume, /ckpt/pretrain-{index}]
              resources: {{limits: {{nvidia.com/gpu: 8}}}}
              volumeMounts: [{{name: ckpt, mountPath: /ckpt}}]
          volumes: [{{name: ckpt, persistentVolumeClaim: {{claimName: shared-ckpt}}}}]
    Worker:
      replicas: {workers}
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: {image(rng, index)}
              command: [torchrun, --nnodes={workers + 1}, --nproc_per_node=8, train.py, --resume, /ckpt/pretrain-{index}]
              resources: {{limits: {{nvidia.com/gpu: 8}}}}
              volumeMounts: [{{name: ckpt, mountPath: /ckpt}}]
          volumes: [{{name: ckpt, persistentVolumeClaim: {{claimName: shared-ckpt}}}}]
"""


def runai_crd(rng: random.Random, index: int) -> str:
    return f"""apiVersion: run.ai/v2alpha1
kind: TrainingWorkload
metadata:
  name: sweep-{index}
  namespace: runai-team-cv
spec:
  image:
    value: {image(rng, index)}
  gpu:
    value: "{rng.choice((1, 2, 4))}"
  command:
    value: python -u train.py --output-dir /ckpt/sweep-{index} --resume auto --seed {index}
  backoffLimit:
    value: 2
  ttlAfterFinish:
    value: 86400s
  environment:
    items:
      CODE_REVISION:
        value: "{index:07x}"
      DATASET_VERSION:
        value: "imagenet-v{index % 3}"
      WANDB_PROJECT:
        value: vit-sweeps
  pvcs:
    items:
      ckpt:
        value:
          claimName: ckpt-pvc
          path: /ckpt
          existingPvc: true
"""


def runai_rest(rng: random.Random, index: int) -> str:
    body = {
        "name": f"llama-sft-{index}",
        "projectId": "1042",
        "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
        "spec": {
            "image": image(rng, index),
            "command": "torchrun --nproc_per_node=8 sft.py",
            "args": f"--output_dir /ckpt/sft-{index} --resume_from_checkpoint last --seed {index}",
            "compute": {"gpuDevicesRequest": 8},
            "backoffLimit": 2,
            "terminationAfterPreemption": False,
            "environmentVariables": [
                {"name": "CODE_REVISION", "value": f"{index:07x}"},
                {"name": "DATASET_VERSION", "value": "sft-mix-v3"},
                {"name": "HF_TOKEN", "secret": {"name": "hf", "key": "token"}},
            ],
            "storage": {"pvc": [{"claimName": "ckpt", "path": "/ckpt", "existingPvc": True}]},
        },
    }
    return json.dumps(body, indent=2) + "\n"


def launch_script(rng: random.Random, index: int) -> str:
    pipefail = "set -euo pipefail" if index % 20 else "set -eu"  # every 20th: a pipe that hides failures
    return f"""#!/usr/bin/env bash
# Launch run {index} on the cluster.
{pipefail}

RUN_ID="run-{index}"
CKPT_DIR="/ckpt/${{RUN_ID}}"
export PYTHONUNBUFFERED=1

if [ "${{RANK:-0}}" = "0" ]; then
  mkdir -p "$CKPT_DIR/logs"
fi

torchrun --nnodes="${{NNODES:-1}}" --nproc_per_node=8 \\
  train.py --config configs/exp-{index % 40}.yaml \\
  --output_dir "$CKPT_DIR" --resume_from_checkpoint latest --seed {index} \\
  2>&1 | tee "$CKPT_DIR/logs/rank${{RANK:-0}}.log"
"""


def dockerfile(rng: random.Random, index: int) -> str:
    base = "nvcr.io/nvidia/pytorch:24.05-py3" + DIGEST if index % 10 else "nvcr.io/nvidia/pytorch:latest"
    return f"""# syntax=docker/dockerfile:1.7
ARG BASE={base}
FROM ${{BASE}} AS build
WORKDIR /workspace
COPY requirements.txt .
RUN --mount=type=cache,target=/root/.cache/pip pip install -r requirements.txt
COPY . .
FROM build AS runtime
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["python", "-u", "-m", "trainer.run"]
"""


def hydra_config(rng: random.Random, index: int) -> str:
    secret = "\n  api_key: 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a" if index == 7 else ""
    return f"""# Experiment {index}
defaults:
  - model: gpt-small
  - _self_
seed: {index}
code_revision: ${{oc.env:GIT_SHA}}
dataset_version: openwebtext-v{index % 5}
trainer:
  max_steps: {rng.choice((10000, 50000, 100000))}
  lr: {rng.choice((1e-4, 3e-4, 6e-4))}
  batch_size: {rng.choice((32, 64, 128))}
checkpoint:
  dir: /ckpt/exp-{index}
  every_n_steps: 1000
  resume: true
logger:
  wandb:
    project: gpt-small
    entity: acme-ml{secret}
hydra:
  run:
    dir: /ckpt/exp-{index}/hydra
"""


def hf_args(rng: random.Random, index: int) -> str:
    return json.dumps({
        "output_dir": f"/ckpt/hf-{index}",
        "per_device_train_batch_size": rng.choice((4, 8, 16)),
        "learning_rate": 2e-5,
        "num_train_epochs": 3,
        "save_strategy": "steps",
        "save_steps": 500,
        "save_total_limit": 3,
        "resume_from_checkpoint": True,
        "seed": index,
        "logging_dir": f"/ckpt/hf-{index}/logs",
        "report_to": ["wandb"],
    }, indent=2) + "\n"


def torchtitan(rng: random.Random, index: int) -> str:
    return f"""[job]
dump_folder = "/ckpt/titan-{index}"
description = "llama3 8b run {index}"

[training]
batch_size = {rng.choice((1, 2, 4))}
seq_len = 8192
steps = {rng.choice((1000, 3000))}
seed = {index}

[checkpoint]
enable_checkpoint = true
folder = "checkpoint"
interval = 500
"""


def notebook(rng: random.Random, index: int) -> str:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": [f"# Exploration {index}\n", "Loss curves.\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["step 100 loss 2.31\n", "step 200 loss 2.05\n"]}],
         "source": ["import json\n", f"runs = json.load(open('runs/{index}.json'))\n", "print(len(runs))\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["import matplotlib.pyplot as plt\n", "plt.plot([1, 2, 3])\n"]},
    ]
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def python_module(rng: random.Random, index: int) -> str:
    model_only = index % 15 == 0  # a checkpoint that cannot resume
    state = "model.state_dict()" if model_only else """{
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "step": step,
            "rng": torch.get_rng_state(),
        }"""
    return f'''"""Training utilities, module {index}."""

from __future__ import annotations

import os

import torch


def save_checkpoint(model, optimizer, scheduler, step: int, folder: str) -> None:
    path = os.path.join(folder, f"step-{{step:08d}}.pt")
    torch.save(
        {state},
        path,
    )


def learning_rate(step: int, warmup: int = {rng.choice((100, 500, 2000))}) -> float:
    return min(1.0, step / warmup)
'''


def misc(rng: random.Random, index: int) -> str:
    return f"torch==2.3.{index % 2}\ntransformers==4.41.{index % 3}\naccelerate==0.30.1\n"


@dataclass(frozen=True)
class Family:
    folder: str
    name: str  # format with {i}
    share: float
    make: Callable[[random.Random, int], str]


FAMILIES = (
    Family("k8s/jobs", "finetune-{i}.yaml", 0.12, k8s_job),
    Family("k8s/pytorchjobs", "pretrain-{i}.yaml", 0.06, pytorch_job),
    Family("runai", "sweep-{i}.yaml", 0.08, runai_crd),
    Family("runai/rest", "llama-sft-{i}.json", 0.06, runai_rest),
    Family("scripts", "launch-{i}.sh", 0.10, launch_script),
    Family("docker", "train-{i}.Dockerfile", 0.04, dockerfile),
    Family("configs/exp", "exp-{i}.yaml", 0.12, hydra_config),
    Family("configs/hf", "args-{i}.json", 0.06, hf_args),
    Family("configs/titan", "llama3-{i}.toml", 0.04, torchtitan),
    Family("notebooks", "explore-{i}.ipynb", 0.04, notebook),
    Family("src/trainer", "module_{i}.py", 0.24, python_module),
    Family("requirements", "req-{i}.txt", 0.04, misc),
)


def generate(root: Path, files: int, seed: int = 1) -> int:
    """Write ``files`` files under ``root``; returns how many were written."""
    rng = random.Random(seed)
    written = 0
    for position, family in enumerate(FAMILIES):
        count = round(files * family.share) if position < len(FAMILIES) - 1 else files - written
        for index in range(count):
            path = root / family.folder / family.name.format(i=index)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(family.make(rng, index), encoding="utf-8")
        written += count
    return written


# --------------------------------------------------------------------------- measuring


def command() -> list[str]:
    """``spikelint`` when installed, else ``python -m spikelint`` from this checkout."""
    installed = shutil.which("spikelint")
    return [installed] if installed else [sys.executable, "-m", "spikelint"]


def environment(bytecode_cache: str | None) -> dict[str, str]:
    """The CLI's environment; ``bytecode_cache`` is a folder for .pyc files (as an installed package has)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPOSITORY) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NO_COLOR", None)
    if bytecode_cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = bytecode_cache
    return env


@dataclass(frozen=True)
class Timing:
    wall: float  # median seconds
    fastest: float  # minimum seconds
    cpu: float  # median user+system CPU seconds of the process and its workers
    code: int  # exit status of the last run

    def row(self) -> str:
        return (f"{self.wall * 1000:7.0f} ms  (min {self.fastest * 1000:.0f}, CPU {self.cpu * 1000:.0f} ms, "
                f"exit {self.code})")


def wall(arguments: list[str], cwd: Path, repeat: int, bytecode_cache: str | None) -> Timing:
    """Wall and CPU time of running the command ``repeat`` times (CPU time is what a busy machine inflates least)."""
    import resource

    times = []
    cpu = []
    code = 0
    env = environment(bytecode_cache)
    if bytecode_cache is not None:
        subprocess.run(arguments, cwd=cwd, env=env, capture_output=True, check=False)  # writes the .pyc files
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(arguments, cwd=cwd, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        code = result.returncode
    return Timing(statistics.median(times), min(times), statistics.median(cpu), code)


def in_process(root: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per phase, engine in this process (one worker)."""
    sys.path.insert(0, str(REPOSITORY))
    from spikelint.config import Config
    from spikelint.engine import Engine
    from spikelint.engine import build_report
    from spikelint.engine import check_paths
    from spikelint.files import discover
    from spikelint.discovery.project import Project
    from spikelint.report import RENDERERS
    from spikelint.report import RenderOptions

    names = ("engine setup", "discovery", "read + parse", "checks", "render text", "total")
    phases: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}

    def now() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    for _ in range(repeat):
        config = Config()
        marks = [now()]
        engine = Engine.create(config)
        marks.append(now())
        found = discover(["."], cwd=root, max_file_size=config.max_file_size)
        marks.append(now())
        project = Project(found.files)
        documents = [project.document(source) for source in found.files]
        marks.append(now())
        results = [engine.check_document(document, project) for document in documents]
        marks.append(now())
        report = build_report(engine, results, len(found.files))
        RENDERERS["text"](report, RenderOptions())
        marks.append(now())
        for position, name in enumerate(names[:-1]):
            phases[name].append(marks[position + 1][0] - marks[position][0])
            cpu[name].append(marks[position + 1][1] - marks[position][1])
        phases["total"].append(marks[-1][0] - marks[0][0])
        cpu["total"].append(marks[-1][1] - marks[0][1])
    cwd = Path.cwd()
    try:
        os.chdir(root)
        runs = []
        for _ in range(repeat):
            started = time.perf_counter()
            result = check_paths(["."], Config(), cwd=root, jobs=1)
            runs.append(time.perf_counter() - started)
    finally:
        os.chdir(cwd)
    summary = {name: (statistics.median(values), statistics.median(cpu[name])) for name, values in phases.items()}
    summary["check_paths (jobs=1)"] = (statistics.median(runs), float("nan"))
    summary["findings"] = (float(len(result.report.findings)), 0.0)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500, help="files in the generated repository (default 500)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement; the median is shown")
    parser.add_argument("--git", action="store_true", help="make the repository a Git work tree (git ls-files)")
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = parser.parse_args(argv)

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="spikelint-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        count = generate(folder, args.files)
        if args.git:
            subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
            subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
        size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and ".git" not in path.parts)
        cli = command()
        rows: list[tuple[str, str]] = []
        cache = tempfile.mkdtemp(prefix="spikelint-pyc-")
        for label, bytecode in (("", cache), (" [no .pyc]", None)):
            rows.append((f"start-up: spikelint --version{label}",
                         wall([*cli, "--version"], folder, args.repeat, bytecode).row()))
            for jobs in (None, 1):
                extra = [] if jobs is None else ["--jobs", str(jobs)]
                name = "cold CLI: check ." + (f" --jobs {jobs}" if jobs else f" (jobs={os.cpu_count()})") + label
                rows.append((name, wall([*cli, "check", ".", *extra], folder, args.repeat, bytecode).row()))
        shutil.rmtree(cache, ignore_errors=True)
        phases = in_process(folder, args.repeat)
        for name, (elapsed, used) in phases.items():
            if name != "findings":
                spent = "" if used != used else f"  (CPU {used * 1000:.1f} ms)"  # NaN: not measured
                rows.append((f"in-process: {name}", f"{elapsed * 1000:7.1f} ms{spent}"))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{count} files, {size / 1024:.0f} KiB, {'git work tree' if args.git else 'plain folder'}, "
              f"{int(phases['findings'][0])} findings, {os.cpu_count()} CPUs (load {load:.1f}), "
              f"Python {sys.version.split()[0]}, median of {args.repeat}")
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"  {name:<{width}}  {value}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
