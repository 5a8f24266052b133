"""What a workload runs — training, or something that trains nothing — decided once, here.

The training rules (SPK3, SPK401–SPK405, SPK503–SPK504, SPK603–SPK604, SPK702–SPK705) exist
because a lost checkpoint or an unreadable log wastes GPU time; a busybox ``sleep``, an nginx
server, a certificate hook or an NCCL benchmark has neither.  A workload is a training workload
when (rules.md, *training workload*):

- it is a training-operator kind (Kubeflow ``PyTorchJob``/``TFJob``/``MPIJob``…, ``TrainJob``,
  Run:ai training and distributed workloads), unless the commands it writes run nothing that
  trains (``mpirun … all_reduce_perf``, ``sleep``);
- or a container command runs a training entry point: ``python`` on a script or module (not
  ``-c``), ``torchrun``, ``accelerate launch``, ``deepspeed``, ``composer``, ``tune run``,
  ``lightning run``, ``llamafactory-cli train``, ``axolotl train``, ``mpirun``/``srun`` of one
  of these — on a script whose name does not say it evaluates, serves or moves data — also
  inside ``sh -c``;
- or it requests GPUs and writes no command (the image's entrypoint runs), unless the image's own
  name says what else it runs (``…/llm-inference-prep:1.4``, ``bert-benchmark``).

GPU cost decides: an entry point that does not say it trains (``python -u prep.py``, ``main.py``,
``run.py``) is training only when the workload requests GPUs — a CPU-only helper Job costs no GPU
time that a lost checkpoint would waste.  What says the work is not training wins over a GPU
request (the job, file or folder name, a smoke-sized or graph-only run, a DaemonSet, a Kubeflow
Trainer runtime, which is a blueprint that TrainJobs fill in).

The adapters call :func:`classify` once per workload, which sets ``workload.is_training`` and the
``workload.evidence`` every training finding names; where the entry script is in the scanned tree
the engine hands its code to :func:`reconsider` (a scorer or converter trains nothing).  Reading
one command line lives in :mod:`spikelint.adapters.entry_points`.
"""

from __future__ import annotations

import functools
import posixpath
import re
from typing import Sequence

from spikelint.adapters.entry_points import DATA
from spikelint.adapters.entry_points import EVALUATION
from spikelint.adapters.entry_points import IDLE
from spikelint.adapters.entry_points import INTERACTIVE
from spikelint.adapters.entry_points import Purpose
from spikelint.adapters.entry_points import SCRIPT
from spikelint.adapters.entry_points import SERVER
from spikelint.adapters.entry_points import SERVER_FLAGS
from spikelint.adapters.entry_points import TRAINING
from spikelint.adapters.entry_points import TRAIN_FLAGS
from spikelint.adapters.entry_points import UTILITY
from spikelint.adapters.entry_points import command_purpose
from spikelint.adapters.entry_points import name_says
from spikelint.adapters.entry_points import names_training
from spikelint.adapters.entry_points import target_purpose
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Located
from spikelint.model import Workload
from spikelint.facts.expansion import Lookup
from spikelint.facts.images import ImageSyntaxError
from spikelint.facts.images import parse_image

# the rules that speak only of training workloads, and name the evidence they rest on
TRAINING_RULES = frozenset(("SPK301", "SPK302", "SPK303", "SPK401", "SPK402", "SPK403", "SPK404", "SPK405", "SPK503",
                            "SPK504", "SPK603", "SPK604", "SPK702", "SPK703", "SPK704", "SPK705"))

# --------------------------------------------------------------------------- the workload

TRAINING_OPERATOR_KINDS = frozenset((
    "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob", "TrainJob", "TrainingRuntime",
    "ClusterTrainingRuntime", "TrainingWorkload", "DistributedWorkload", "RunaiJob"))
# Kubeflow Trainer's runtimes run nothing by themselves: each TrainJob that names one overrides its
# command, adds volumes and decides where checkpoints go, so the training rules speak on the TrainJob.
RUNTIME_TEMPLATE_KINDS = frozenset(("TrainingRuntime", "ClusterTrainingRuntime"))
RUNAI_TRAINING_CLASSES = frozenset(("training", "distributed"))
RUNAI_OTHER_CLASSES = {"workspace": INTERACTIVE, "interactive": INTERACTIVE, "inference": SERVER}
SERVING_KIND = lazy_regex(r"Inference|Serving|Service$|Server|Notebook|Workspace|Interactive|Gateway|Route$|"
                          r"Ingress|RayService")
