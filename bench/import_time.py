"""What ``spikelint check`` imports on the lint path, and what that costs (``python -X importtime``).

Runs ``spikelint check FILE`` on one small Kubernetes file N times with ``-X importtime`` and a
bytecode cache, and reports the smallest total of each run's imports (interpreter start-up
modules such as ``site`` and ``encodings`` excluded) and the modules that cost most on their
own (smallest self time over the runs).  ``-X importtime`` itself adds ~10-20 %.

    python bench/import_time.py --runs 9
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from side_by_side import environment  # noqa: E402 - the bench folder is not a package

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
START_UP = ("site", "encodings", "_frozen_importlib_external", "zipimport", "codecs", "io", "abc", "_signal",
            "_distutils_hack", "__editable__")
STAGES = """
import time
clock = time.process_time
marks = [clock()]
import spikelint.cli
marks.append(clock())
import spikelint.engine, spikelint.config
marks.append(clock())
from spikelint.catalog import load_catalog
load_catalog()
marks.append(clock())
from spikelint.checks import all_checks
all_checks()
marks.append(clock())
import spikelint.documents, spikelint.adapters, spikelint.report.output
marks.append(clock())
print(" ".join(str(b - a) for a, b in zip(marks, marks[1:])))
"""
STAGE_NAMES = ("spikelint.cli", "engine and configuration", "rule catalog (rules/*.yaml)", "check modules",
               "parsers, adapters, reporters")
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: a, image: \"x:1\"}]\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "pod.yaml").write_text(POD, encoding="utf-8")
        env = environment(str(root / "pycache"))
        totals, selves = [], defaultdict(list)
        for _ in range(args.runs + 1):  # the first fills the bytecode cache
            process = subprocess.run([sys.executable, "-X", "importtime", "-m", "spikelint", "check", "pod.yaml",
                                      "--no-cache", "--fail-on", "never"], cwd=root, env=env, capture_output=True,
                                     text=True, check=False)
            total = 0
            for match in LINE.finditer(process.stderr):
                name = match.group(4)
                if name.split(".")[0] in START_UP or name.startswith("__editable__"):
                    continue
                selves[name].append(int(match.group(1)))
                if len(match.group(3)) == 1:  # a top-level import: its cumulative time
                    total += int(match.group(2))
            totals.append(total)
        stages = []
        for _ in range(3):
            process = subprocess.run([sys.executable, "-c", STAGES], cwd=root, env=env, capture_output=True,
                                     text=True, check=True)
            stages.append([float(value) for value in process.stdout.split()])
    best = [min(run[index] for run in stages) for index in range(len(STAGE_NAMES))]
    print(f"lint-path imports, CPU time in-process (smallest of 3): {sum(best) * 1000:.0f} ms")
    print("| stage | CPU |\n|---|---|")
    for name, seconds in zip(STAGE_NAMES, best):
        print(f"| {name} | {seconds * 1000:.0f} ms |")
    print(f"lint-path imports: {min(totals[1:]) / 1000:.0f} ms (smallest of {args.runs}; median "
          f"{sorted(totals[1:])[len(totals[1:]) // 2] / 1000:.0f} ms), measured with -X importtime")
    print("| module | self time (smallest) |\n|---|---|")
    for name, times in sorted(selves.items(), key=lambda item: -min(item[1]))[:args.top]:
        print(f"| `{name}` | {min(times) / 1000:.1f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
