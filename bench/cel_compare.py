"""CEL for user-written rules: ``common-expression-language`` (``cel``, Rust) against ``cel-python`` (``celpy``).

A standalone measurement, not part of spikelint: it imports neither spikelint nor anything of the
repository, and runs in a scratch environment that has the two candidates installed::

    python3 -m venv /tmp/cel-venv
    /tmp/cel-venv/bin/pip install common-expression-language cel-python
    /tmp/cel-venv/bin/python bench/cel_compare.py [--activations 2000] [--seed 7]

Each library is imported only if present; a missing one is reported and skipped.  For each
library it measures:

* compile time per expression (each expression compiled ONCE for the evaluation runs; the
  per-compile figure is the median of repeated compiles of the same text),
* evaluation time per expression over N generated workload activations (``workload`` and
  ``container`` variables: maps of strings, lists, ints, doubles, bools and nulls), and the
  whole "every rule on every workload" loop a linter would run,
* how errors are signalled (exception class and exact text) for a fixed set of cases,
* optional syntax (``.?`` / ``orValue``), ``has()`` on map keys, conversion in and out,
* picklability, a multiprocessing pool, and concurrent use from threads.

cel-python has two runners (``InterpretedRunner``, the default, and ``CompiledRunner``, which
transpiles to Python); both are measured.  Its Lark parser is a process-wide singleton built
for one runner's tree class, so the script resets ``celpy.CELParser.CEL_PARSER`` between them.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import multiprocessing
import pickle
import platform
import random
import re
import statistics
import sys
import threading
import time
import traceback
from collections import Counter
from typing import Any, Callable

try:
    import cel  # common-expression-language
except ImportError as exc:  # pragma: no cover - reported
    cel = None
    CEL_IMPORT_ERROR = f"{type(exc).__name__}: {exc}"
else:
    CEL_IMPORT_ERROR = ""

try:
    import celpy  # cel-python
    import celpy.celtypes
except ImportError as exc:  # pragma: no cover - reported
    celpy = None
    CELPY_IMPORT_ERROR = f"{type(exc).__name__}: {exc}"
else:
    CELPY_IMPORT_ERROR = ""

MAX_MESSAGE = 600  # longer exception texts are cut, with their full length given


class CountingHandler(logging.Handler):
    """celpy logs some evaluation errors at ERROR level (CompiledRunner: every one); count, don't print."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.first: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        key = f"{record.name} {record.levelname}"
        self.counts[key] += 1
        self.first.setdefault(key, record.getMessage()[:200])


LOG_COUNTS = CountingHandler()
logging.getLogger("celpy").addHandler(LOG_COUNTS)
logging.getLogger("celpy").propagate = False

# --------------------------------------------------------------------------------------------
# The rule expressions

EXPRESSIONS: list[tuple[str, str]] = [
    ("gpus_le_8", "workload.gpus <= 8.0"),
    ("registry", 'container.image.registry == "harbor.acme.io"'),
    ("has_owner", "has(workload.labels.owner)"),
    ("in_owner", '"owner" in workload.labels'),
    ("team_in_list", 'workload.labels["team"] in ["nlp", "vision"]'),
    ("deadline_set", "workload.deadline_seconds != null"),
    ("slurm_not_debug", 'workload.slurm["partition"] != "debug"'),
    ("no_nccl_debug", '!(container.env.exists(k, k == "NCCL_DEBUG"))'),
    ("argv_debug", 'container.argv.exists(a, a.startsWith("--debug"))'),
    ("all_digests", "workload.containers.all(c, c.image.digest != null)"),
    ("gpu_exception", 'workload.gpus <= 8.0 || workload.annotations["acme.io/gpu-exception"] == "approved"'),
    ("message", '"image " + container.image.reference + " is not allowed"'),
    ("optional_owner", 'workload.?labels.?owner.orValue("") != ""'),
]

# --------------------------------------------------------------------------------------------
# Generated workloads

TEAMS = ["nlp", "vision", "speech", "rl", "infra"]
REGISTRIES = ["harbor.acme.io", "docker.io", "ghcr.io", "nvcr.io"]
REPOS = ["trainer", "pytorch", "megatron", "jax-runner", "eval"]
PARTITIONS = ["gpu", "gpu-large", "debug", "preempt"]
GPUS = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
ENV_KEYS = ["NCCL_DEBUG", "NCCL_IB_HCA", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "PYTHONUNBUFFERED", "WANDB_MODE"]
ARGS = ["--epochs", "10", "--lr", "3e-4", "--debug", "--debug-nans", "--bf16", "--resume"]