# long-running controllers: a plain ``python main.py`` there is a service; training must be stated
SERVICE_KINDS = frozenset(("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController",
                           "LeaderWorkerSet", "DisaggregatedSet", "RayCluster"))
# kinds that run to completion: a GPU request with the image's own entrypoint is a training run
BATCH_KINDS = frozenset(("Pod", "Job", "CronJob", "JobSet", "RunaiJob", "RayJob", "PodGroup", "sbatch"))
SERVER_IMAGE = lazy_regex(
    r"(?:^|[/_.-])(?:vllm|tritonserver|text-generation-inference|tgi|sglang|nginx|httpd|ollama|jupyter|"
    r"notebook|dcgm|device-plugin|exporter|redis|postgres|mysql|torchserve|tensorrt-llm|trtllm|lmdeploy|"
    r"kserve|seldon|bentoml|mlserver|ovms|llama-server)(?:$|[/:@_.-])", re.IGNORECASE)
UTILITY_IMAGE = lazy_regex(
    r"(?:^|/)(?:busybox|alpine|agnhost|pause|curl|curlimages/curl|kubectl|bitnami/kubectl|ubuntu|debian|"
    r"nccl-tests|kube-webhook-certgen|certgen)(?:$|[:@])", re.IGNORECASE)
_RANK = {SERVER: 0, EVALUATION: 1, DATA: 2, INTERACTIVE: 3, UTILITY: 4, SCRIPT: 5}


def container_purposes(argv: Sequence[Located]) -> list[Purpose]:
    """What each command of one container does (a ``sh -c`` script is read command by command)."""
    from spikelint.facts.invocations import program_name
    from spikelint.facts.invocations import script_argument
    from spikelint.facts.invocations import script_invocations
    from spikelint.facts.expansion import script_lookup
    from spikelint.facts.embedded_script import parse_script

    words = list(argv)
    script = script_argument(words)
    if script is None:
        purpose = command_purpose([str(word.value) for word in words])
        return [purpose] if purpose is not None else []
    _, holder = script
    parsed = parse_script(str(holder.value), holder, None)
    if parsed is None:
        return []
    found = []
    for invocation in script_invocations(parsed, None, script_lookup(parsed)):
        texts = [str(word.value) for word in invocation.words]
        if not texts or program_name(invocation.words) in ("", "cd"):
            continue
        texts = [_program_variable(word, invocation.lookup) if "$" in text[:2] else text
                 for word, text in zip(invocation.words, texts)]
        purpose = command_purpose(texts)
        if purpose is not None:
            found.append(purpose)
    return found


def _program_variable(word: Located, lookup: Lookup | None) -> str:
    """``$binary_path`` -> ``/opt/llm.c/train_gpt2cu`` when the script assigns it (else as written)."""
    from spikelint.facts.expansion import expand
    from spikelint.facts.runconfig import UNRESOLVED

    if lookup is None:
        return str(word.value)
    expanded = expand(str(word.value), word, lookup).text
    return str(word.value) if UNRESOLVED in expanded or not expanded.strip() else expanded


def text_purposes(text: str) -> list[Purpose]:
    """What a command string does (RayJob ``entrypoint``, Argo ``script``)."""
    holder = Located(text, 1, 1)
    return container_purposes([Located("sh", 1, 1), Located("-c", 1, 1), holder])


def _flags_only(words: Sequence[Located]) -> bool:
    return bool(words) and str(words[0].value).startswith("-")


def _unwritten(container: Container) -> Purpose | None:
    """A container that writes no program (the image's entrypoint runs, perhaps with flags):
    ``None`` when nothing says what the image does."""
    flags = [str(word.value) for word in container.args]
    if any(TRAIN_FLAGS.match(flag) for flag in flags):
        return Purpose(TRAINING, "passes trainer flags to its image's entrypoint", True)
    from spikelint.facts.runconfig import CKPT_INTERVAL
    from spikelint.facts.runconfig import CKPT_LOCATION
    from spikelint.facts.runconfig import RESUME
    from spikelint.facts.runconfig import env_roles

    for variable in container.env:
        if env_roles(str(variable.name.value)) & {CKPT_LOCATION, CKPT_INTERVAL, RESUME}:
            return Purpose(TRAINING, f"passes {variable.name.value} to its image's entrypoint", True)
    image = str(container.image.value) if container.image is not None else ""
    if any(SERVER_FLAGS.match(flag) for flag in flags) or SERVER_IMAGE.search(image):
        return Purpose(SERVER, f"runs {image or 'a server'}")
    if UTILITY_IMAGE.search(image):
        return Purpose(UTILITY, f"runs {image}")
    name = image_name(image)
    said = name_says(name) if name else None
    if said is not None:  # the image is the program: ``…/inference-checkpoint:v0.2`` names what it runs
        return Purpose(said, f"runs the image {name}, whose name says it does not train")
    return None


