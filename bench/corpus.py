"""A mixed GPU-team repository anyone can regenerate: same seed, same bytes.

Workloads (Kubernetes Jobs, Deployments, PyTorchJobs, JobSets, Run:ai CRDs and REST bodies),
configs (Hydra, HF, torchtitan), launch scripts, Dockerfiles, notebooks, training code,
``.env`` files and READMEs; about one file in 40 carries a fake credential generated here from
the seed (never a real one).  The file kinds and their shares are those of ``lint_bench.py``
plus the workload kinds checkov also reads, so the side-by-side compares like with like.

    python bench/corpus.py /tmp/corpus-500 --files 500          # 500, 5000 or 50000
    python bench/corpus.py /tmp/corpus-5k --files 5000 --seed 7
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import lint_bench  # noqa: E402 - the bench folder is not a package
import secrets_bench  # noqa: E402

SIZES = (500, 5000, 50000)


def _leak(rng: random.Random) -> tuple[str, str] | None:
    return secrets_bench.Leaks(rng).token() if rng.random() < 0.025 else None


def jobset(rng: random.Random, index: int) -> str:
    replicas = rng.choice((2, 4, 8))
    return f"""apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: llm-pretrain-{index}
  labels: {{kueue.x-k8s.io/queue-name: gpu-queue}}
spec:
  failurePolicy: {{maxRestarts: 3}}
  replicatedJobs:
    - name: workers
      replicas: {replicas}
      template:
        spec:
          parallelism: 2
          completions: 2
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: trainer
                  image: {lint_bench.image(rng, index)}
                  command: [bash, -c, "set -euo pipefail; torchrun --nnodes={replicas * 2} train.py --resume auto"]
                  env:
                    - {{name: CHECKPOINT_DIR, value: /ckpt/llm-{index}}}
                  resources: {{limits: {{nvidia.com/gpu: 8}}}}
                  volumeMounts: [{{name: ckpt, mountPath: /ckpt}}]
              volumes: [{{name: ckpt, persistentVolumeClaim: {{claimName: ckpt-{index % 5}}}}}]
"""


def deployment(rng: random.Random, index: int) -> str:
    leak = _leak(rng)
    env = f"\n            - name: {leak[0]}\n              value: \"{leak[1]}\"" if leak else ""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve-{index}
  namespace: inference
spec:
  replicas: {rng.choice((1, 2, 3))}
  selector: {{matchLabels: {{app: serve-{index}}}}}
  template:
    metadata:
      labels: {{app: serve-{index}}}
    spec:
      containers:
        - name: server
          image: {lint_bench.image(rng, index)}
          args: ["--model", "/models/m-{index % 12}", "--port", "8000"]
          ports: [{{containerPort: 8000}}]
          env:
            - name: HF_HOME
              value: /models/cache{env}
          resources:
            requests: {{cpu: "4", memory: 32Gi}}
            limits: {{nvidia.com/gpu: 1, memory: 32Gi}}
          readinessProbe: {{httpGet: {{path: /health, port: 8000}}}}
"""


def dotenv(rng: random.Random, index: int) -> str:
    lines, _ = secrets_bench.dotenv(rng, index, _leak(rng))
    return "\n".join(lines) + "\n"


def readme(rng: random.Random, index: int) -> str:
    lines, _ = secrets_bench.readme(rng, index, None)
    return "\n".join(lines) + "\n"


def script_with_leak(rng: random.Random, index: int) -> str:
    leak = _leak(rng)
    text = lint_bench.launch_script(rng, index)
    return text + (f"export {leak[0]}={leak[1]}\n" if leak else "")


Family = lint_bench.Family


FAMILIES: tuple[Family, ...] = (
    Family("k8s/jobs", "finetune-{i}.yaml", 0.10, lint_bench.k8s_job),
    Family("k8s/serve", "serve-{i}.yaml", 0.06, deployment),
    Family("k8s/pytorchjobs", "pretrain-{i}.yaml", 0.05, lint_bench.pytorch_job),
    Family("k8s/jobsets", "jobset-{i}.yaml", 0.04, jobset),
    Family("runai", "sweep-{i}.yaml", 0.07, lint_bench.runai_crd),
    Family("runai/rest", "llama-sft-{i}.json", 0.05, lint_bench.runai_rest),
    Family("scripts", "launch-{i}.sh", 0.09, script_with_leak),
    Family("docker", "train-{i}.Dockerfile", 0.04, lint_bench.dockerfile),
    Family("configs/exp", "exp-{i}.yaml", 0.10, lint_bench.hydra_config),
    Family("configs/hf", "args-{i}.json", 0.05, lint_bench.hf_args),
    Family("configs/titan", "llama3-{i}.toml", 0.03, lint_bench.torchtitan),
    Family("notebooks", "explore-{i}.ipynb", 0.04, lint_bench.notebook),
    Family("src/trainer", "module_{i}.py", 0.20, lint_bench.python_module),
    Family("env", "team-{i}.env", 0.02, dotenv),
    Family("docs", "README-{i}.md", 0.03, readme),
    Family("requirements", "req-{i}.txt", 0.03, lint_bench.misc),
)


def generate(root: Path, files: int, seed: int = 1) -> tuple[int, int]:
    """Write ``files`` files under ``root`` (same seed, same bytes); returns (files, bytes)."""
    rng = random.Random(seed)
    written = size = 0
    for position, family in enumerate(FAMILIES):
        count = round(files * family.share) if position < len(FAMILIES) - 1 else files - written
        for index in range(count):
            path = root / family.folder / family.name.format(i=index)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = family.make(rng, index).encode("utf-8")
            path.write_bytes(data)
            size += len(data)
        written += count
    return written, size


def digest(root: Path) -> str:
    """One hash of every path and its bytes: proof that two runs generated the same corpus."""
    total = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        total.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return total.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="folder to write (must be empty or absent)")
    parser.add_argument("--files", type=int, default=500, help=f"how many files (the published sizes: {SIZES})")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.root.exists() and any(args.root.iterdir()):
        parser.error(f"{args.root} is not empty")
    files, size = generate(args.root, args.files, args.seed)
    print(f"{files} files, {size / 1e6:.1f} MB in {args.root} (seed {args.seed}, digest {digest(args.root)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