def make_container(rng: random.Random, i: int) -> dict[str, Any]:
    registry = rng.choice(REGISTRIES)
    repo = rng.choice(REPOS)
    tag = f"v{rng.randint(1, 9)}.{rng.randint(0, 20)}"
    digest = f"sha256:{rng.getrandbits(256):064x}" if rng.random() < 0.6 else None
    reference = f"{registry}/{repo}:{tag}" + (f"@{digest}" if digest else "")
    env = {k: str(rng.randint(0, 9)) for k in rng.sample(ENV_KEYS, rng.randint(0, 4))}
    return {
        "name": f"c{i}",
        "image": {"registry": registry, "repository": repo, "tag": tag, "digest": digest, "reference": reference},
        "env": env,
        "argv": ["python", "train.py"] + rng.sample(ARGS, rng.randint(0, 4)),
        "privileged": rng.random() < 0.05,
        "memory_gib": rng.choice([16, 32, 64, 128]),
    }


def make_activation(rng: random.Random, i: int) -> dict[str, Any]:
    containers = [make_container(rng, j) for j in range(rng.randint(1, 3))]
    labels = {"team": rng.choice(TEAMS), "app": "train"}
    if rng.random() < 0.7:
        labels["owner"] = rng.choice(["alice", "bob", "carol"])
    annotations: dict[str, Any] = {"acme.io/cost-center": str(rng.randint(100, 999))}
    if rng.random() < 0.5:
        annotations["acme.io/gpu-exception"] = rng.choice(["approved", "pending"])
    workload = {
        "name": f"job-{i}",
        "kind": rng.choice(["Job", "PyTorchJob", "SlurmBatch"]),
        "gpus": rng.choice(GPUS),  # always a Python float here: see the int/double section
        "retries": rng.randint(0, 5),
        "deadline_seconds": rng.choice([None, 3600, 86400]),
        "preemptible": rng.random() < 0.5,
        "labels": labels,
        "annotations": annotations,
        "slurm": {"partition": rng.choice(PARTITIONS), "nodes": rng.randint(1, 16), "qos": None},
        "containers": containers,
    }
    return {"workload": workload, "container": containers[0]}


# --------------------------------------------------------------------------------------------
# Adapters: one uniform face per library / runner


class Adapter:
    name = "?"
    version = "?"

    def compile(self, text: str) -> Any:
        raise NotImplementedError

    def prepare(self, activation: dict[str, Any]) -> Any:
        """What evaluate() takes: the activation converted once, if the library needs it."""
        return activation

    def evaluate(self, program: Any, prepared: Any) -> Any:
        raise NotImplementedError

    def to_python(self, value: Any) -> Any:
        return value


class CelRust(Adapter):
    name = "cel (common-expression-language)"

    def __init__(self) -> None:
        self.version = importlib.metadata.version("common-expression-language")

    def compile(self, text: str) -> Any:
        return cel.compile(text)

    def evaluate(self, program: Any, prepared: Any) -> Any:
        return program.execute(prepared)


class CelRustContext(CelRust):
    """Same library, activation converted once per workload into a cel.Context."""

    name = "cel + Context per workload"

    def prepare(self, activation: dict[str, Any]) -> Any:
        return cel.Context(variables=activation)


def celpy_to_python(value: Any) -> Any:
    """celpy results are celtypes wrappers (subclasses of int/float/str/dict/list); unwrap them."""
    ct = celpy.celtypes
    if value is None:
        return None
    if isinstance(value, ct.BoolType):
        return bool(value)
    if isinstance(value, ct.IntType | ct.UintType):
        return int(value)
    if isinstance(value, ct.DoubleType):
        return float(value)
    if isinstance(value, ct.StringType):
        return str(value)
    if isinstance(value, ct.BytesType):
        return bytes(value)
    if isinstance(value, ct.ListType):
        return [celpy_to_python(v) for v in value]
    if isinstance(value, ct.MapType):
        return {celpy_to_python(k): celpy_to_python(v) for k, v in value.items()}
    return value