def image_name(image: str) -> str:
    """The repository's own name in an image reference: ``llm-eval`` of ``reg.io/team/llm-eval:1.2@sha256:…``
    (empty for what is no reference: a variable, a template)."""
    try:
        return parse_image(image).repository.rsplit("/", 1)[-1]
    except ImageSyntaxError:
        return ""


def _best(purposes: list[Purpose]) -> Purpose:
    return min(purposes, key=lambda purpose: _RANK.get(purpose.what, 9))


def classify(workload: Workload) -> Purpose:
    """The one decision every training rule relies on: what the commands run, then what says otherwise.

    What says the work is not training wins over a GPU request (rules.md, *evidence before a
    training rule speaks*): a smoke-sized or graph-only run, a quantizer, or — unless the entry
    point itself says it trains — a job name, file name or folder that says it evaluates,
    converts or benchmarks.
    """
    purpose = _by_commands(workload)
    if not purpose.training:
        return purpose
    said = _run_says_not_training(workload)
    if said is None and not purpose.stated:
        said = _context_says_not_training(workload)
    return said if said is not None else purpose


def _by_commands(workload: Workload) -> Purpose:
    """What the written commands (or, unwritten, the kind and the GPU request) say the workload does."""
    kind = workload.kind
    klass = str(workload.platform.workload_class)
    if workload.source.startswith("runai") and klass in RUNAI_OTHER_CLASSES:
        return Purpose(RUNAI_OTHER_CLASSES[klass], f"a Run:ai {klass} workload")
    if workload.source == "kubernetes" and SERVING_KIND.search(kind) and kind not in TRAINING_OPERATOR_KINDS:
        return Purpose(SERVER, f"a {kind}")
    if kind == "DaemonSet":  # one pod on every node, restarted forever: a node agent or a burn-in
        return Purpose(UTILITY, "a DaemonSet (one pod on every node)")
    if kind in RUNTIME_TEMPLATE_KINDS:  # Kubeflow Trainer: a blueprint that TrainJobs name and fill in
        return Purpose(UTILITY, f"a {kind} (a blueprint: the TrainJobs that name it bring the run's command, "
                                "volumes and checkpoints)")
    operator = kind in TRAINING_OPERATOR_KINDS or (workload.source.startswith("runai")
                                                   and klass in RUNAI_TRAINING_CLASSES)
    written: list[Purpose] = []
    entry = workload.platform.entrypoint
    if isinstance(entry, str) and entry.strip():
        written.extend(text_purposes(entry))
    mains = [container for container in workload.containers if container.role == "main"]
    unread_gpus = False  # a container whose image entrypoint runs on GPUs
    unread = False
    for container in mains:
        if not container.command and (not container.args or _flags_only(container.args)):
            said = _unwritten(container)
            if said is not None:
                written.append(said)
                continue
            unread = True
            gpus = container.gpus is not None and isinstance(container.gpus.value, (int, float)) \
                and container.gpus.value > 0
            unread_gpus = unread_gpus or gpus or (len(mains) == 1 and _requests_gpus(workload))
            continue
        written.extend(container_purposes([*container.command, *container.args]))
    if kind in SERVICE_KINDS:  # ``python main.py`` in a Deployment serves; ``torchrun``/``train.py`` still trains
        written = [purpose if not purpose.training or purpose.named else Purpose(SERVER, f"serves with {purpose.reason}")
                   for purpose in written]
    trains = _main_launch(written)
    if trains is not None and not operator and not trains.named and not _requests_gpus(workload):
        # ``python -u prep.py`` on CPU: an entry point whose name does not say it trains costs no GPU time
        written = [purpose if purpose is not trains else Purpose(UTILITY, f"{purpose.reason} without GPUs")
                   for purpose in written]
        trains = _main_launch(written)
    if trains is not None:
        return trains if trains.reason.startswith(("runs ", "passes ")) else trains._replace(
            reason=f"runs {trains.reason}")
    readable = [purpose for purpose in written if purpose.what != SCRIPT]
    scripts = len(readable) < len(written)
    if operator:
        if readable and not scripts:
            return _best(readable)  # MPIJob launching a benchmark, a PyTorchJob that sleeps
        return Purpose(TRAINING, f"is a {_kind_words(workload)}")
    batch = kind in BATCH_KINDS or workload.source.startswith("runai")
    if batch and unread_gpus:
        return Purpose(TRAINING, "runs its image's entrypoint")  # the evidence names the request first
    if batch and scripts and _requests_gpus(workload):
        return Purpose(TRAINING, "runs a launch script")
    if written:
        return _best(written)
    return Purpose(IDLE, "writes no command" if unread and _requests_gpus(workload)
                   else "writes no command and requests no GPU")


