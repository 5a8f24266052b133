"""spikelint beside checkov, detect-secrets and a parse-and-walk floor, on a corpus anyone can regenerate.

Each tool runs as a new process (as a hook or CI step runs it) on the same files, alternating
A B A B so that load on a shared machine falls on every tool alike; one untimed warm-up run
each fills the page cache and the bytecode caches.  Reported per row: median wall time, median
CPU time (user + system of the process and its workers), peak RSS (the largest of the process
and its workers), and the ratios.

- ``checkov`` (kubernetes, dockerfile and secrets frameworks only, which is what it shares with
  spikelint; all its frameworks would be slower) — give its path with ``--checkov``; install
  it apart, e.g. ``python3 -m venv /tmp/ckv && /tmp/ckv/bin/pip install checkov``;
- ``detect-secrets scan --all-files`` beside ``spikelint check --select SPK2`` (the secret scan);
- the floor: one process that reads every file, parses YAML with PyYAML's C loader (keeping
  positions: ``compose_all``), JSON with ``json`` and walks every node — what any linter that
  parses these files must at least do.

    python bench/side_by_side.py --quick                    # 1 file and 500 files, 3 runs
    python bench/side_by_side.py --sizes 500 5000 --runs 5 --checkov /tmp/ckv/bin/checkov
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402 - the bench folder is not a package


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    rss_mb: float
    status: int


@dataclass(frozen=True)
class Tool:
    name: str
    argv: list[str]
    cwd: Path


def _cpu_so_far(pid: int) -> float:
    """User + system seconds of a running process (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def measure(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Run:
    """One process: wall time, CPU and peak RSS of it and its reaped workers (``wait4``).

    ``timeout`` is CPU seconds (so a busy machine does not cut a run short), or four times that
    in wall time."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    polls = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        polls += 1
        late = time.perf_counter() - start > 4 * timeout
        if late or (polls % 20 == 0 and _cpu_so_far(process.pid) > timeout):
            process.kill()
            pid, status, usage = os.wait4(process.pid, 0)
            status = -9
            break
        time.sleep(0.005)
    process.returncode = 0  # reaped here; keep Popen from waiting again
    wall = time.perf_counter() - start
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, status)


def environment(cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPOSITORY) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache  # a bytecode cache, as an installed package has
    return env


def alternate(tools: list[Tool], runs: int, env: dict[str, str], timeout: float) -> dict[str, list[Run]]:
    results: dict[str, list[Run]] = {tool.name: [] for tool in tools}
    for tool in tools:  # warm-up: page cache, bytecode
        measure(tool.argv, tool.cwd, env, timeout)
    for _ in range(runs):
        for tool in tools:
            results[tool.name].append(measure(tool.argv, tool.cwd, env, timeout))
    return results


def median(runs: list[Run], attribute: str) -> float:
    return statistics.median(getattr(run, attribute) for run in runs)


# --------------------------------------------------------------------------- the floor


def _walk(node: object) -> int:
    """Count every node (a walk that touches each value, as a check would)."""
    import yaml

    count, stack = 0, [node]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, yaml.MappingNode):
            for key, value in item.value:
                stack.extend((key, value))
        elif isinstance(item, yaml.SequenceNode):
            stack.extend(item.value)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def floor(root: Path) -> int:
    """Read every file under ``root``; parse YAML (C loader, with positions) and JSON; walk every node."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    nodes = 0
    walked = [(str(root.parent), [], [root.name])] if root.is_file() else os.walk(root)
    for folder, _, names in walked:
        for name in names:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            try:
                if name.endswith((".yaml", ".yml")):
                    for document in yaml.compose_all(text, Loader=loader):
                        nodes += _walk(document)
                elif name.endswith((".json", ".ipynb")):
                    nodes += _walk(json.loads(text))
                else:
                    nodes += len(text.splitlines())
            except (yaml.YAMLError, ValueError):
                nodes += 1
    return nodes


# --------------------------------------------------------------------------- the table


def spikelint(*extra: str) -> list[str]:
    return [sys.executable, "-m", "spikelint", "check", *extra, "--fail-on", "never", "--no-cache"]


def scenario(label: str, target: Path, cwd: Path, checkov: str | None, detect_secrets: str | None,
             runs: int, env: dict[str, str], timeout: float) -> list[str]:
    single = target.is_file()
    name = str(target.relative_to(cwd)) if single else "."
    tools = [Tool("spikelint", spikelint(name), cwd)]
    if not single:
        tools.append(Tool("spikelint --jobs 1", spikelint(name, "--jobs", "1"), cwd))
    tools.append(Tool("floor", [sys.executable, str(Path(__file__).resolve()), "--floor", name], cwd))
    if checkov:
        frameworks = ["kubernetes"] if single else ["kubernetes", "dockerfile", "secrets"]
        tools.append(Tool("checkov", [checkov, "-f" if single else "-d", name, "--quiet", "--compact",
                                      "--skip-download", "-o", "json", "--framework", *frameworks], cwd))
    secret_tools = []
    if not single:
        secret_tools.append(Tool("spikelint --select SPK2", spikelint(name, "--select", "SPK2"), cwd))
        if detect_secrets:
            secret_tools.append(Tool("detect-secrets", [detect_secrets, "scan", "--all-files", name], cwd))
    results = alternate(tools, runs, env, timeout)
    results.update(alternate(secret_tools, runs, env, timeout) if secret_tools else {})
    if not single:  # a second run over unchanged files, with the result cache (its warm-up run fills it)
        cached = Tool("spikelint, cached", [*spikelint(name)[:-1], "--cache"], cwd)
        results.update(alternate([cached], runs, env, timeout))
        shutil.rmtree(cwd / ".spikelint_cache", ignore_errors=True)
        tools.append(cached)
    base = results["spikelint"]
    rows = []
    for tool in [*tools, *secret_tools]:
        taken = results[tool.name]
        wall, cpu = median(taken, "wall"), median(taken, "cpu")
        against = results["spikelint --select SPK2"] if tool.name == "detect-secrets" else base
        ratio = "" if tool.name in ("spikelint", "spikelint --select SPK2") else (
            f"{wall / median(against, 'wall'):.1f}x | {cpu / median(against, 'cpu'):.1f}x")
        failed = sum(run.status == -9 for run in taken)
        note = f" ({failed} timed out)" if failed else ""
        rows.append(f"| {label} | {tool.name} | {wall:.2f} s{note} | {cpu:.2f} s | {ratio or ' | '} | "
                    f"{max(run.rss_mb for run in taken):.0f} MB |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000], help="corpus sizes (files)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per tool (after one warm-up)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--checkov", default=shutil.which("checkov") or "/tmp/ckv/bin/checkov",
                        help="checkov executable (default: on PATH, else /tmp/ckv/bin/checkov)")
    parser.add_argument("--detect-secrets", default=shutil.which("detect-secrets")
                        or str(Path(sys.executable).with_name("detect-secrets")))
    parser.add_argument("--no-checkov-above", type=int, default=5000, metavar="FILES",
                        help="skip checkov on larger corpora (it takes minutes there)")
    parser.add_argument("--timeout", type=float, default=600.0, help="CPU seconds per process")
    parser.add_argument("--quick", action="store_true", help="one file and 500 files, 3 runs")
    parser.add_argument("--keep", type=Path, help="generate the corpora under this folder and keep them")
    parser.add_argument("--floor", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor:
        floor(Path(args.floor))
        return 0
    if args.quick:
        args.sizes, args.runs = [500], 3
    checkov = args.checkov if args.checkov and Path(args.checkov).exists() else None
    detect_secrets = args.detect_secrets if args.detect_secrets and Path(args.detect_secrets).exists() else None
    if checkov is None:
        print(f"checkov not found at {args.checkov!r}: its rows are left out "
              "(install it apart: python3 -m venv /tmp/ckv && /tmp/ckv/bin/pip install checkov)", file=sys.stderr)
    if detect_secrets is None:
        print("detect-secrets not found: its rows are left out", file=sys.stderr)
    workspace = args.keep or Path(tempfile.mkdtemp(prefix="spikelint-sbs-"))
    env = environment(str(workspace / "pycache"))
    rows = ["| input | tool | wall (median) | CPU (median) | wall / spikelint's | CPU / spikelint's | peak RSS |",
            "|---|---|---|---|---|---|---|"]
    load = os.getloadavg()[0]
    try:
        for size in sorted(args.sizes):
            root = workspace / f"corpus-{size}"
            if not root.exists():
                corpus.generate(root, size, args.seed)
            megabytes = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6
            if size == min(args.sizes):
                rows += scenario("1 Kubernetes Job file", root / "k8s/jobs/finetune-1.yaml", root, checkov, None,
                                 args.runs, env, args.timeout)
            use_checkov = checkov if size <= args.no_checkov_above else None
            rows += scenario(f"{size} files ({megabytes:.1f} MB)", root, root, use_checkov, detect_secrets,
                             args.runs, env, args.timeout)
            print("\n".join(rows[-8:]), file=sys.stderr)
    finally:
        if args.keep is None:
            shutil.rmtree(workspace, ignore_errors=True)
    print(f"<!-- python bench/side_by_side.py --sizes {' '.join(map(str, args.sizes))} --runs {args.runs} --seed "
          f"{args.seed}; {os.cpu_count()} CPUs, load average {load:.1f} at the start; "
          f"checkov {'present' if checkov else 'absent'} -->")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