class CelPy(Adapter):
    runner = "InterpretedRunner"

    def __init__(self) -> None:
        self.version = importlib.metadata.version("cel-python")
        self.name = f"celpy {self.runner}"
        runner_class = getattr(celpy, self.runner)
        # The Lark parser is a class-level singleton built with the first runner's tree class
        # (CompiledRunner needs TranspilerTree nodes): build one per adapter and swap it in.
        celpy.CELParser.CEL_PARSER = None
        self.env = celpy.Environment(runner_class=runner_class)
        self.parser = celpy.CELParser.CEL_PARSER

    def compile(self, text: str) -> Any:
        celpy.CELParser.CEL_PARSER = self.parser
        return self.env.program(self.env.compile(text))

    def prepare(self, activation: dict[str, Any]) -> Any:
        return {k: celpy.json_to_cel(v) for k, v in activation.items()}

    def evaluate(self, program: Any, prepared: Any) -> Any:
        return program.evaluate(prepared)

    def to_python(self, value: Any) -> Any:
        return celpy_to_python(value)


class CelPyCompiled(CelPy):
    runner = "CompiledRunner"


def adapters() -> list[Callable[[], Adapter]]:
    found: list[Callable[[], Adapter]] = []
    if cel is not None:
        found += [CelRust, CelRustContext]
    if celpy is not None:
        found += [CelPy, CelPyCompiled]
    return found


# --------------------------------------------------------------------------------------------
# Helpers


def describe_exc(exc: BaseException) -> str:
    cls = type(exc)
    where = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    text = str(exc)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + f" ...[cut; {len(text)} chars in all]"
    extra = []
    for attr in ("line", "column"):
        if getattr(exc, attr, None) is not None:
            extra.append(f"{attr}={getattr(exc, attr)}")
    return f"{where}: {text!r}" + (f"  [{', '.join(extra)}]" if extra else "")


def show_value(value: Any) -> str:
    return f"{value!r}  (type {type(value).__module__}.{type(value).__qualname__})"


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def section(title: str) -> None:
    print()
    print("=" * 100)
    print(title)
    print("=" * 100)


# --------------------------------------------------------------------------------------------
# 1. Speed


def bench_speed(adapter_classes: list[Callable[[], Adapter]], activations: list[dict[str, Any]]) -> None:
    section(f"1. SPEED: compile once per expression; evaluate over {len(activations)} activations")
    outcomes: dict[str, dict[str, list[Any]]] = {}
    summary = []
    for make in adapter_classes:
        t0 = time.perf_counter()
        adapter = make()
        setup = time.perf_counter() - t0
        # first compile in the process: includes any one-off grammar/parser build
        t0 = time.perf_counter()
        try:
            adapter.compile("1 + 1")
        except Exception:  # noqa: BLE001 - the library's own exception is what is measured and reported
            pass
        cold = time.perf_counter() - t0
        LOG_COUNTS.counts.clear()
        print(f"\n--- {adapter.name} {adapter.version}")
        print(f"    environment setup {setup * 1e3:.2f} ms; first compile in process {cold * 1e3:.2f} ms (cold)")
        t0 = time.perf_counter()
        prepared = [adapter.prepare(a) for a in activations]
        prep = time.perf_counter() - t0
        print(f"    converting the activations once: {prep / len(activations) * 1e6:.1f} us per activation"
              f"{'  (none: plain dicts passed to every call)' if type(adapter).prepare is Adapter.prepare else ''}")
        print(f"    {'expression':<16} {'compile us':>11} {'eval us':>9} {'true':>6} {'false':>6} {'error':>6}  error kinds")
        programs = {}
        compile_us_all, eval_us_all = [], []
        for key, text in EXPRESSIONS:
            try:
                program = adapter.compile(text)
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    {key:<16} {'COMPILE ERROR':>11}  {describe_exc(exc)[:150]}")
                outcomes.setdefault(key, {})[adapter.name] = ["compile error"] * len(activations)
                continue
            programs[key] = program
            compile_s = median_time(lambda text=text: adapter.compile(text), 25)
            kinds: Counter[str] = Counter()
            elapsed = float("inf")
            for _pass in range(3):  # best of three passes over all activations
                results: list[Any] = []
                t0 = time.perf_counter()
                for p in prepared:
                    try:
                        results.append(adapter.evaluate(program, p))
                    except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                        results.append(exc)
                elapsed = min(elapsed, time.perf_counter() - t0)
            normalised = []
            for r in results:
                if isinstance(r, BaseException):
                    kinds[type(r).__name__] += 1
                    normalised.append("error")
                else:
                    normalised.append(adapter.to_python(r))
            outcomes.setdefault(key, {})[adapter.name] = normalised
            n_true = sum(1 for r in normalised if r is True)
            n_false = sum(1 for r in normalised if r is False)
            eval_us = elapsed / len(prepared) * 1e6
            compile_us_all.append(compile_s * 1e6)
            eval_us_all.append(eval_us)
            print(f"    {key:<16} {compile_s * 1e6:>11.1f} {eval_us:>9.2f} {n_true:>6} {n_false:>6} "
                  f"{sum(kinds.values()):>6}  {dict(kinds) if kinds else ''}")
        # the linter's loop: every compiled rule on every workload, conversion included
        t0 = time.perf_counter()
        for a in activations:
            p = adapter.prepare(a)
            for program in programs.values():
                try:
                    adapter.evaluate(program, p)
                except Exception:  # noqa: BLE001 - the library's own exception is what is measured and reported
                    pass
        loop = time.perf_counter() - t0
        per_workload = loop / len(activations) * 1e6
        print(f"    all {len(programs)} compiled rules x {len(activations)} workloads, converting each workload once:"
              f" {loop * 1e3:.1f} ms ({per_workload:.1f} us per workload)")
        if LOG_COUNTS.counts:
            print(f"    log records emitted by the library during this run: {dict(LOG_COUNTS.counts)};"
                  f" first: {next(iter(LOG_COUNTS.first.values()))!r}")
        summary.append((adapter.name, adapter.version, statistics.median(compile_us_all) if compile_us_all else 0.0,
                        statistics.median(eval_us_all) if eval_us_all else 0.0, prep / len(activations) * 1e6,
                        per_workload, cold * 1e3))
    print("\nSUMMARY (medians over the expressions that compiled)")
    print(f"    {'library':<36} {'compile us':>11} {'eval us':>9} {'convert us':>11} {'all rules/workload us':>22}"
          f" {'cold 1st compile ms':>20}")
    for name, version, c_us, e_us, p_us, w_us, cold_ms in summary:
        print(f"    {name + ' ' + version:<36} {c_us:>11.1f} {e_us:>9.2f} {p_us:>11.1f} {w_us:>22.1f} {cold_ms:>20.1f}")

    print("\nAGREEMENT between libraries (same activations; 'error' counts as a value)")
    for key, _text in EXPRESSIONS:
        per_lib = outcomes.get(key, {})
        names = list(per_lib)
        if len(names) < 2:
            continue
        base = per_lib[names[0]]
        for other in names[1:]:
            diffs = [i for i, (x, y) in enumerate(zip(base, per_lib[other], strict=True)) if x != y]
            if diffs:
                i = diffs[0]
                print(f"    {key:<16} {names[0]} vs {other}: {len(diffs)} differ; first at #{i}: "
                      f"{base[i]!r} vs {per_lib[other][i]!r}")
        if all(per_lib[n] == base for n in names[1:]):
            print(f"    {key:<16} all agree")


