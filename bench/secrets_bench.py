"""Secret-scanning benchmark: generate a realistic ML repository with seeded leaks, then measure
lines per second of the SPK2 checks (one process, one core) and the recall/precision on the seeds.

The repository is generated at run time (nothing token-shaped is stored in Git): Kubernetes
Jobs, Run:ai CRDs and REST bodies, launch scripts, Dockerfiles, Hydra configs, training code,
notebooks, ``.env`` files and READMEs, full of the near misses that make scanners noisy (model
revisions, checksums, tokenizer special tokens, secret names, env references).  About one
file in eight gets one leak, of a random type, in a random realistic place.

Measured (CPU seconds of the benchmark process, so other load on the machine does not count):
  * scan: the SPK2 document and workload checks over already-parsed documents (what the
    "20,000 lines/s per core" budget is about);
  * end to end: ``check_paths`` with ``--select SPK2`` and one job (discovery, reading,
    parsing, adapters, checks, engine);
  * optionally detect-secrets 1.5 over the same files (``--compare``), for reference.

    python bench/secrets_bench.py                     # 1000 files
    python bench/secrets_bench.py --files 3000 --compare --json
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import tempfile
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Callable

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


@dataclass
class Corpus:
    root: Path
    seeds: set[tuple[str, int]] = field(default_factory=set)  # (relative path, line) of each leak
    lines: int = 0
    files: int = 0


class Leaks:
    """Fake credentials of many shapes, generated from a seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def chars(self, alphabet: str, length: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(length))

    def token(self) -> tuple[str, str]:
        """(env-ish name, value) of a random credential type."""
        kind = self.rng.randrange(9)
        if kind == 0:
            return "HF_TOKEN", "hf_" + self.chars(ALNUM, 34)
        if kind == 1:
            return "WANDB_API_KEY", self.chars(HEX, 40)
        if kind == 2:
            return "GITHUB_TOKEN", "ghp_" + self.chars(ALNUM, 36)
        if kind == 3:
            return "OPENAI_API_KEY", "sk-proj-" + self.chars(ALNUM, 48) + "T3BlbkFJ" + self.chars(ALNUM, 48)
        if kind == 4:
            return "AWS_ACCESS_KEY_ID", "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)
        if kind == 5:
            return "AWS_SECRET_ACCESS_KEY", self.chars(ALNUM + "/+", 40)
        if kind == 6:
            return "NGC_API_KEY", "nvapi-" + self.chars(ALNUM + "-_", 64)
        if kind == 7:
            return "DB_PASSWORD", self.chars(ALNUM, 8) + "!" + self.chars(string.digits, 2)
        return "ANTHROPIC_API_KEY", "sk-ant-api03-" + self.chars(ALNUM, 93) + "AA"


# --------------------------------------------------------------------------- file generators
# Each returns the file's lines; a leak (when given) is placed and its line recorded.

Leak = tuple[str, str] | None