def _main_launch(written: list[Purpose]) -> Purpose | None:
    """The launch the job exists for: a script that says it trains, then a launcher, then any training
    command — not a helper ``python prep.py`` written before it."""
    training = [purpose for purpose in written if purpose.training]
    return next((purpose for purpose in training if purpose.stated), None) or next(
        (purpose for purpose in training if purpose.named), None) or (training[0] if training else None)


# a run that only looks like training: a smoke-sized sample, graph extraction, a quantizer
_SMOKE_SAMPLES = lazy_regex(r"--max[-_]train[-_]samples[= ]+(\d+)\b")
_NOT_TRAINING_RUNS = (
    (lazy_regex(r"\bNEURON_EXTRACT_GRAPHS_ONLY[\"']?\s*[=:]\s*[\"']?(?:1|true)\b", re.IGNORECASE), DATA,
     "extracts compute graphs only (NEURON_EXTRACT_GRAPHS_ONLY)"),
    (lazy_regex(r"\bllm[-_]?compressor\b", re.IGNORECASE), DATA, "quantizes with llm-compressor"),
)
MAX_SMOKE_SAMPLES = 16
# folders whose name says what the files in them do (``eval/``, ``benchmarks/``)
CONTEXT_FOLDERS = {
    "eval": EVALUATION, "evals": EVALUATION, "evaluation": EVALUATION, "evaluations": EVALUATION,
    "benchmark": EVALUATION, "benchmarks": EVALUATION, "bench": EVALUATION, "inference": EVALUATION,
    "serving": SERVER, "serve": SERVER, "test": EVALUATION, "tests": EVALUATION, "e2e": EVALUATION,
    "preprocess": DATA, "preprocessing": DATA, "data_prep": DATA, "conversion": DATA, "convert": DATA,
    "export": DATA, "quantization": DATA, "quantize": DATA, "profiling": EVALUATION}


def _run_says_not_training(workload: Workload) -> Purpose | None:
    """Flags and variables that make even a training script's run something else."""
    texts = [str(word.value) for container in workload.main_containers() for word in
             (*container.command, *container.args)]
    texts += [f"{env.name.value}={env.value.value if env.value is not None else ''}"
              for container in workload.main_containers() for env in container.env]
    text = "\n".join(texts)
    smoke = _SMOKE_SAMPLES.search(text)
    if smoke is not None and int(smoke.group(1)) <= MAX_SMOKE_SAMPLES:
        return Purpose(EVALUATION, f"a smoke run (--max_train_samples {smoke.group(1)})")
    for pattern, what, reason in _NOT_TRAINING_RUNS:
        if pattern.search(text):
            return Purpose(what, reason)
    return None


def _context_says_not_training(workload: Workload) -> Purpose | None:
    """The job's name, its file's name or a folder of it says it evaluates, converts, benchmarks…"""
    name = str(workload.name.value) if workload.name is not None and workload.name.value else ""
    if name:
        said = name_says(name)
        if said is not None and not names_training(name):
            return Purpose(said, f"job name {name!r}")
    folders, base = posixpath.split(workload.path)
    stem = base.split(".", 1)[0]
    said = name_says(stem) if stem else None
    if said is not None:
        return Purpose(said, f"file {base}")
    for folder in reversed([part.lower() for part in folders.split("/") if part]):
        if folder in CONTEXT_FOLDERS:
            return Purpose(CONTEXT_FOLDERS[folder], f"under {folder}/")
    return None


# code that trains: a backward pass, an optimizer step, a trainer or a fit loop, a gradient transform
TRAINING_CODE = lazy_regex(r"\.backward\s*\(|optimi[sz]er|\.step\s*\(|Trainer\b|\.fit\s*\(|\btrain(?:_step|ing_step|_loop)?"
                           r"\s*\(|\.train\s*\(|deepspeed\.initialize|accelerator\.prepare|value_and_grad|\bgrad\s*\(")