# --------------------------------------------------------------------------------------------
# 2. Behaviour probes

BASE_WORKLOAD: dict[str, Any] = {
    "gpus": 4.0,
    "retries": 2,
    "deadline_seconds": None,
    "labels": {"team": "nlp"},
    "annotations": {},
    "slurm": {"partition": "gpu"},
    "containers": [{"image": {"digest": None}}],
}
BASE_CONTAINER: dict[str, Any] = {
    "image": {"registry": "harbor.acme.io", "reference": "harbor.acme.io/trainer:v1", "digest": None},
    "env": {"OMP_NUM_THREADS": "4"},
    "argv": ["python", "train.py"],
}


def base_activation(**workload_overrides: Any) -> dict[str, Any]:
    workload = dict(BASE_WORKLOAD)
    workload.update(workload_overrides)
    return {"workload": workload, "container": dict(BASE_CONTAINER)}


PROBES: list[tuple[str, str, dict[str, Any]]] = [
    ("(a) missing map key, index syntax", 'workload.labels["owner"]', base_activation()),
    ("(a) missing map key, field syntax", "workload.labels.owner", base_activation()),
    ("(a) missing key inside ||, other side true", 'workload.labels["owner"] == "x" || true', base_activation()),
    ("(a) missing key inside ||, other side false", 'workload.labels["owner"] == "x" || false', base_activation()),
    ("(b) type error double > string", 'workload.gpus > "8"', base_activation()),
    ("(b) type error string + null", '"image " + container.image.digest', base_activation()),
    ("(c) int var <= double literal (retries=2)", "workload.retries <= 3.0", base_activation()),
    ("(c) double literal >= int var (retries=2)", "3.0 >= workload.retries", base_activation()),
    ("(c) double var <= int literal (gpus=4.0)", "workload.gpus <= 8", base_activation()),
    ("(c) int var == double literal (retries=2)", "workload.retries == 2.0", base_activation()),
    ("(c) gpus given as Python int 4, rule says 8.0", "workload.gpus <= 8.0", base_activation(gpus=4)),
    ("(c) gpus given as Python float 0.5", "workload.gpus <= 8.0", base_activation(gpus=0.5)),
    ("(c) int + double arithmetic", "workload.retries + 1.0", base_activation()),
    ("(d) null != null (deadline None)", "workload.deadline_seconds != null", base_activation()),
    ("(d) null == null", "workload.deadline_seconds == null", base_activation()),
    ("(d) set value != null (deadline 3600)", "workload.deadline_seconds != null", base_activation(deadline_seconds=3600)),
    ("(d) null ordered against int", "workload.deadline_seconds > 0", base_activation()),
    ("(d) null == 0", "workload.deadline_seconds == 0", base_activation()),
    ("(e) syntax: dangling operator", "workload.gpus <= 8 &&", base_activation()),
    ("(e) syntax: bad token mid-expression", "workload.gpus <= 8 ; true", base_activation()),
    ("(e) syntax: second line", 'workload.gpus <= 8.0 &&\n  container.image.registry == = "x"', base_activation()),
    ("(e) syntax: unbalanced paren", "!(container.env.exists(k, k == \"NCCL_DEBUG\")", base_activation()),
    ("(f) undeclared function", "foo(workload.gpus)", base_activation()),
    ("(f) typo in macro name -> method call", 'container.argv.exist(a, a == "--debug")', base_activation()),
    ("(f) cel-go extension function lowerAscii", 'workload.labels.team.lowerAscii() == "nlp"', base_activation()),
    ("(f) undeclared variable", "pod.spec == null", base_activation()),
    ("has() on present map key", "has(workload.labels.team)", base_activation()),
    ("has() on absent map key", "has(workload.labels.owner)", base_activation()),
    ("has() on key whose value is null", "has(workload.deadline_seconds)", base_activation()),
    ("has() through an absent parent map", "has(workload.missing.owner)", base_activation()),
    ("has() with index syntax (not allowed by spec)", 'has(workload.labels["owner"])', base_activation()),
    ("'in' on map keys", '"owner" in workload.labels', base_activation()),
    ("optional: .? chain + orValue", 'workload.?labels.?owner.orValue("") != ""', base_activation()),
    ("optional: [?key] index", 'workload.labels[?"owner"].orValue("none")', base_activation()),
    ("optional: optional.of / hasValue", "optional.of(1).hasValue()", base_activation()),
    ("optional: optional.none()", "optional.none().orValue(3)", base_activation()),
    ("exists() where an early element errors", "workload.containers.exists(c, c.x == 1)",
     base_activation(containers=[{}, {"x": 1}])),
    ("all() where an element lacks the key", "workload.containers.all(c, c.image.digest != null)",
     base_activation(containers=[{"image": {"digest": "sha256:1"}}, {"image": {}}])),
    ("size() of a non-ASCII string (spec: code points = 5)", 'size("h\u00e9llo")', base_activation()),
    ("bool vs int equality (Python True)", "workload.preemptible == 1", base_activation(preemptible=True)),
    ("string template result", '"image " + container.image.reference + " is not allowed"', base_activation()),
    ("result: list", "container.argv", base_activation()),
    ("result: map", "workload.labels", base_activation()),
    ("result: null", "container.image.digest", base_activation()),
    ("result: double", "workload.gpus", base_activation()),
    ("result: int", "workload.retries", base_activation()),
    ("divide by zero", "workload.retries / 0", base_activation()),
]


