"""``spikelint history`` on a generated Git history, side by side with ``gitleaks git`` when it is
installed (on PATH): same repository, same commits, wall-clock seconds and the planted leaks found.

The history starts from ``corpus.py``'s mixed GPU-team repository (``--files``) and adds
``--commits`` commits: each edits, adds, renames or deletes a few files; one in ten adds a
fake credential (generated from the seed, never a real one) to a ``.env``, a launch script
or a values file, and the next commit that touches it edits the credential away again, so
only a history scan can find it.

    python bench/history_bench.py /tmp/history-400 --commits 400
    python bench/history_bench.py /tmp/history-400 --commits 400 --jobs 1 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402 - the bench folder is not a package
import secrets_bench  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.org", "GIT_COMMITTER_NAME": "Bench",
           "GIT_COMMITTER_EMAIL": "bench@example.org", "GIT_CONFIG_NOSYSTEM": "1"}
LEAK_RATE = 0.1


def _git(root: Path, *arguments: str, when: int = 0) -> str:
    stamp = f"{1767225600 + when * 3600} +0000"  # one commit an hour from 2026-01-01
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *arguments], cwd=root, env=env, check=True,
                          capture_output=True, text=True).stdout


def build(root: Path, files: int, commits: int, seed: int) -> set[str]:
    """The repository, and the paths of the planted leaks (to count recall)."""
    root.mkdir(parents=True)
    corpus.generate(root, files, seed)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial tree")
    rng = random.Random(seed)
    leaks = secrets_bench.Leaks(rng)
    planted: set[str] = set()
    pending: list[Path] = []  # files holding a leak, to be edited away by a later commit
    for number in range(1, commits):
        tracked = [root / name for name in _git(root, "ls-files").split("\n") if name]
        if pending and rng.random() < 0.7:
            target = pending.pop(0)
            text = target.read_text(encoding="utf-8")
            target.write_text("\n".join(line for line in text.split("\n") if "LEAKED" not in line), encoding="utf-8")
        elif rng.random() < LEAK_RATE:
            name, value = leaks.token()
            target = root / "deploy" / f"leak-{number}" / rng.choice((".env", "launch.sh", "values.yaml"))
            target.parent.mkdir(parents=True, exist_ok=True)
            line = f"{name}={value}  # LEAKED" if target.suffix != ".yaml" else f"{name.lower()}: {value}  # LEAKED"
            target.write_text(f"# settings\n{line}\n", encoding="utf-8")
            planted.add(target.relative_to(root).as_posix())
            pending.append(target)
        else:
            for target in rng.sample(tracked, k=min(3, len(tracked))):
                action = rng.random()
                if action < 0.1 and "leak-" not in str(target):
                    _git(root, "mv", str(target), str(target.with_name("moved-" + target.name)))
                elif action < 0.15 and "leak-" not in str(target):
                    target.unlink()
                elif target.exists():
                    with target.open("a", encoding="utf-8") as handle:
                        handle.write(f"\n# revision {number}: {rng.getrandbits(32):08x}\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", f"change {number}", when=number)
    return planted


def time_spikelint(root: Path, jobs: int | None, repeat: int) -> tuple[float, set[str]]:
    command = [sys.executable, "-m", "spikelint", "history", "--format", "json", "--fail-on", "never"]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    best = float("inf")
    output = ""
    for _ in range(repeat):
        start = time.perf_counter()
        output = subprocess.run(command, cwd=root, env=env, check=True, capture_output=True, text=True).stdout
        best = min(best, time.perf_counter() - start)
    return best, {finding["path"] for finding in json.loads(output)["findings"]}


def time_gitleaks(root: Path, repeat: int) -> tuple[float, int] | None:
    binary = shutil.which("gitleaks")
    if binary is None:
        return None
    best = float("inf")
    count = 0
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([binary, "git", "--no-banner", "--exit-code", "0", "--redact", "--report-format", "json",
                            "--report-path", str(report), "."], cwd=root, capture_output=True, check=False)
            best = min(best, time.perf_counter() - start)
            count = len(json.loads(report.read_text(encoding="utf-8") or "[]"))
    return best, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="folder for the generated repository (must be absent)")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--commits", type=int, default=400)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="spikelint's --jobs (default: its own default)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool; the fastest is reported")
    args = parser.parse_args(argv)
    if args.root.exists():
        parser.error(f"{args.root} exists")
    start = time.perf_counter()
    planted = build(args.root, args.files, args.commits, args.seed)
    print(f"built {args.commits} commits ({args.files} files at first, {len(planted)} planted leaks, each edited "
          f"away later) in {time.perf_counter() - start:.1f} s")
    seconds, paths = time_spikelint(args.root, args.jobs, args.repeat)
    print(f"spikelint history: {seconds:.2f} s, {len(paths)} paths with findings, "
          f"{len(paths & planted)} of {len(planted)} planted leaks found")
    gitleaks = time_gitleaks(args.root, args.repeat)
    if gitleaks is None:
        print("gitleaks git: not installed (no gitleaks on PATH): spikelint measured alone")
    else:
        print(f"gitleaks git: {gitleaks[0]:.2f} s, {gitleaks[1]} findings; spikelint/gitleaks = "
              f"{seconds / gitleaks[0]:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