# code that says it runs without gradients: scoring, generating, converting and publishing weights
NO_GRADIENT_CODE = lazy_regex(r"\bno_grad\s*\(|\binference_mode\s*\(|\.eval\s*\(\s*\)")
# any word of training at all (a comment, a split name, a library call): the script may train through it
MENTIONS_TRAINING = lazy_regex(r"train|finetun|\bfit\b|optimi[sz]|backward|\bgrad|\.step\s*\(|lightning|deepspeed|"
                               r"accelerat|\bsft\b|\bdpo\b|\bppo\b|\bgrpo\b", re.IGNORECASE)
# weights written or published: what a converter, a merger or a weight surgery produces
WRITES_WEIGHTS = lazy_regex(r"\bsave_file\s*\(|save_pretrained\s*\(|push_to_hub\s*\(|torch\.save\s*\(")


def reconsider(workload: Workload, scripts: list[tuple[str, str]]) -> None:
    """The code of the script a workload launches, where it is in the tree: one with no training step
    that runs without gradients (a scorer, a converter) trains nothing, whatever GPUs it requests.
    A script whose name or flags say it trains is left as it is."""
    if not workload.is_training or workload.training_stated or not scripts:
        return
    purpose = _code_purpose(tuple(scripts))
    if purpose is None:
        return
    workload.is_training = False
    workload.purpose = purpose.what
    workload.evidence = evidence(workload, purpose)
    workload.purpose_reason = purpose.reason


@functools.lru_cache(maxsize=32)
def _code_purpose(scripts: tuple[tuple[str, str], ...]) -> Purpose | None:
    """What the scripts' code says the run is, when it says it is no training (``None`` otherwise). Many
    workloads launch one script, whose code is searched once: the texts are the run's own strings (read once
    per run), so their hashes are kept and a hit compares them by identity; 32 entries bound what is held."""
    code = "\n".join(text for _, text in scripts)
    name = posixpath.basename(scripts[0][0])
    if not TRAINING_CODE.search(code) and NO_GRADIENT_CODE.search(code):
        return Purpose(EVALUATION, f"{name} has no training step and runs without gradients")
    if not MENTIONS_TRAINING.search(code) and WRITES_WEIGHTS.search(code):
        return Purpose(DATA, f"{name} writes weights and never mentions training")
    return None


def evidence(workload: Workload, purpose: Purpose) -> str:
    """What a training rule's finding rests on: ``8 GPUs requested; runs torchrun train.py``."""
    requested = workload.accelerators_requested()
    parts = [f"{requested} requested"] if requested else []
    parts.append(purpose.reason)
    return "; ".join(parts)


def _requests_gpus(workload: Workload) -> bool:
    total = workload.gpus_total
    return total is not None and isinstance(total.value, (int, float)) and total.value > 0


def _kind_words(workload: Workload) -> str:
    if workload.source.startswith("runai"):
        return f"Run:ai {workload.platform.workload_class or workload.kind} workload"
    return f"{workload.kind} (a training-operator kind)"


def apply(workload: Workload) -> Workload:
    """Set ``is_training`` and ``purpose`` on a workload an adapter built."""
    purpose = classify(workload)
    workload.is_training = purpose.training
    workload.purpose = purpose.what
    workload.evidence = evidence(workload, purpose)
    workload.training_stated = purpose.stated
    workload.purpose_reason = purpose.reason
    return workload


def invocation_trains(words: Sequence[str]) -> bool:
    """Whether one command line of a launch script runs a training program (``runai … -- cmd`` too)."""
    argv = [str(word) for word in words]
    if argv and posixpath.basename(argv[0]) == "runai":
        if "--" in argv:
            purpose = command_purpose(argv[argv.index("--") + 1:])
            return purpose is None or purpose.training or purpose.what == SCRIPT
        lowered = [word.lower() for word in argv]
        return not any(word in ("workspace", "inference", "--interactive") for word in lowered)
    if argv and argv[0].startswith("$"):  # ``$PYTHON train.py``, ``${LAUNCHER} …``: judged by its script
        script = next((word for word in argv[1:] if word.endswith(".py")), None)
        return script is not None and target_purpose(script, "runs").training
    purpose = command_purpose(argv)
    return purpose is not None and purpose.training