def run_probe(adapter: Adapter, text: str, activation: dict[str, Any]) -> str:
    try:
        program = adapter.compile(text)
    except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
        return "COMPILE  " + describe_exc(exc)
    try:
        prepared = adapter.prepare(activation)
    except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
        return "CONVERT  " + describe_exc(exc)
    try:
        value = adapter.evaluate(program, prepared)
    except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
        return "EVAL     " + describe_exc(exc)
    return "-> " + show_value(value)


def bench_behaviour(adapter_classes: list[Callable[[], Adapter]]) -> None:
    section("2. BEHAVIOUR: errors (a)-(f), has(), optional syntax, spec corners, result types")
    chosen = [a() for a in adapter_classes if a not in (CelRustContext, CelPyCompiled)]
    for label, text, activation in PROBES:
        print(f"\n{label}\n    expr: {text!r}")
        for adapter in chosen:
            print(f"    {adapter.name:<24} {run_probe(adapter, text, activation)}")
    if celpy is not None and CelPyCompiled in adapter_classes:
        compiled = CelPyCompiled()
        print("\ncelpy CompiledRunner, where it differs from InterpretedRunner on the probes above:")
        interp = CelPy()
        same = True
        for label, text, activation in PROBES:
            a, b = run_probe(interp, text, activation), run_probe(compiled, text, activation)
            if re.sub(r"0x[0-9a-f]+", "0x?", a) != re.sub(r"0x[0-9a-f]+", "0x?", b):
                same = False
                print(f"    {label}: interpreted {a[:160]}\n    {'':{len(label)}}  compiled    {b[:160]}")
        if same:
            print("    (no differences)")

    # compile-time position for syntax errors
    print("\nSyntax-error position, structured or not:")
    bad = "workload.gpus <= 8.0 &&\n  container.image.registry == = \"x\""
    if cel is not None:
        try:
            cel.compile(bad)
        except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
            found = re.findall(r"<input>:(\d+):(\d+)", str(exc))
            print(f"    cel: {type(exc).__name__}; attributes beyond args: "
                  f"{[a for a in dir(exc) if not a.startswith('_') and a not in ('args', 'add_note', 'with_traceback')]}"
                  f"; (line, column) pairs parsed from the message text: {found}")
    if celpy is not None:
        env = CelPy().env
        try:
            env.compile(bad)
        except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
            print(f"    celpy: {type(exc).__module__}.{type(exc).__name__}; exc.line={exc.line}, exc.column={exc.column};"
                  f" exc.args[1:] = {exc.args[1:]!r}"[:400])

    # compile-time discovery of undeclared functions / variables
    print("\nStatic checks available after compile (to reject unknown functions before evaluating):")
    if cel is not None:
        p = cel.compile('container.argv.exist(a, a == "--debug") && foo(workload.gpus)')
        print(f"    cel Program.references(): {p.references()}")
    if celpy is not None:
        print("    celpy: no reference-listing API; the lark AST from Environment.compile() can be walked.")

    # error class hierarchy
    print("\nException classes a caller has to catch:")
    if cel is not None:
        print("    cel: compile -> ValueError; evaluation -> builtins KeyError / TypeError / RuntimeError / ValueError /"
              " ZeroDivisionError / OverflowError / IndexError (no common CEL-specific base class);"
              " unconvertible input -> ValueError")
    if celpy is not None:
        print(f"    celpy: compile -> {celpy.CELParseError.__module__}.CELParseError{celpy.CELParseError.__mro__[1:-1]};"
              f" evaluation -> {celpy.CELEvalError.__module__}.CELEvalError{celpy.CELEvalError.__mro__[1:-1]};"
              " unconvertible input -> ValueError from json_to_cel")
        try:
            CelPy().compile("workload.labels.owner").evaluate(CelPy().prepare(base_activation()))
        except celpy.CELEvalError as exc:
            print(f"    celpy CELEvalError.args = {exc.args!r}; .line={exc.line} .column={exc.column}"
                  f" .tree={'set' if exc.tree is not None else None} .token={exc.token!r}")


