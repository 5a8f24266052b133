"""Run ``spikelint check`` on checked-out public repositories and count what it reports.

Precision on repositories nobody here wrote is the measure that matters most: this script gives
the raw material for it (findings per rule and per repository, the gate's verdict, wall time and
peak memory), and writes every finding to a JSONL file so each one can be read and judged.

    python bench/repo_survey.py ~/src/NeMo ~/src/kueue ...          # one table per run
    python bench/repo_survey.py --out findings.jsonl --compare old.jsonl DIR...

Each argument is a repository's work tree; spikelint runs inside it with its default settings
(``--fail-on error`` decides the "gate" column), exactly as a new user would meet it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def survey(repo: Path) -> tuple[list[dict[str, object]], float, int, int]:
    """Findings, wall seconds, peak RSS (KiB) and exit code of one default run in ``repo``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "spikelint", "check", "--format", "json", "."],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    if done.returncode not in (0, 1):
        print(f"{repo}: exit {done.returncode}: {done.stderr.strip()[-500:]}", file=sys.stderr)
        return [], wall, peak, done.returncode
    findings = json.loads(done.stdout)["findings"]
    return findings, wall, peak, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, help="write every finding as one JSON line here")
    parser.add_argument("--compare", type=Path, help="an earlier --out file to compare counts with")
    options = parser.parse_args(argv)

    earlier: Counter[str] = Counter()
    if options.compare:
        for line in options.compare.read_text().splitlines():
            earlier[json.loads(line)["rule"]] += 1

    total: Counter[str] = Counter()
    failing_gate = 0
    lines: list[str] = []
    print(f"{'repository':24} {'findings':>8} {'errors':>6} {'gate':>5} {'wall s':>7} {'RSS MB':>7}  top rules")
    for repo in options.repos:
        findings, wall, peak, code = survey(repo)
        rules = Counter(str(f["rule"]) for f in findings)
        errors = sum(1 for f in findings if f["severity"] == "error")
        failing_gate += code == 1
        total.update(rules)
        top = ", ".join(f"{rule} {n}" for rule, n in rules.most_common(4))
        print(f"{repo.name:24} {len(findings):8} {errors:6} {'fail' if code else 'pass':>5} "
              f"{wall:7.1f} {peak / 1024:7.0f}  {top}")
        lines.extend(json.dumps({"repo": repo.name, **f}) for f in findings)
    print(f"\n{sum(total.values())} findings; the default gate fails {failing_gate} of {len(options.repos)}")
    for rule in sorted(set(total) | set(earlier)):
        change = f" (was {earlier[rule]})" if options.compare else ""
        print(f"  {rule}: {total[rule]}{change}")
    if options.out:
        options.out.write_text("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
