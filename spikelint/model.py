"""Plain data types that flow one way: documents -> workloads -> problems -> findings.

Positions are 1-based everywhere outside the parsers.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from typing import Any
from typing import Callable
from typing import Iterator
from typing import Mapping
from typing import NamedTuple
from typing import Sequence


class Located(NamedTuple):
    """A value and the 1-based position where it was written."""

    value: Any
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None


@dataclass(eq=False, slots=True)
class Node:
    """One value of a parsed YAML/JSON/TOML tree, with its position.

    ``kind`` is ``"map"``, ``"seq"`` or ``"scalar"``.  A map's ``value`` is a
    ``dict[str, Node]`` (keys converted to ``str``) and ``keys`` holds where each key was
    written; a sequence's is a ``list[Node]``; a scalar's is ``str``, ``int``, ``float``,
    ``bool`` or ``None``.  YAML aliases share the anchored node object instead of copying it,
    so walk trees with :func:`walk`, which visits a shared node once.
    """

    kind: str
    value: Any
    line: int
    column: int
    end_line: int
    end_column: int
    keys: dict[str, Located] | None = None
    tag: str | None = None
    quoted: bool = False
    # the preorder of the tree under a root node, computed by the first walk (see walk())
    walked: list[tuple[tuple[str | int, ...], Node]] | None = field(default=None, init=False, repr=False)

    def get(self, *path: str | int) -> Node | None:
        """Follow map keys / sequence indexes; ``None`` when any step is missing."""
        node: Node | None = self
        for step in path:
            if node is None:
                return None
            if isinstance(step, int):
                if node.kind != "seq" or not -len(node.value) <= step < len(node.value):
                    return None
                node = node.value[step]
            else:
                if node.kind != "map":
                    return None
                node = node.value.get(step)
        return node

    def scalar(self, *path: str | int) -> Any:
        """The scalar at ``path`` or ``None`` (also ``None`` for maps and sequences)."""
        node = self.get(*path)
        if node is None or node.kind != "scalar":
            return None
        return node.value

    def located(self) -> Located:
        return Located(self.value, self.line, self.column, self.end_line, self.end_column)

    def key_at(self, key: str) -> Located | None:
        """Where ``key`` of this map was written."""
        if self.kind != "map" or self.keys is None:
            return None
        return self.keys.get(key)

    def items(self) -> Iterator[tuple[str, Node]]:
        if self.kind == "map":
            yield from self.value.items()

    def children(self) -> list[Node]:
        if self.kind == "map":
            return list(self.value.values())
        if self.kind == "seq":
            return list(self.value)
        return []

    def to_python(self, limit: int = 1_000_000) -> Any:
        """Plain Python data (for jsonschema and the like); raises ValueError past ``limit`` nodes."""
        budget = [limit]

        def convert(node: Node) -> Any:
            budget[0] -= 1
            if budget[0] < 0:
                raise ValueError("document too large to convert")
            if node.kind == "map":
                return {key: convert(child) for key, child in node.value.items()}
            if node.kind == "seq":
                return [convert(child) for child in node.value]
            return node.value

        return convert(self)


def walk(root: Node) -> Iterator[tuple[tuple[str | int, ...], Node]]:
    """Every node under ``root`` with its key path, each shared (aliased) node once.

    Five checks walk every document tree; the order is computed on the first walk and kept on
    ``root`` (trees are not changed after parsing), so the others only iterate a list.
    """
    found = root.walked
    if found is None:
        found = root.walked = _preorder(root)
    return iter(found)


def _preorder(root: Node) -> list[tuple[tuple[str | int, ...], Node]]:
    found: list[tuple[tuple[str | int, ...], Node]] = []
    seen: set[int] = set()
    stack: list[tuple[tuple[str | int, ...], Node]] = [((), root)]
    pop, extend, visit, keep = stack.pop, stack.extend, seen.add, found.append
    while stack:
        entry = pop()
        node = entry[1]
        if id(node) in seen:
            continue
        visit(id(node))
        keep(entry)
        kind = node.kind
        if kind == "map":
            path = entry[0]
            extend([(path + (key,), child) for key, child in reversed(node.value.items())])
        elif kind == "seq":
            path = entry[0]
            extend([(path + (index,), child) for index, child in reversed(list(enumerate(node.value)))])
    return found


class FileKind:
    """The kinds of file that discovery recognises (plain strings, used as table keys)."""

    YAML = "yaml"
    JSON = "json"
    TOML = "toml"
    NOTEBOOK = "notebook"
    DOCKERFILE = "dockerfile"
    SHELL = "shell"
    PYTHON = "python"
    IMAGE = "image"  # an image tarball (docker save, OCI), or an archive of files: .zip, .tar.gz, .tgz …
    TEXT = "text"


@dataclass(frozen=True)
class SourceFile:
    """A file that discovery found: where it is and what kind it is."""

    path: str  # displayed path: relative to the current folder, '/'-separated
    abspath: str
    kind: str  # a FileKind value
    size: int = 0  # bytes, as discovery saw them (the engine sizes its worker pool from them)
    # named by Git's listing and not yet looked at on disk (the context of a hook run): read only if admissible
    listed: bool = False


@dataclass
class Suppression:
    """An inline ``# spikelint: disable=…`` comment (or a Kubernetes annotation)."""

    rules: tuple[str, ...]
    line: int  # where the comment is
    applies_to: tuple[int, ...]  # lines it covers; empty = whole file
    reason: str | None = None
    until: str | None = None  # YYYY-MM-DD
    column: int = 1
    used: bool = False
    report_unused: bool = True  # False for detect-secrets pragmas, which other tools own
    misplaced: str = ""  # why it is not honoured where it is written (a same-line comment in a Dockerfile)