# --------------------------------------------------------------------------------------------
# 3. Conversion in and out


class Opaque:
    pass


CONVERSION_INPUTS: list[tuple[str, Any]] = [
    ("dict[str, str]", {"a": "b"}),
    ("list", [1, 2]),
    ("tuple", (1, 2)),
    ("None", None),
    ("bool", True),
    ("int", 7),
    ("float", 0.5),
    ("bytes", b"ab"),
    ("int 2**63 (over int64)", 2**63),
    ("int 2**64 (over uint64)", 2**64),
    ("dict with int keys", {1: "a"}),
    ("set", {1, 2}),
    ("datetime (tz-aware)", __import__("datetime").datetime(2024, 1, 1, tzinfo=__import__("datetime").timezone.utc)),
    ("arbitrary object", Opaque()),
]


def bench_conversion(adapter_classes: list[Callable[[], Adapter]]) -> None:
    section("3. CONVERSION: what a variable may hold, what comes back")
    if cel is not None:
        print("\ncel: plain Python values passed straight to Program.execute({'x': value}); result of expression 'x':")
        p = cel.compile("x")
        for label, value in CONVERSION_INPUTS:
            try:
                print(f"    {label:<26} -> {show_value(p.execute({'x': value}))}")
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    {label:<26} -> {describe_exc(exc)}")
    if celpy is not None:
        env = CelPy().env
        prog = env.program(env.compile("x"))
        print("\ncelpy: celpy.json_to_cel(value), then evaluate 'x':")
        for label, value in CONVERSION_INPUTS:
            try:
                converted = celpy.json_to_cel(value)
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    {label:<26} -> json_to_cel {describe_exc(exc)}")
                continue
            try:
                print(f"    {label:<26} -> {show_value(prog.evaluate({'x': converted}))}")
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    {label:<26} -> evaluate {describe_exc(exc)}")
        print("\ncelpy: plain (unconverted) Python values passed to evaluate():")
        plain_cases = [
            ("workload.gpus <= 8.0", {"workload": {"gpus": 0.5}}),
            ("workload.labels.team == 'nlp'", {"workload": {"labels": {"team": "nlp"}}}),
            ("container.argv.exists(a, a.startsWith('--debug'))", {"container": {"argv": ["--debug"]}}),
            ("workload.deadline_seconds != null", {"workload": {"deadline_seconds": None}}),
            ("size(container.argv)", {"container": {"argv": ["a", "b"]}}),
            ("workload.retries + 1", {"workload": {"retries": 2}}),
            ("workload.labels", {"workload": {"labels": {"team": "nlp"}}}),
        ]
        for text, act in plain_cases:
            try:
                print(f"    {text:<52} -> {show_value(prog_eval(env, text, act))}")
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    {text:<52} -> {describe_exc(exc)[:200]}")
        r = env.program(env.compile("workload.labels")).evaluate({k: celpy.json_to_cel(v) for k, v in
                                                                  base_activation().items()})
        print(f"    celtypes subclass Python builtins? BoolType<-int: {issubclass(celpy.celtypes.BoolType, int)},"
              f" StringType<-str: {issubclass(celpy.celtypes.StringType, str)},"
              f" MapType<-dict: {issubclass(celpy.celtypes.MapType, dict)};"
              f" json.dumps(map result) -> {__import__('json').dumps(r)!r}")


