"""Precision from hand labels: read the JSONL files that labelling wrote (one object per finding,
``rule``, ``repo``, ``severity`` and ``label`` in TP/FP/NONTRAIN/NOISY) and print precision per rule
and per repository, TP / (TP + FP + NONTRAIN), as docs/precision.md reports it.

    python bench/label_score.py labels/*.jsonl

NOISY findings (true by the rule's letter, of little value) count on neither side.  Where a rule
was sampled, its precision is the sample's.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections import defaultdict
from pathlib import Path

LABELS = ("TP", "FP", "NONTRAIN", "NOISY")


def precision(counts: Counter[str]) -> float | None:
    judged = counts["TP"] + counts["FP"] + counts["NONTRAIN"]
    return counts["TP"] / judged if judged else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    options = parser.parse_args(argv)
    by_rule: dict[str, Counter[str]] = defaultdict(Counter)
    by_repo: dict[str, Counter[str]] = defaultdict(Counter)
    untrue_errors: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for path in options.files:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            label = str(entry.get("label", "")).upper()
            if label not in LABELS:
                continue
            by_rule[entry["rule"]][label] += 1
            by_repo[entry["repo"]][label] += 1
            total[label] += 1
            if label in ("FP", "NONTRAIN") and entry.get("severity") == "error":
                untrue_errors[entry["repo"]] += 1
    print(f"{'':24} {'TP':>4} {'FP':>4} {'NONTR':>5} {'NOISY':>5}  precision  untrue errors")
    for title, table in (("rule", by_rule), ("repository", by_repo)):
        print(f"-- per {title}")
        for name in sorted(table):
            counts = table[name]
            value = precision(counts)
            shown = f"{value:.2f}" if value is not None else "  - "
            errors = f"{untrue_errors[name]:>5}" if title == "repository" else ""
            print(f"{name:24} {counts['TP']:>4} {counts['FP']:>4} {counts['NONTRAIN']:>5} {counts['NOISY']:>5}"
                  f"  {shown:>9}  {errors}")
    value = precision(total)
    print(f"{'all':24} {total['TP']:>4} {total['FP']:>4} {total['NONTRAIN']:>5} {total['NOISY']:>5}  "
          f"{value:.3f}  {sum(untrue_errors.values())} untrue errors over {len(by_repo)} repositories")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
