"""Per-family precision and recall of ``spikelint check`` on the held-out realistic files.

Runs the real command line (``python -m spikelint check tests/realworld/<repo> --format json``), so
discovery, kind detection, CRLF handling and the multi-file repository view are measured as
a user gets them, and compares its findings with the expectations written into the files
(the markers and sidecars that ``tests/test_realworld.py`` reads).

    python bench/realworld_score.py            # table per family, then every disagreement
    python bench/realworld_score.py --json     # the same as JSON

A finding matches when path, line and rule agree; the same finding reported twice counts once as a
false positive.  A crash (exit code 2, a traceback, an
internal-error message) counts as one and is reported; the acceptance bar is zero.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_realworld import REALWORLD  # noqa: E402
from test_realworld import load_case  # noqa: E402
from test_realworld import realworld_files  # noqa: E402

FAMILIES = ("SPK0", "SPK1", "SPK2", "SPK3", "SPK4", "SPK5", "SPK6", "SPK7")
TARGETS = {"SPK0": 0.95, "SPK1": 0.95, "SPK2": 0.95, "SPK3": 0.9, "SPK4": 0.9, "SPK5": 0.9, "SPK7": 0.9}

Key = tuple[str, int, str]  # path relative to tests/realworld, line, rule


class Score(NamedTuple):
    family: str
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_positives + self.false_negatives
        return self.true_positives / wanted if wanted else 1.0


def expected_findings() -> set[Key]:
    found: set[Key] = set()
    for path in realworld_files():
        case = load_case(path)
        found.update((case.name, line, rule) for line, rule in case.expected)
    return found


def run_check() -> tuple[list[Key], list[str], int]:
    """The findings of the CLI run once per pretend repository, the crash reports, and the files checked.

    Each top-level folder is its own repository, as in the tests: the command runs inside it
    (so its ``.spikelint.yaml`` applies), and a config referenced by a workload is looked up
    among that repository's files only.  Findings are returned as a list: a finding reported
    twice at one place is a false positive the second time.
    """
    found: list[Key] = []
    crashes: list[str] = []
    files = 0
    for repository in sorted(path for path in REALWORLD.iterdir() if path.is_dir()):
        command = [sys.executable, "-m", "spikelint", "check", ".", "--format", "json", "--fail-on", "never",
                   "--jobs", "1"]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
        result = subprocess.run(command, cwd=repository, capture_output=True, text=True, check=False, env=environment)
        if result.returncode != 0 or "Traceback" in result.stderr or "internal error" in result.stderr.lower():
            crashes.append(f"{repository.name}: exit {result.returncode}: {result.stderr.strip()[-2000:]}")
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError:
            crashes.append(f"{repository.name}: no JSON report")
            continue
        found.extend((f"{repository.name}/{finding['path']}", finding["line"], finding["rule"])
                     for finding in report["findings"])
        files += report.get("summary", {}).get("files", 0)
    return found, crashes, files


def score(expected: set[Key], reported: list[Key]) -> list[Score]:
    counts: Counter[tuple[str, str]] = Counter()
    found = set(reported)
    for key in expected | found:
        family = key[2][:4]
        outcome = "tp" if key in expected and key in found else ("fn" if key in expected else "fp")
        counts[(family, outcome)] += 1
    for key, times in Counter(reported).items():
        counts[(key[2][:4], "fp")] += times - 1  # the same finding again
    return [Score(family, counts[(family, "tp")], counts[(family, "fp")], counts[(family, "fn")]) for family in FAMILIES]


def render(scores: list[Score], expected: set[Key], reported: list[Key], crashes: list[str], files: int) -> str:
    found = set(reported)
    lines = [f"{files} files checked, {len(expected)} expected findings, {len(reported)} reported, "
             f"{len(crashes)} crashes", "",
             "| family | TP | FP | FN | precision | recall | target |",
             "|---|---|---|---|---|---|---|"]
    for item in scores:
        target = TARGETS.get(item.family)
        mark = "" if target is None else (" ok" if min(item.precision, item.recall) >= target else " BELOW")
        lines.append(f"| {item.family} | {item.true_positives} | {item.false_positives} | {item.false_negatives} | "
                     f"{item.precision:.3f} | {item.recall:.3f} | {target if target else '-'}{mark} |")
    total = Score("all", *(sum(getattr(s, f) for s in scores)
                           for f in ("true_positives", "false_positives", "false_negatives")))
    lines.append(f"| all | {total.true_positives} | {total.false_positives} | {total.false_negatives} | "
                 f"{total.precision:.3f} | {total.recall:.3f} | |")
    missing = sorted(expected - found)
    unexpected = sorted(found - expected)
    if missing:
        lines += ["", "missed (false negatives):"] + [f"  {path}:{line} {rule}" for path, line, rule in missing]
    if unexpected:
        lines += ["", "unexpected (false positives):"] + [f"  {path}:{line} {rule}" for path, line, rule in unexpected]
    repeated = sorted(key for key, times in Counter(reported).items() if times > 1)
    if repeated:
        lines += ["", "reported more than once:"] + [f"  {path}:{line} {rule}" for path, line, rule in repeated]
    if crashes:
        lines += ["", "crashes:"] + [f"  {crash}" for crash in crashes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    options = parser.parse_args(argv)
    expected = expected_findings()
    found, crashes, files = run_check()
    scores = score(expected, found)
    if options.json:
        print(json.dumps({"files": files, "crashes": crashes,
                          "families": {s.family: {"tp": s.true_positives, "fp": s.false_positives,
                                                  "fn": s.false_negatives, "precision": round(s.precision, 3),
                                                  "recall": round(s.recall, 3)} for s in scores}}, indent=2))
    else:
        print(render(scores, expected, found, crashes, files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
