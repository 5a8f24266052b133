"""Time and peak memory against input size, one file kind at a time, with the fitted exponent.

For each kind, one generated file of n units (n doubling) is checked alone in a new process
(``spikelint check FILE --jobs 1``), and, as the last kind, n small files in one folder.  From
each run's CPU time the start-up cost (a one-unit file of the same kind) is subtracted; the
exponent is the least-squares slope of log(CPU) against log(size) over the sizes whose net CPU
is above the noise.  Linear work gives ~1.0; 2.0 is quadratic.  A run past ``--timeout`` stops
that kind (its exponent is then a lower bound).  Files are kept under the 5 MiB size limit.

    python bench/scaling.py --quick                 # 4 sizes per kind, 20 s per run
    python bench/scaling.py --kinds yaml-stream dockerfile-continuation --top 32000
    python bench/scaling.py --check                 # the CI guard: 1,000 and 4,000 units, exit 1 past 6x

``--check`` is the guard ``.ci/run`` runs after the tests: every kind at n and 4n units, failing when
the net CPU time grows more than ``MAX_RATIO`` times (linear work grows 4x; a per-object scan of the
whole document, as the hub check once did for every workload of a stream, grows 16x). A ratio whose
smaller run is under ``NOISE_S`` of net CPU is measured again at sizes that take longer (a fast machine),
as far as the 5 MiB file limit allows; a pair still under it is not judged (start-up noise dominates it).  The guard
also checks a folder inside a Git repository (``check configs`` with n/2 and 2n given configs and 8
other files each), where finding the files that reference the given ones once grew with given x others,
and n/4 Jobs running one script of n lines (``workloads-one-script``), whose code was once searched again
for every workload that runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import string
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from side_by_side import Run  # noqa: E402 - the bench folder is not a package
from side_by_side import environment  # noqa: E402 - the bench folder is not a package
from side_by_side import measure  # noqa: E402

LIMIT = 5 * 1024 * 1024
ALNUM = string.ascii_letters + string.digits


def _chars(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def yaml_stream(rng: random.Random, n: int) -> str:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\nspec:\n  containers:\n    - name: c\n"
           "      image: reg.example.org/app:1.{i}.0\n      args: [--step, \"{i}\"]\n")
    return "---\n".join(pod.format(i=i) for i in range(n))


def yaml_secret_keys(rng: random.Random, n: int) -> str:
    return "settings:\n" + "".join(f"  service_{i}_password: \"{_chars(rng, ALNUM, 20)}\"\n" for i in range(n))


def pod_env_tokens(rng: random.Random, n: int) -> str:
    env = "".join(f"        - name: TOKEN_{i}\n          value: \"{_chars(rng, ALNUM, 32)}\"\n" for i in range(n))
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n"
            "      image: reg.example.org/app:1.2.3\n      env:\n" + env)


def k8s_long_arg(rng: random.Random, n: int) -> str:
    argument = " ".join(f"--opt{i}=value{i}" for i in range(n * 6))  # ~100 bytes per unit
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n"
            f"      image: reg.example.org/app:1.2.3\n      args: [\"{argument}\"]\n")


def dockerfile_continuation(rng: random.Random, n: int) -> str:
    packages = "".join(f"    package-{i} \\\n" for i in range(n))
    return "FROM reg.example.org/base:1.2.3\nRUN apt-get install -y \\\n" + packages + "    last-package\n"


def dockerfile_heredoc(rng: random.Random, n: int) -> str:
    blocks = "".join(f"RUN <<EOF{i}\necho step {i}\nEOF{i}\n" for i in range(n))
    return "FROM reg.example.org/base:1.2.3\n" + blocks


def dockerfile_stages(rng: random.Random, n: int) -> str:
    stages = "".join(f"FROM reg.example.org/base:1.2.3 AS s{i}\nCOPY --from=s{max(i - 1, 0)} /a /a\n" for i in range(n))
    return stages


def shell_and_chain(rng: random.Random, n: int) -> str:
    return "#!/bin/bash\nset -euo pipefail\n" + "".join(f"step{i} --flag {i} && \\\n" for i in range(n)) + "true\n"


def shell_lines(rng: random.Random, n: int) -> str:
    lines = "".join(f"python prep.py --shard {i} --out /data/s{i} | tee -a log{i % 7}.txt\n" for i in range(n))
    return "#!/bin/bash\nset -euo pipefail\n" + lines


def text_tokens(rng: random.Random, n: int) -> str:
    lines = []
    for i in range(n):
        shape = i % 4
        if shape == 0:
            lines.append(f"see https://acct.blob.core.example.net/c/f{i}?sv=2022-11-02&se=2030-01-01&sig="
                         f"{_chars(rng, ALNUM, 43)}%3D")
        elif shape == 1:
            lines.append(f"bearer eyJ{_chars(rng, ALNUM, 30)}.eyJ{_chars(rng, ALNUM, 40)}.{_chars(rng, ALNUM, 43)}")
        elif shape == 2:
            lines.append(f"password={_chars(rng, ALNUM, 12)} user=svc{i}")
        else:
            lines.append(f"step {i}: loss {rng.random():.4f} lr {rng.random() / 1000:.6f}")
    return "\n".join(lines) + "\n"


def long_line(rng: random.Random, n: int) -> str:
    """A minified, generated file: one line of n KB (an SVG path or bundled JS)."""
    return "<svg><path d=\"" + " ".join(f"M{i} {i * 3 % 997}L{i % 13} {i % 29}" for i in range(n * 60)) + "\"/></svg>\n"


def notebook(rng: random.Random, n: int) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": [f"loss_{i} = train(step={i})\n", f"print(loss_{i})\n"]} for i in range(n)]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def python_code(rng: random.Random, n: int) -> str:
    body = "".join(f"def step_{i}(model, batch):\n    loss = model(batch).mean() * {i}\n    return loss\n\n\n"
                   for i in range(n))
    return "import torch\n\n\n" + body


def json_values(rng: random.Random, n: int) -> str:
    return json.dumps({"lm loss": {"start_step": 0, "step_interval": 5,
                                   "values": {str(i): round(rng.random() * 10, 5) for i in range(n * 4)}}}, indent=2)


@dataclass(frozen=True)
class Kind:
    name: str
    filename: str
    make: Callable[[random.Random, int], str]


KINDS = (
    Kind("yaml-stream", "stream.yaml", yaml_stream),
    Kind("yaml-secret-keys", "values.yaml", yaml_secret_keys),
    Kind("pod-env-tokens", "pod.yaml", pod_env_tokens),
    Kind("k8s-long-arg", "job.yaml", k8s_long_arg),
    Kind("dockerfile-continuation", "Dockerfile", dockerfile_continuation),
    Kind("dockerfile-heredoc", "Dockerfile", dockerfile_heredoc),
    Kind("dockerfile-stages", "Dockerfile", dockerfile_stages),
    Kind("shell-and-chain", "launch.sh", shell_and_chain),
    Kind("shell-lines", "launch.sh", shell_lines),
    Kind("text-tokens", "notes.txt", text_tokens),
    Kind("long-line", "diagram.svg", long_line),
    Kind("notebook", "explore.ipynb", notebook),
    Kind("python", "train.py", python_code),
    Kind("json-values", "golden_values.json", json_values),
)
SMALL_FILES = "many-small-files"


@dataclass
class Point:
    units: int
    size: int
    cpu: float
    rss_mb: float
    timed_out: bool


def exponent(points: list[Point], base_cpu: float, noise: float = 0.05) -> float | None:
    usable = [(math.log(p.size), math.log(p.cpu - base_cpu)) for p in points
              if not p.timed_out and p.cpu - base_cpu > noise]
    if len(usable) < 2:
        return None
    mean_x = sum(x for x, _ in usable) / len(usable)
    mean_y = sum(y for _, y in usable) / len(usable)
    spread = sum((x - mean_x) ** 2 for x, _ in usable)
    return sum((x - mean_x) * (y - mean_y) for x, y in usable) / spread if spread else None


def _measured(command: list[str], folder: Path, env: dict[str, str], timeout: float) -> Run:
    """The better of two runs where a run is short (noise from other processes is then most of it)."""
    run = measure(command, folder, env, timeout)
    if run.status != -9 and run.cpu < 2.0:
        again = measure(command, folder, env, timeout)
        run = again if again.cpu < run.cpu else run
    return run


def _grown(command: list[str], folder: Path, env: dict[str, str], timeout: float, sizes: list[int],
           grow: Callable[[int], int]) -> list[Point]:
    """One measured run per size of a shape of several files: ``grow(units)`` writes the input of that size
    and returns its bytes; a run past the timeout ends the series."""
    points = []
    for units in sizes:
        size = grow(units)
        run = _measured(command, folder, env, timeout)
        points.append(Point(units, size, run.cpu, run.rss_mb, run.status == -9))
        if run.status == -9:
            break
    return points


def run_kind(kind: Kind, sizes: list[int], folder: Path, env: dict[str, str], timeout: float) -> tuple[list[Point], float]:
    rng = random.Random(1)
    target = folder / kind.filename
    target.write_text(kind.make(rng, 1), encoding="utf-8")
    command = [sys.executable, "-m", "spikelint", "check", kind.filename, "--jobs", "1", "--fail-on", "never", "--no-cache"]
    base = min(measure(command, folder, env, timeout).cpu for _ in range(2))
    points = []
    for units in sizes:
        text = kind.make(random.Random(1), units)
        if len(text.encode()) > LIMIT:
            break
        target.write_text(text, encoding="utf-8")
        run = _measured(command, folder, env, timeout)
        points.append(Point(units, len(text.encode()), run.cpu, run.rss_mb, run.status == -9))
        if run.status == -9:
            break
    return points, base


def run_small_files(sizes: list[int], folder: Path, env: dict[str, str], timeout: float) -> tuple[list[Point], float]:
    import lint_bench

    command = [sys.executable, "-m", "spikelint", "check", ".", "--jobs", "1", "--fail-on", "never", "--no-cache"]
    (folder / "one.yaml").write_text(lint_bench.k8s_job(random.Random(1), 1), encoding="utf-8")
    base = min(measure(command, folder, env, timeout).cpu for _ in range(2))
    written = [1]
    rng = random.Random(1)

    def grow(units: int) -> int:
        for index in range(written[0], units):
            (folder / f"job-{index}.yaml").write_text(lint_bench.k8s_job(rng, index), encoding="utf-8")
        written[0] = max(written[0], units)
        return sum(p.stat().st_size for p in folder.iterdir())

    return _grown(command, folder, env, timeout, sizes, grow), base


REPOSITORY_FOLDER = "folder-in-repository"
REPOSITORY_FILLER = 8  # files elsewhere in the repository per given file


def run_folder_in_repository(sizes: list[int], folder: Path, env: dict[str, str],
                             timeout: float) -> tuple[list[Point], float]:
    """``check configs`` inside a Git repository: n given configs, 8n other files that might reference
    them.  Finding the referrers once cost n scans of every other file (n x 8n)."""
    import subprocess

    def commit() -> None:
        subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
        subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", "commit", "-q", "-m",
                        "files"], cwd=folder, check=True)

    def write(start: int, end: int) -> None:
        for index in range(start, end):
            (folder / "configs" / f"finetune-{index}.yaml").write_text(f"seed: {index}\nlr: 0.001\n", encoding="utf-8")
            for filler in range(REPOSITORY_FILLER):
                text = f"# service {index}-{filler}\nname: svc-{index}-{filler}\nport: {8000 + filler}\n" * 8
                (folder / "deploy" / f"svc-{index}-{filler}.yaml").write_text(text, encoding="utf-8")

    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "configs").mkdir()
    (folder / "deploy").mkdir()
    command = [sys.executable, "-m", "spikelint", "check", "configs", "--jobs", "1", "--fail-on", "never", "--no-cache"]
    write(0, 1)
    commit()
    base = min(measure(command, folder, env, timeout).cpu for _ in range(2))
    written = [1]

    def grow(units: int) -> int:
        write(written[0], units)
        written[0] = max(written[0], units)
        commit()
        return sum(path.stat().st_size for path in folder.rglob("*.yaml"))

    return _grown(command, folder, env, timeout, sizes, grow), base


SHARED_SCRIPT = "workloads-one-script"
SCRIPT_JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: ft-{index}}}
spec:
  backoffLimit: 3
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: train
          image: registry.example.org/team/train:1.0@sha256:{digest}
          command: [torchrun, --nproc_per_node=8, train.py, --output_dir, /ckpt/run-{index}]
          resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def run_shared_script(sizes: list[int], folder: Path, env: dict[str, str],
                      timeout: float) -> tuple[list[Point], float]:
    """n/4 Jobs in one stream running one train.py of n lines that imports a module of n lines: the
    script's code searched once per workload cost workloads x script (n x n)."""
    command = [sys.executable, "-m", "spikelint", "check", ".", "--jobs", "1", "--fail-on", "never", "--no-cache"]

    def write(units: int) -> int:
        code = "".join(f"def step_{i}(batch):\n    return model(batch) * {i}\n\n" for i in range(units))
        (folder / "trainer").mkdir(exist_ok=True)
        (folder / "trainer" / "loop.py").write_text(code, encoding="utf-8")
        (folder / "train.py").write_text("from trainer.loop import step_0\n" + code + "loss.backward()\n",
                                         encoding="utf-8")
        jobs = [SCRIPT_JOB.format(index=index, digest="ab" * 32) for index in range(max(1, units // 4))]
        (folder / "jobs.yaml").write_text("---\n".join(jobs), encoding="utf-8")
        return sum(path.stat().st_size for path in folder.rglob("*.*"))

    write(1)
    base = min(measure(command, folder, env, timeout).cpu for _ in range(2))
    return _grown(command, folder, env, timeout, sizes, write), base


# shapes of more than one file: (runner, sizes for --check's start)
SPECIAL_SHAPES: dict[str, tuple[Callable[[list[int], Path, dict[str, str], float], tuple[list[Point], float]],
                                Callable[[int], list[int]]]] = {
    # n/2 and 2n given files (each brings 8 more): above the noise, still 4x
    REPOSITORY_FOLDER: (run_folder_in_repository, lambda start: [max(1, start // 2), 2 * start]),
    SHARED_SCRIPT: (run_shared_script, lambda start: [start, 4 * start]),
}


MAX_RATIO = 6.0  # 4x the input may cost at most 6x the time
NOISE_S = 0.15


def growth(points: list[Point], base: float) -> tuple[float | None, str]:
    """(net CPU of 4n over net CPU of n, verdict) for a --check pair; None when it cannot be judged."""
    if len(points) < 2 or points[-1].timed_out:
        return None, "FAIL (timed out)" if points and points[-1].timed_out else "not measured"
    small, large = points[0].cpu - base, points[-1].cpu - base
    if small < NOISE_S:
        return None, "ok (below the noise)" if large < NOISE_S * 6 else "FAIL (grew from noise)"
    ratio = large / small
    return ratio, "ok" if ratio <= MAX_RATIO else "FAIL"


def _above_the_noise(kind: Kind, units: int, points: list[Point], base: float) -> int:
    """Units whose run should take about 2x the noise floor of net CPU, read from the 4n run as if it were
    linear (a regression's 4n run is over the floor already and fails there), within the file size limit;
    ``units`` when the pair needs nothing larger or nothing larger fits."""
    if len(points) < 2 or points[-1].timed_out or points[0].cpu - base >= NOISE_S:
        return units
    per_unit = max(points[-1].cpu - base, 0.01) / (4 * units)
    # Python over 1 MiB is read as text only (documents.MAX_PYTHON_SYNTAX_TREE_CHARS): its time would drop, not grow
    limit = 1024 * 1024 if kind.filename.endswith(".py") else LIMIT
    wanted = units
    while wanted * per_unit < 2 * NOISE_S and len(kind.make(random.Random(1), 8 * wanted)) <= limit:
        wanted *= 2
    return wanted


def check(kinds: list[str], start: int, timeout: float) -> int:
    """The CI guard: each kind at ``start`` and 4x ``start`` units; exit 1 when one grows past MAX_RATIO."""
    workspace = Path(tempfile.mkdtemp(prefix="spikelint-scaling-"))
    env = environment(str(workspace / "pycache"))
    failed = []
    print(f"scaling guard: {start:,} and {4 * start:,} units per kind; at most {MAX_RATIO:g}x the time for 4x the input")
    try:
        for kind in KINDS:
            if kind.name not in kinds:
                continue
            folder = workspace / kind.name
            folder.mkdir()
            units = start
            points, base = run_kind(kind, [units, 4 * units], folder, env, timeout)
            ratio, verdict = growth(points, base)
            larger = _above_the_noise(kind, units, points, base)
            if verdict.startswith("ok (below") and larger > units:  # a fast machine: judge a pair it can time
                units = larger
                points, base = run_kind(kind, [units, 4 * units], folder, env, timeout)
                ratio, verdict = growth(points, base)
            if verdict.startswith("FAIL"):  # once more: a busy machine can stretch one pair; a regression stays
                points, base = run_kind(kind, [units, 4 * units], folder, env, timeout)
                ratio, verdict = growth(points, base)
            shown = "—" if ratio is None else f"{ratio:.1f}x"
            cpu = " → ".join(f"{p.cpu - base:.2f} s" for p in points)
            sized = f" ({units:,} and {4 * units:,} units)" if units != start else ""
            print(f"  {kind.name:<26} {cpu:<22} {shown:>6}  {verdict}{sized}", flush=True)
            if verdict.startswith("FAIL"):
                failed.append(kind.name)
        for name, (runner, sizes_for) in SPECIAL_SHAPES.items():
            if name not in kinds:
                continue
            folder = workspace / name
            folder.mkdir()
            points, base = runner(sizes_for(start), folder, env, timeout)
            ratio, verdict = growth(points, base)
            shown = "—" if ratio is None else f"{ratio:.1f}x"
            cpu = " → ".join(f"{p.cpu - base:.2f} s" for p in points)
            print(f"  {name:<26} {cpu:<22} {shown:>6}  {verdict}", flush=True)
            if verdict.startswith("FAIL"):
                failed.append(name)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    if failed:
        print(f"scaling guard: FAILED for {', '.join(failed)}: the time grows faster than the input "
              "(look for work done per object over the whole document or tree)")
        return 1
    print("scaling guard: every kind grows linearly")
    return 0


def row(name: str, points: list[Point], base: float) -> str:
    if not points:
        return f"| {name} | — | — | — | — | — |"
    last = points[-1]
    cells = " · ".join(f"{p.cpu - base:.2f}" + ("+ (timed out)" if p.timed_out else "") for p in points)
    fitted = exponent(points, base)
    shown = "—" if fitted is None else f"{fitted:.2f}" + (" (lower bound)" if last.timed_out else "")
    finished = [p for p in points if not p.timed_out]
    speed = (f"{finished[-1].size / 1e6 / max(finished[-1].cpu - base, 1e-3):.2f} MB/s" if finished else "—")
    return (f"| {name} | {points[0].units:,}–{last.units:,} units, up to {last.size / 1e6:.2f} MB | {cells} | "
            f"{shown} | {max(p.rss_mb for p in points):.0f} MB | {speed} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", choices=[kind.name for kind in KINDS] + [SMALL_FILES, *SPECIAL_SHAPES],
                        help="only these kinds (default: all)")
    parser.add_argument("--start", type=int, default=1000, help="units in the smallest file")
    parser.add_argument("--top", type=int, default=16000, help="units in the largest file (doubling from --start)")
    parser.add_argument("--timeout", type=float, default=60.0, help="CPU seconds per run (or 4x that in wall time)")
    parser.add_argument("--quick", action="store_true", help="1,000 to 8,000 units, 20 CPU seconds per run")
    parser.add_argument("--check", action="store_true",
                        help=f"the CI guard: --start and 4x --start units per kind, exit 1 past {MAX_RATIO:g}x the time")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.kinds or [kind.name for kind in KINDS] + [*SPECIAL_SHAPES], args.start, args.timeout)
    if args.quick:
        args.start, args.top, args.timeout = 1000, 8000, 20.0
    sizes = []
    units = args.start
    while units <= args.top:
        sizes.append(units)
        units *= 2
    wanted = args.kinds or [kind.name for kind in KINDS] + [SMALL_FILES]
    workspace = Path(tempfile.mkdtemp(prefix="spikelint-scaling-"))
    env = environment(str(workspace / "pycache"))
    print(f"<!-- python bench/scaling.py --start {args.start} --top {args.top} --timeout {args.timeout:g}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start -->")
    print("| kind | inputs | CPU s per size, start-up subtracted | exponent | peak RSS | speed at the largest |")
    print("|---|---|---|---|---|---|")
    try:
        for kind in KINDS:
            if kind.name in wanted:
                folder = workspace / kind.name
                folder.mkdir()
                print(row(kind.name, *run_kind(kind, sizes, folder, env, args.timeout)), flush=True)
        if SMALL_FILES in wanted:
            folder = workspace / SMALL_FILES
            folder.mkdir()
            small = [size // 4 for size in sizes]  # files, not lines
            print(row(SMALL_FILES, *run_small_files(small, folder, env, args.timeout)), flush=True)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