@dataclass
class Document:
    """A parsed file: its text, parsed trees and kind-specific structure, all positioned.

    ``trees`` holds one root :class:`Node` per YAML document (JSON and TOML: one).
    ``parsed`` holds the kind-specific parse (a Dockerfile, shell script, notebook,
    ``ast.Module`` …).  ``errors`` are SPK001/SPK003 problems found while reading.
    """

    source: SourceFile
    text: str
    trees: list[Node] = field(default_factory=list)
    parsed: Any = None
    suppressions: list[Suppression] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # what a check asks of the whole text once per document, not once per workload of a long stream
    facts: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def fact(self, name: str, compute: Callable[[str], Any]) -> Any:
        """``compute(text)``, computed once per document (a stream of 8,000 objects asks 8,000 times)."""
        if name not in self.facts:
            self.facts[name] = compute(self.text)
        return self.facts[name]

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def kind(self) -> str:
        return self.source.kind

    @cached_property
    def lines(self) -> list[str]:
        """The text split once: checks ask per workload, and a stream of thousands of objects is one document."""
        return self.text.splitlines()


# --------------------------------------------------------------------------- workloads


@dataclass
class EnvVar:
    name: Located
    value: Located | None  # the literal value, None when it is a reference or empty
    reference: str | None = None  # "secretKeyRef", "configMapKeyRef", "runai-secret", "rest-secret", ...
    implied: bool = False  # set by the platform, not written in the file (Slurm's $SLURM_TMPDIR): rules do not see it


@dataclass
class Volume:
    name: str
    source: str  # "pvc", "ephemeral-pvc", "emptyDir", "hostPath", "nfs", "csi", "datasource", "configMap", "secret", "git", "s3", "other"
    persistent: bool
    location: Located | None = None
    claim: str | None = None


@dataclass
class Mount:
    path: Located
    volume: Volume | None  # None when the volume is not declared in the document
    read_only: bool = False


@dataclass
class Container:
    name: str
    role: str  # "main", "init", "ephemeral", "sidecar"
    image: Located | None
    command: list[Located] = field(default_factory=list)
    args: list[Located] = field(default_factory=list)
    env: list[EnvVar] = field(default_factory=list)
    env_from_secret: bool = False
    mounts: list[Mount] = field(default_factory=list)
    working_dir: Located | None = None
    gpus: Located | None = None  # GPUs per pod, as written
    accelerator: str = "GPU"  # what ``gpus`` counts, as messages name it: "GPU", "TPU chip", "Neuron device" …
    replica_group: str = ""  # "Master", "Worker", "launcher", JobSet replicatedJob name …
    replicas: int = 1  # pods that run this container


# the annotation (a Slurm job: ``#SBATCH --comment``) naming the one-GPU run a large request was tried as first
BASELINE_ANNOTATION = "spikelint.io/baseline"


