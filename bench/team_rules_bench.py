"""What twenty team rules cost: ``spikelint check .`` on the 500-file corpus with and without them.

The twenty rules are the shapes teams write (docs/team-rules.md): registry, digest, owner label, GPU cap
with an exception, team volume, debug switches, deadline, label values, Slurm partition and account,
argv flags, per-mount and per-env rules, with and without ``when`` guards and message templates. Runs
alternate (with, without, with, …) so a busy machine weighs on both alike; the medians are compared.

    python bench/team_rules_bench.py                  # 500 files, 7 runs each
    python bench/team_rules_bench.py --files 2000 --runs 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
BUDGET = 0.25  # the bound: twenty rules add at most 25% to `check .`

RULES = [
    ("for_each: container", "container.image == null || !container.image.resolved || "
                            "container.image.registry == \"harbor.example.org\""),
    ("for_each: container", "container.image == null || !container.image.resolved || container.image.digest != null"),
    ("applies_to: training_workload", "\"team\" in workload.labels || \"account\" in workload.slurm"),
    ("", "workload.gpus <= 16.0 || (\"acme.io/gpu-exception\" in workload.annotations && "
         "workload.annotations[\"acme.io/gpu-exception\"] == \"approved\")"),
    ("applies_to: training_workload", "workload.form == \"slurm\" || workload.volumes.exists(v, v.persistent)"),
    ("for_each: env", "!(env.name in [\"CUDA_LAUNCH_BLOCKING\", \"NCCL_DEBUG_SUBSYS\"] && env.value == \"1\")"),
    ("applies_to: training_workload", "workload.deadline_seconds == null || workload.deadline_seconds <= 604800"),
    ("", "!(\"env\" in workload.labels) || workload.labels[\"env\"] in [\"dev\", \"staging\", \"prod\"]"),
    ("", "workload.form != \"slurm\" || !(\"partition\" in workload.slurm) || "
         "workload.slurm[\"partition\"] != \"debug\""),
    ("for_each: container", "!container.argv.exists(a, a == \"--debug\" || a.startsWith(\"--profile\"))"),
    ("for_each: mount", "!mount.path.startsWith(\"/tmp\") || !mount.persistent"),
    ("for_each: volume", "volume.source != \"hostPath\""),
    ("", "workload.pods <= 64"),
    ("", "workload.retries <= 10"),
    ("", "workload.grace_period_seconds == null || workload.grace_period_seconds >= 30"),
    ("", "workload.priority_class == null || workload.priority_class != \"system-cluster-critical\""),
    ("for_each: container", "container.role != \"main\" || container.name.size() <= 63"),
    ("", "workload.name == null || workload.name.matches(\"^[a-z0-9-]+$\")"),
    ("for_each: env", "env.from_secret || !env.name.endsWith(\"_TOKEN\")"),
    ("applies_to: training_workload", "workload.containers.all(c, c.role != \"main\" || c.entry_point != null || "
                                      "c.argv.size() > 0)"),
]


def rule_file() -> str:
    lines = ["rules:"]
    for number, (scope, expression) in enumerate(RULES, 1):
        lines += [f"  - id: BENCH{number:03d}", f"    name: bench-rule-{number}", "    severity: warning"]
        if scope:
            lines.append(f"    {scope}")
        lines += [f"    assert: '{expression.replace(chr(39), chr(39) * 2)}'",
                  f"    message: 'rule {number} does not hold on {{{{ workload.kind }}}} {{{{ workload.name }}}}'"]
    return "\n".join(lines) + "\n"


def timed(corpus: Path, config: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "spikelint", "check", ".", "--config", str(config), "--format", "json",
                    "--fail-on", "never"], cwd=corpus, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="spikelint-team-bench-") as scratch:
        root = Path(scratch)
        corpus = root / "corpus"
        subprocess.run([sys.executable, str(BENCH / "corpus.py"), str(corpus), "--files", str(args.files)],
                       check=True, stdout=subprocess.DEVNULL)
        (root / "rules").mkdir()
        (root / "rules" / "team.yaml").write_text(rule_file(), encoding="utf-8")
        plain, team = root / "plain.yaml", root / "team.yaml"
        plain.write_text("fail_on: never\n", encoding="utf-8")
        team.write_text(f"fail_on: never\nrules_dir: {root / 'rules'}\n", encoding="utf-8")
        count = subprocess.run([sys.executable, "-m", "spikelint", "check", ".", "--config", str(team), "--select",
                                "BENCH,SPK004", "--format", "json", "--fail-on", "never"], cwd=corpus,
                               capture_output=True, text=True, check=True).stdout.count('"rule": "')
        timed(corpus, plain), timed(corpus, team)  # warm the file cache and the catalog index
        without, with_rules = [], []
        for _ in range(args.runs):
            with_rules.append(timed(corpus, team))
            without.append(timed(corpus, plain))
    base, extra = statistics.median(without), statistics.median(with_rules)
    overhead = extra / base - 1
    print(f"{args.files} files, {len(RULES)} team rules ({count} findings of them), {args.runs} runs each, medians:")
    print(f"  without team rules {base:.3f} s   with {extra:.3f} s   cost {overhead * 100:+.1f}% "
          f"(budget +{BUDGET * 100:.0f}%)")
    return 0 if overhead <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