def prog_eval(env: Any, text: str, act: dict[str, Any]) -> Any:
    return env.program(env.compile(text)).evaluate(act)


# --------------------------------------------------------------------------------------------
# 4. Pickling, processes, threads

RULE_SOURCES = [text for _key, text in EXPRESSIONS[:12]]
_WORKER_PROGRAMS: list[Any] = []
_WORKER_ADAPTER: list[Adapter] = []


def _worker_init(lib: str) -> None:
    """Pool initializer: compile the rule sources once per worker process."""
    adapter = CelRustContext() if lib == "cel" else CelPy()
    _WORKER_ADAPTER[:] = [adapter]
    _WORKER_PROGRAMS[:] = [adapter.compile(t) for t in RULE_SOURCES]


def _worker_eval(activation: dict[str, Any]) -> list[Any]:
    adapter = _WORKER_ADAPTER[0]
    prepared = adapter.prepare(activation)
    out = []
    for program in _WORKER_PROGRAMS:
        try:
            out.append(adapter.to_python(adapter.evaluate(program, prepared)))
        except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
            out.append(f"{type(exc).__name__}")
    return out


def bench_concurrency(adapter_classes: list[Callable[[], Adapter]], activations: list[dict[str, Any]]) -> None:
    section("4. PICKLING, MULTIPROCESSING, THREADS")
    libs = []
    if cel is not None:
        libs.append("cel")
    if celpy is not None:
        libs.append("celpy")

    print("\npickle.dumps of compiled programs:")
    if cel is not None:
        p = cel.compile("workload.gpus <= 8.0")
        for what, obj in (("cel.Program", p), ("cel.Context", cel.Context(variables={"x": 1}))):
            try:
                blob = pickle.dumps(obj)
                print(f"    {what:<32} OK ({len(blob)} bytes)")
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    {what:<32} {describe_exc(exc)}")
        print(f"    cel.Program.source (re-compile from this in a worker): {p.source!r}")
    if celpy is not None:
        for make in (CelPy, CelPyCompiled):
            adapter = make()
            ast = adapter.env.compile("workload.gpus <= 8.0")
            runner = adapter.env.program(ast)
            for what, obj in ((f"celpy AST ({make.runner})", ast), (f"celpy {make.runner}", runner)):
                try:
                    blob = pickle.dumps(obj)
                    back = pickle.loads(blob)
                    check = ""
                    if hasattr(back, "evaluate"):
                        check = f"; unpickled evaluates to {back.evaluate(adapter.prepare({'workload': {'gpus': 1.0}}))!r}"
                    print(f"    {what:<32} OK ({len(blob)} bytes{check})")
                except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                    print(f"    {what:<32} {describe_exc(exc)}")

    sample = activations
    for method in ("fork", "spawn"):
        for lib in libs:
            t0 = time.perf_counter()
            try:
                ctx = multiprocessing.get_context(method)
                with ctx.Pool(2, initializer=_worker_init, initargs=(lib,)) as pool:
                    results = pool.map(_worker_eval, sample, chunksize=50)
                print(f"    Pool({method}, 2 workers, programs compiled in initializer) {lib:<6}: "
                      f"{len(results)} workloads x {len(RULE_SOURCES)} rules OK in {time.perf_counter() - t0:.2f} s"
                      " (incl. pool start)")
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                print(f"    Pool({method}) {lib}: FAILED {describe_exc(exc)}")
    if cel is not None:
        try:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(1) as pool:
                pool.map(len, [[cel.compile("1")]])
            print("    sending a cel.Program to a pool worker: OK")
        except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
            print(f"    sending a cel.Program to a pool worker: {describe_exc(exc)}")

    print("\nThreads: one shared compiled program, 4 threads vs the same work in one thread:")
    for make in adapter_classes:
        adapter = make()
        program = adapter.compile('container.argv.exists(a, a.startsWith("--debug")) && workload.gpus <= 8.0')
        prepared = [adapter.prepare(a) for a in activations[:500]]
        expected = []
        for p in prepared:
            try:
                expected.append(adapter.to_python(adapter.evaluate(program, p)))
            except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                expected.append(type(exc).__name__)
        rounds = 8 if isinstance(adapter, CelRust) else 2
        rounds = 40 if isinstance(adapter, CelRustContext) else rounds
        mismatches: list[int] = []

        def work(adapter: Adapter = adapter, program: Any = program, prepared: list[Any] = prepared,
                 expected: list[Any] = expected, rounds: int = rounds, mismatches: list[int] = mismatches) -> None:
            bad = 0
            for _ in range(rounds):
                for p, want in zip(prepared, expected, strict=True):
                    try:
                        got = adapter.to_python(adapter.evaluate(program, p))
                    except Exception as exc:  # noqa: BLE001 - the library's own exception is what is measured and reported
                        got = type(exc).__name__
                    bad += got != want
            mismatches.append(bad)

        t0 = time.perf_counter()
        for _ in range(4):
            work()
        serial = time.perf_counter() - t0
        mismatches.clear()
        threads = [threading.Thread(target=work) for _ in range(4)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        threaded = time.perf_counter() - t0
        print(f"    {adapter.name:<28} serial {serial * 1e3:8.1f} ms, 4 threads {threaded * 1e3:8.1f} ms "
              f"(speed-up x{serial / threaded:.2f}); wrong results under threads: {sum(mismatches)}")
    if celpy is not None:
        shared = celpy.evaluation.result.__globals__
        print("    why celpy CompiledRunner can go wrong under threads: its evaluate() stores the activation and the"
              " result in the celpy.evaluation module's globals (shared by every thread): "
              f"'base_activation' in globals: {'base_activation' in shared}, 'CEL' in globals: {'CEL' in shared}")


# --------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--activations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    section("0. ENVIRONMENT")
    print(f"python {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}")
    for dist, module, err in (("common-expression-language", "cel", CEL_IMPORT_ERROR),
                              ("cel-python", "celpy", CELPY_IMPORT_ERROR)):
        if err:
            print(f"{dist:<28} MISSING (import {module} failed: {err}) -> skipped")
        else:
            print(f"{dist:<28} {importlib.metadata.version(dist):<10} import name {module!r}")
    for dep in ("lark", "google-re2", "pendulum"):
        try:
            print(f"    dependency {dep:<16} {importlib.metadata.version(dep)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    classes = adapters()
    if not classes:
        print("Neither library is installed; nothing to measure.")
        return 1

    rng = random.Random(args.seed)
    activations = [make_activation(rng, i) for i in range(args.activations)]
    print(f"{len(activations)} activations generated (seed {args.seed}); evaluation times are the best of 3 passes;"
          " compile times the median of 25 compiles")

    for step in (lambda: bench_speed(classes, activations), lambda: bench_behaviour(classes),
                 lambda: bench_conversion(classes), lambda: bench_concurrency(classes, activations)):
        try:
            step()
        except Exception:  # noqa: BLE001 - the library's own exception is what is measured and reported
            print("SECTION FAILED:")
            traceback.print_exc(file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