@dataclass(frozen=True)
class Platform:
    """What is particular to the form a workload was written in, filled by its adapter (``adapters/``): the
    checks word their messages with it and never ask which platform it was (docs/model.md)."""

    form: str = "kubernetes"  # "kubernetes", "runai" (CRD), "runai-rest", "runai-cli", "slurm"
    label: str = ""  # how messages name the object before its name: "Job", "Slurm job", "Run:ai training workload"
    subject: str = "workload"  # "the {subject} retries …": "Job", "job", "workload"
    api_version: str = ""  # Kubernetes and Run:ai CRDs
    workload_class: str = ""  # Run:ai: training, distributed, workspace, interactive, inference
    runai: bool = False  # a Run:ai form or API group: only these get Run:ai advice
    line_range: tuple[int, int] = (1, 10**9)  # the object's lines (object-wide suppressions)
    settings_prefix: str = ""  # where run settings live: "spec.runPolicy." on Kubeflow jobs
    deadline_setting: str = "activeDeadlineSeconds"
    deadline_fix: str = "a deadline"  # SPK704: "set {deadline_fix} a margin above the expected run time"
    held_without_gpus: str = "its pods and their quota"  # what a hung run holds when it requests no accelerator
    held_until: str = "indefinitely"  # how long a hung run holds it without a deadline
    # SPK703 when the notice is too short: {grace}, {reason} (training/preemptible), {minimum}, {suggested}
    short_grace: str = ("termination grace period of {grace}s on a {reason} workload is below "
                        "min_grace_period_seconds ({minimum}): on preemption the pod is killed before a checkpoint "
                        "can be written — give it at least {minimum}s and save on SIGTERM")
    working_dir_setting: str = "workingDir"
    durable_storage: str = "a persistent volume"  # where checkpoints must go
    ephemeral_fix: str = "write under a mounted PVC"  # SPK301's advice when no mount is involved
    no_retries: str = "set the retries to 0"  # SPK405's other way out
    baseline_fix: str = f"add the annotation {BASELINE_ANNOTATION}: <run-id>"  # SPK701: how to name the baseline run
    replica_word: str = "pods"  # what one replica of the request is called in messages ("nodes" on Slurm)
    retried: str = ""  # SPK405 when the form has its own retry wording ("is requeued (#SBATCH --requeue)")
    mounts_volumes: bool = True  # False on Slurm: files live on the cluster's filesystems (SPK302/303 do not apply)
    node_local_only: bool = False  # True on Slurm: only node-local folders are lost when the job ends
    stdout_kept: bool = False  # True on Slurm: stdout already goes to a file (--output), SPK504 does not apply
    storage_unknown: bool = False  # storage attached by something the file only names (REST assets, a template)
    platform_paths: tuple[str, ...] = ()  # folders the platform mounts and reads itself (Katib's metrics collector)
    entrypoint: str = ""  # RayJob ``spec.entrypoint``


@dataclass(frozen=True)
class SlurmJob:
    """What only a Slurm batch job has (``workload.slurm``; ``None`` on every other form)."""

    directives: dict[str, Located]  # long option name -> value, as sbatch honours them (the last one wins)
    time_written: bool = False  # an #SBATCH --time is written (maybe unlimited)
    untrapped_signal: Located | None = None  # --signal=B:SIG that the batch shell does not trap
    ignored: tuple[Located, ...] = ()  # #SBATCH lines sbatch does not read (after the first command, indented)
    logs: tuple[tuple[str, Located], ...] = ()  # --output/--error and their paths
    requeue_by: str | None = None  # "#SBATCH --requeue" or "scontrol requeue"