def k8s_job(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [
        f"# fine-tuning job {index}", "apiVersion: batch/v1", "kind: Job", "metadata:", f"  name: ft-{index}",
        "  labels:", "    runai/queue: team-nlp", f"    code-revision: \"{rng.getrandbits(160):040x}\"", "spec:",
        "  backoffLimit: 3", "  ttlSecondsAfterFinished: 86400", "  template:", "    spec:",
        "      restartPolicy: Never", "      schedulerName: runai-scheduler", "      containers:",
        "        - name: trainer",
        f"          image: harbor.example.org/ml/trainer:1.{index % 9}.0@sha256:{rng.getrandbits(256):064x}",
        "          command: [\"torchrun\", \"--nproc_per_node=8\", \"train.py\"]",
        "          args: [\"--config\", \"/cfg/train.yaml\", \"--output_dir\", \"/ckpt/run\", \"--max_tokens\", \"4096\"]",
        "          env:", "            - name: TOKENIZERS_PARALLELISM", "              value: \"false\"",
        "            - name: HF_TOKEN", "              valueFrom:",
        "                secretKeyRef: {name: hf-credentials, key: token}", "            - name: WANDB_PROJECT",
        "              value: llama-sft", "            - name: NCCL_DEBUG", "              value: WARN",
        "          resources:", "            limits: {nvidia.com/gpu: 8}", "          volumeMounts:",
        "            - {name: ckpt, mountPath: /ckpt}", "            - {name: cfg, mountPath: /cfg, readOnly: true}",
        "      volumes:", "        - name: ckpt", "          persistentVolumeClaim: {claimName: ckpt}",
        "        - name: cfg", "          configMap: {name: train-cfg}",
    ]
    if leak is None:
        return lines, None
    name, value = leak
    at = lines.index("            - name: WANDB_PROJECT")
    lines[at:at] = [f"            - name: {name}", f"              value: \"{value}\""]
    return lines, at + 2


def runai_crd(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [
        "apiVersion: run.ai/v2alpha1", "kind: TrainingWorkload", "metadata:", f"  name: pretrain-{index}",
        "  namespace: runai-llm", "spec:", "  image:",
        f"    value: harbor.example.org/llm/titan:0.{index % 7}.1@sha256:{rng.getrandbits(256):064x}",
        "  gpu: {value: \"8\"}", "  command: {value: torchrun}",
        "  arguments: {value: \"--nnodes 1 --nproc_per_node 8 -m torchtitan.train --job.config_file /cfg/a.toml\"}",
        "  environment:", "    items:", "      NCCL_DEBUG: {value: WARN}",
        "      COMET_API_KEY: {value: \"SECRET:comet-credentials,api-key\"}", "  pvcs:", "    items:",
        "      ckpt: {value: {claimName: ckpt, existingPvc: true, path: /ckpt}}", "  backoffLimit: {value: 3}",
    ]
    if leak is None:
        return lines, None
    lines.insert(14, f"      {leak[0]}: {{value: \"{leak[1]}\"}}")
    return lines, 15


def rest_json(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    env = [{"name": "WANDB_PROJECT", "value": "sft"}, {"name": "HF_TOKEN", "secret": {"name": "hf", "key": "token"}}]
    if leak is not None:
        env.append({"name": leak[0], "value": leak[1]})
    body = {"name": f"train-{index}", "projectId": "1042", "clusterId": f"{rng.getrandbits(128):032x}",
            "spec": {"image": f"harbor.example.org/ml/t:1.0.{index % 5}", "compute": {"gpuDevicesRequest": 4},
                     "command": "python", "args": "train.py --config /cfg/a.yaml", "environmentVariables": env,
                     "storage": {"pvc": [{"claimName": "ckpt", "existingPvc": True, "path": "/ckpt"}]}}}
    lines = json.dumps(body, indent=2).splitlines()
    if leak is None:
        return lines, None
    return lines, next(number for number, line in enumerate(lines, 1) if leak[1] in line)


def launch_script(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [
        "#!/usr/bin/env bash", f"# launch run {index}", "set -euo pipefail", "",
        "MODEL=meta-llama/Meta-Llama-3-8B", f"REVISION={rng.getrandbits(160):040x}", "OUT=/ckpt/${RUN_NAME:-run}",
        "export HF_HOME=/data/hf", "export WANDB_PROJECT=llama-sft", "", "if [ -z \"${HF_TOKEN:-}\" ]; then",
        "  echo 'HF_TOKEN is not set: export HF_TOKEN=<your token>' >&2", "  exit 1", "fi",
        "huggingface-cli download \"$MODEL\" --revision \"$REVISION\" --token \"$HF_TOKEN\"",
        "torchrun --nproc_per_node 8 train.py \\", "  --model \"$MODEL\" \\", "  --output_dir \"$OUT\" \\",
        "  --max_tokens 4096 --seed 1234 \\", "  --report_to wandb 2>&1 | tee \"$OUT/train.log\"",
    ]
    if leak is None:
        return lines, None
    where = rng.randrange(3)
    if where == 0:
        lines.insert(9, f"export {leak[0]}=\"{leak[1]}\"")
    elif where == 1:
        flag = "--password" if "PASSWORD" in leak[0] else "--token"
        lines.insert(9, f"python tools/push.py {flag} {leak[1]}")
    elif "PASSWORD" in leak[0]:
        lines.insert(9, f"git clone https://ci:{leak[1]}@git.example.org/ml/tools.git /tools")
    else:
        lines.insert(9, f"curl -fsSL -H \"Authorization: Bearer {leak[1]}\" https://models.example.org/x")
    return lines, 10


def dockerfile(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [
        f"FROM nvcr.io/nvidia/pytorch:24.0{index % 9}-py3@sha256:{rng.getrandbits(256):064x}",
        "ARG PIP_INDEX_URL=https://pypi.example.org/simple", "ENV HF_HOME=/data/hf TOKENIZERS_PARALLELISM=false",
        "WORKDIR /workspace", "COPY requirements.txt .",
        "RUN --mount=type=secret,id=pip pip install --no-cache-dir -r requirements.txt",
        "RUN --mount=type=secret,id=hf HF_TOKEN=$(cat /run/secrets/hf) huggingface-cli download acme/tok",
        "COPY src/ /workspace/src/", f"LABEL org.opencontainers.image.revision={rng.getrandbits(160):040x}",
        "ENTRYPOINT [\"python\", \"-m\", \"src.train\"]",
    ]
    if leak is None:
        return lines, None
    lines.insert(3, f"ENV {leak[0]}={leak[1]}" if rng.random() < 0.5 else f"ARG {leak[0]}={leak[1]}")
    return lines, 4


def hydra_config(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [
        "defaults:", "  - model: llama3_8b", "  - trainer: fsdp", "  - _self_", f"seed: {index}", "model:",
        "  name_or_path: meta-llama/Meta-Llama-3-8B", f"  revision: {rng.getrandbits(160):040x}",
        "tokenizer:", "  pad_token: \"<|finetune_right_pad_id|>\"", "  eos_token: \"<|eot_id|>\"", "  max_tokens: 8192",
        "data:", f"  checksum: {rng.getrandbits(128):032x}", f"  dataset_id: {rng.getrandbits(128):032x}",
        "  path: /data/sft/v3", "trainer:", "  max_steps: 20000", "  save_steps: 500",
        "  output_dir: /ckpt/${oc.env:RUN_NAME}", "logger:", "  wandb:", "    project: sft", "    entity: acme",
        "    api_key: ${oc.env:WANDB_API_KEY}", "hub:", "  repo_id: acme/sft", "  token: ${oc.env:HF_TOKEN}",
        "  secret_name: hf-credentials",
    ]
    if leak is None:
        return lines, None
    key = {"HF_TOKEN": "hub_token", "DB_PASSWORD": "password"}.get(leak[0], "api_key")
    lines.insert(20, f"tracker:\n  {key}: {leak[1]}")
    return "\n".join(lines).splitlines(), 22


def training_code(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [
        "\"\"\"Training entry point.\"\"\"", "import os", "", "import torch", "import wandb",
        "from transformers import AutoModelForCausalLM, AutoTokenizer", "",
        f"REVISION = \"{rng.getrandbits(160):040x}\"", "", "def main() -> None:",
        "    token = os.environ.get(\"HF_TOKEN\")",
        "    tok = AutoTokenizer.from_pretrained(\"meta-llama/Meta-Llama-3-8B\", revision=REVISION, token=token)",
        "    model = AutoModelForCausalLM.from_pretrained(\"meta-llama/Meta-Llama-3-8B\", torch_dtype=torch.bfloat16)",
        "    wandb.init(project=\"sft\", config={\"lr\": 2e-5, \"pad_token\": tok.pad_token})",
        "    for step in range(1000):", "        loss = model(**tok(\"hello\", return_tensors=\"pt\")).logits.mean()",
        "        loss.backward()", "        if step % 100 == 0:",
        "            torch.save({\"model\": model.state_dict(), \"step\": step}, f\"/ckpt/step{step}.pt\")",
        "", "if __name__ == \"__main__\":", "    main()",
    ]
    if leak is None:
        return lines, None
    lines.insert(8, f"{leak[0]} = \"{leak[1]}\"")
    return lines, 9


def notebook(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    source = ["import os\n", "from datasets import load_dataset\n", "ds = load_dataset(\"acme/sft\", split=\"train\")\n",
              "ds[0]"]
    outputs: list[dict[str, object]] = [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                         "data": {"text/plain": ["{'prompt': 'Explain FSDP', 'answer': '...'}"]}}]
    if leak is not None:
        outputs.append({"output_type": "stream", "name": "stdout", "text": [f"{leak[0]}={leak[1]}\n"]})
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [f"# Dataset look {index}"]},
             {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": outputs, "source": source}]
    lines = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1).splitlines()
    if leak is None:
        return lines, None
    return lines, next(number for number, line in enumerate(lines, 1) if leak[1] in line)


def dotenv(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = ["# copy to .env and fill in", "HF_TOKEN=", "WANDB_API_KEY=<your key>", "WANDB_PROJECT=sft",
             "DATABASE_URL=postgres://postgres:postgres@localhost:5432/app", "OPENAI_API_KEY=sk-..."]
    if leak is None:
        return lines, None
    lines.append(f"{leak[0]}={leak[1]}")
    return lines, len(lines)


def readme(rng: random.Random, index: int, leak: Leak) -> tuple[list[str], int | None]:
    lines = [f"# Project {index}", "", "Set `HF_TOKEN` (`export HF_TOKEN=<your token>`) and run:", "", "```bash",
             "huggingface-cli login --token $HF_TOKEN", "bash scripts/launch.sh", "```", "",
             f"Model revision `{rng.getrandbits(160):040x}`; dataset checksum `{rng.getrandbits(128):032x}`.",
             "The password: is read from the vault.", ""] * 3
    return lines, None


GENERATORS: tuple[tuple[str, Callable[[random.Random, int, Leak], tuple[list[str], int | None]], int], ...] = (
    ("k8s/job-{}.yaml", k8s_job, 20), ("runai/tw-{}.yaml", runai_crd, 10), ("rest/w-{}.json", rest_json, 8),
    ("scripts/launch-{}.sh", launch_script, 15), ("docker/{}.Dockerfile", dockerfile, 8),
    ("conf/exp-{}.yaml", hydra_config, 15), ("src/train_{}.py", training_code, 12), ("nb/look-{}.ipynb", notebook, 5),
    ("env/{}.env", dotenv, 3), ("docs/README-{}.md", readme, 4),
)


def generate(root: Path, files: int, seed: int, leak_rate: float) -> Corpus:
    rng = random.Random(seed)
    leaks = Leaks(rng)
    corpus = Corpus(root)
    weights = [weight for _, _, weight in GENERATORS]
    for index in range(files):
        pattern, generator, _ = rng.choices(GENERATORS, weights)[0]
        leak = leaks.token() if rng.random() < leak_rate and generator is not readme else None
        lines, line = generator(rng, index, leak)
        relative = pattern.format(index)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        corpus.lines += len(lines)
        corpus.files += 1
        if line is not None:
            corpus.seeds.add((relative, line))
    return corpus


# --------------------------------------------------------------------------- measurements


def time_scan(corpus: Corpus, repeat: int) -> tuple[float, set[tuple[str, int]]]:
    """CPU seconds of this process for the SPK2 checks over parsed documents (best of ``repeat``), and
    what they found.  CPU time, not wall time: on a shared machine other processes inflate wall time."""
    from datetime import date

    from spikelint.adapters import workloads_in
    from spikelint.checks.registry import CheckContext
    from spikelint.checks.secrets.checks import secret_env_literals
    from spikelint.checks.secrets.checks import secrets_in_document
    from spikelint.config import Config
    from spikelint.documents import read_document
    from spikelint.files import detect_kind
    from spikelint.model import SourceFile
    from spikelint.discovery.project import Project

    config = Config(select=("SPK2",))
    paths = sorted(path for path in corpus.root.rglob("*") if path.is_file())
    sources = [SourceFile(str(path.relative_to(corpus.root)), str(path), detect_kind(path.name)) for path in paths]
    documents = [read_document(source) for source in sources]
    workloads = [workloads_in(document, config) for document in documents]
    project = Project(sources)
    contexts = [CheckContext(config, project, date.today(), tuple(items)) for items in workloads]
    best = float("inf")
    found: set[tuple[str, int]] = set()
    for _ in range(repeat):
        found = set()
        start = time.process_time()
        for document, items, context in zip(documents, workloads, contexts):
            for problem in secrets_in_document(document, context):
                found.add((document.path, problem.line))
            for workload in items:
                for problem in secret_env_literals(workload, document, context):
                    found.add((document.path, problem.line))
        best = min(best, time.process_time() - start)
    return best, found


def time_end_to_end(corpus: Corpus) -> float:
    from spikelint.config import Config
    from spikelint.engine import check_paths

    start = time.process_time()
    check_paths([str(corpus.root)], Config(select=("SPK2",)), cwd=corpus.root, jobs=1)
    return time.process_time() - start


def time_detect_secrets(corpus: Corpus) -> tuple[float, set[tuple[str, int]]]:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    paths = sorted(str(path) for path in corpus.root.rglob("*") if path.is_file())
    found: set[tuple[str, int]] = set()
    with default_settings():
        start = time.process_time()
        collection = SecretsCollection()
        for path in paths:
            collection.scan_file(path)
        elapsed = time.process_time() - start
    for filename, secret in collection:
        found.add((str(Path(filename).relative_to(corpus.root)), secret.line_number))
    return elapsed, found


def score(found: set[tuple[str, int]], seeds: set[tuple[str, int]]) -> dict[str, float]:
    hits = len(found & seeds)
    return {"recall": hits / len(seeds) if seeds else 1.0, "precision": hits / len(found) if found else 1.0,
            "findings": float(len(found)), "missed": float(len(seeds - found)), "spurious": float(len(found - seeds))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--leak-rate", type=float, default=0.125)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", action="store_true", help="also time detect-secrets on the same files")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="spikelint-secrets-bench-") as folder:
        corpus = generate(Path(folder), options.files, options.seed, options.leak_rate)
        scan_seconds, found = time_scan(corpus, options.repeat)
        end_to_end = time_end_to_end(corpus)
        result: dict[str, object] = {
            "files": corpus.files, "lines": corpus.lines, "seeded_leaks": len(corpus.seeds),
            "scan_seconds": round(scan_seconds, 4), "scan_lines_per_second": round(corpus.lines / scan_seconds),
            "end_to_end_seconds": round(end_to_end, 4),
            "end_to_end_lines_per_second": round(corpus.lines / end_to_end),
            "spikelint": score(found, corpus.seeds),
        }
        if options.compare:
            seconds, ds_found = time_detect_secrets(corpus)
            result["detect_secrets_seconds"] = round(seconds, 4)
            result["detect_secrets_lines_per_second"] = round(corpus.lines / seconds)
            result["detect_secrets"] = score(ds_found, corpus.seeds)
    if options.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