@dataclass
class Workload:
    """One workload normalised from Kubernetes, a Run:ai CRD, a Run:ai REST body, a ``runai`` command or a
    Slurm batch script: the contract checks and team rules read (docs/model.md)."""

    path: str
    source: str  # "kubernetes", "runai-crd", "runai-rest", "runai-cli", "slurm": which adapter read it
    kind: str  # "Job", "PyTorchJob", "TrainingWorkload", "training" (REST/CLI) …
    anchor: Located  # where "missing something" findings point (kind key / name key / runai line)
    name: Located | None = None
    namespace: Located | None = None
    platform: Platform = field(default_factory=Platform)
    slurm: SlurmJob | None = None
    containers: list[Container] = field(default_factory=list)
    volumes: list[Volume] = field(default_factory=list)
    persistent_mount_paths: list[Located] = field(default_factory=list)
    gpus_total: Located | None = None  # total GPU request (value: float), located at the request
    pods: int = 1  # total pods (replicas summed)
    is_training: bool = False  # set once by adapters.purpose.classify; every training rule asks it
    purpose: str = ""  # what the object does: "training", "server", "evaluation", "data", "utility" …
    evidence: str = ""  # what ``purpose`` rests on, for messages: "8 GPUs requested; runs torchrun train.py"
    purpose_reason: str = ""  # the words that show it trains, for SPK302: "runs torchrun train.py"
    training_stated: bool = False  # the entry point's own name or flags say it trains (not a GPU request alone)
    preemptible: bool = False
    retries: Located | None = None  # explicit retry count/restart setting, as written
    default_retries: int = 0  # retries the platform applies when ``retries`` is not written
    grace_period: Located | None = None
    ttl: Located | None = None
    deadline: Located | None = None
    supports_ttl: bool = False  # SPK702 applies (Kubernetes Job/JobSet/PyTorchJob …)
    supports_deadline: bool = False  # SPK704 applies
    labels: dict[str, Located] = field(default_factory=dict)
    annotations: dict[str, Located] = field(default_factory=dict)
    priority_class: Located | None = None
    disabled_rules: list[Suppression] = field(default_factory=list)  # annotation suppressions
    restart_policy: Located | None = None  # the pods' restartPolicy, as written
    paths_cache: Any = field(default=None, repr=False, compare=False)  # facts.paths keeps its per-workload view here; no rule reads it

    def main_containers(self) -> list[Container]:
        return [c for c in self.containers if c.role in ("main", "sidecar")]

    def accelerators_requested(self) -> str | None:
        """The request as messages say it: ``8 GPUs``, ``4 TPU chips`` (``None``: no accelerator requested)."""
        total = self.gpus_total
        if total is None or not isinstance(total.value, (int, float)) or total.value <= 0:
            return None
        kind = next((c.accelerator for c in self.containers if c.gpus is not None), "GPU")
        return f"{total.value:g} {kind}{'' if total.value == 1 else 's'}"

    def on_runai(self) -> bool:
        """A Run:ai form (CRD, REST body, ``runai`` command) or an object labelled for Run:ai's
        scheduler: only these get Run:ai advice in messages."""
        if self.platform.runai:
            return True
        return any(key.startswith(("runai/", "run.ai/")) for key in self.labels)


# --------------------------------------------------------------------------- results


SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Problem:
    """What a check yields; the engine adds the rule's name, severity and the path.

    ``key`` is the normalised offending content used for the fingerprint (never the line);
    secret checks pass a hash of the secret.  ``legacy_key``: the key an earlier release used,
    when it held more than the offending value (baselines written then still match).
    ``severity`` overrides the catalog default (e.g. SPK401 is an error only for preemptible
    workloads).  ``path`` is set only when the problem belongs to another file than the
    document being checked.
    """

    rule: str
    line: int
    column: int
    message: str
    end_line: int | None = None
    end_column: int | None = None
    severity: str | None = None
    key: str = ""
    path: str | None = None
    legacy_key: str = ""

    @classmethod
    def at(cls, rule: str, where: Located | Node, message: str, **kwargs: Any) -> Problem:
        """A problem at a located value or node."""
        return cls(rule, where.line, where.column, message, end_line=where.end_line,
                   end_column=where.end_column, **kwargs)

    def identity(self) -> tuple[str, int, int, str]:
        """What makes two problems one finding: the rule, the place and the message; for one value on one span
        of text (a secret a team's token shape and spikelint's detector both find) the value, not the message."""
        spans = self.end_column is not None and (self.end_line, self.end_column) != (self.line, self.column)
        return (self.rule, self.line, self.column, f"{self.path}:{self.key if self.key and spans else self.message}")


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    fingerprint: str
    end_line: int | None = None
    end_column: int | None = None
    commit: str | None = None  # ``history``: the commit that added it, and that commit's date
    date: str | None = None
    aliases: tuple[str, ...] = ()  # other fingerprints a baseline may hold for it (pipeline/fingerprint.py)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.rule)


@dataclass(frozen=True)
class Rule:
    """One catalog entry (``rules/*.yaml``)."""

    id: str
    name: str
    severity: str
    summary: str
    rationale: str
    remediation: str
    fires_when: str = ""
    does_not_fire_when: str = ""
    examples: Mapping[str, Any] = field(default_factory=dict)
    concern: str = ""
    implemented: bool = True
    fix: str = ""  # "safe" (applied by `spikelint fix`), "unsafe" (only with --unsafe) or "" (none)
    fix_summary: str = ""  # what the fix does


@dataclass
class Report:
    findings: list[Finding]
    files_checked: int
    suppressed: int = 0
    baselined: int = 0
    rules: Sequence[Rule] = ()  # the catalog entries of every selected rule (SARIF lists them)
    sources: Mapping[str, Sequence[str]] = field(default_factory=dict)  # path -> lines, for snippets
    tool_version: str = ""
