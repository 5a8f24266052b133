"""What a workload runs — training, or something that trains nothing — decided once, here.

The training rules (SPK3, SPK401–SPK405, SPK503–SPK504, SPK603–SPK604, SPK702–SPK704) exist
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
- or it requests GPUs and writes no command (the image's entrypoint runs).

GPU cost decides: an entry point that does not say it trains (``python -u prep.py``, ``main.py``,
``run.py``) is training only when the workload requests GPUs — a CPU-only helper Job costs no GPU
time that a lost checkpoint would waste.

The adapters call :func:`classify` once per workload; checks read ``workload.is_training`` and
messages ``workload.purpose``.
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Located
from spikelint.model import Workload

TRAINING = "training"
SERVER = "server"  # serves requests: inference servers, web servers, notebooks
INTERACTIVE = "interactive"  # Run:ai workspaces and interactive workloads
EVALUATION = "evaluation"  # evaluates, infers, benchmarks or tests a model
DATA = "data"  # downloads, prepares, converts, exports or publishes data and weights
UTILITY = "utility"  # shell utilities: sleep, echo, curl, kubectl, nvidia-smi, NCCL tests
SCRIPT = "script"  # a shell script whose content is not in the command (cannot tell)
IDLE = "idle"  # no command written and no GPU requested


class Purpose(NamedTuple):
    """What a command or a workload does, and the words that show it (for messages)."""

    what: str
    reason: str
    named: bool = False  # the training is stated (a launcher, a script named for training, trainer flags)

    @property
    def training(self) -> bool:
        return self.what == TRAINING


# --------------------------------------------------------------------------- names

_TOKEN = lazy_regex(r"[a-z0-9]+")
TRAIN_TOKENS = frozenset(("sft", "dpo", "ppo", "grpo", "rlhf", "orpo", "kto", "fit", "rl"))
TRAIN_PREFIXES = ("train", "finetun", "pretrain", "distill")
TRAIN_INFIXES = ("finetun", "pretrain")
EVALUATION_PREFIXES = ("eval", "infer", "predict", "benchmark", "bench", "test", "generat", "validat", "score",
                       "sample", "smoke")
DATA_PREFIXES = ("convert", "export", "download", "prepar", "preprocess", "postprocess", "shard", "tokeniz",
                 "upload", "publish", "quantiz", "merge", "import", "fetch", "sync", "ingest")
SERVER_PREFIXES = ("serve", "server", "serving", "service", "uvicorn", "gunicorn", "vllm", "sglang", "jupyter",
                   "notebook", "streamlit", "gradio", "flask", "fastapi", "tensorboard", "mlflow", "chat")
EXACT_NOT_TRAINING = {"app": SERVER, "api": SERVER, "web": SERVER, "ui": SERVER, "webui": SERVER, "check": UTILITY,
                      "healthcheck": UTILITY, "setup": UTILITY, "install": UTILITY, "manage": UTILITY,
                      "sanity": UTILITY, "hello": UTILITY, "demo": EVALUATION, "lint": UTILITY}
TEST_FOLDERS = frozenset(("test", "tests", "testing", "unittests", "unit_tests", "functional_tests",
                          "integration_tests", "e2e", "benchmarks", "eval", "evaluation", "inference"))


def _tokens(name: str) -> list[str]:
    return _TOKEN.findall(name.lower())


def names_training(name: str) -> bool:
    """``train.py``, ``run_sft``, ``finetune_llama``, ``lit_pretrain`` …"""
    for token in _tokens(name):
        if token in TRAIN_TOKENS or token.startswith(TRAIN_PREFIXES) or any(part in token for part in TRAIN_INFIXES):
            return True
    return False


def name_says(name: str) -> str | None:
    """The non-training purpose a script or module name states, if any (training words win)."""
    if names_training(name):
        return None
    for token in _tokens(name):
        if token in EXACT_NOT_TRAINING:
            return EXACT_NOT_TRAINING[token]
        if token.startswith(SERVER_PREFIXES):
            return SERVER
        if token.startswith(EVALUATION_PREFIXES):
            return EVALUATION
        if token.startswith(DATA_PREFIXES):
            return DATA
    return None


def target_purpose(target: str, how: str) -> Purpose:
    """A script path or module a training entry point runs: training unless its name says otherwise."""
    path = target.strip().strip("'\"")
    folders, base = posixpath.split(path)
    stem = base.rsplit(".", 1)[0] if base.endswith((".py", ".sh", ".bash")) else base
    said = name_says(stem)
    if said is not None:
        return Purpose(said, f"{how} {base}")
    parts = [part.lower() for part in re.split(r"[/.]", folders if "/" in path else path) if part]
    if "/" not in path:
        parts = parts[:-1]  # a module: its packages
    folder = next((part for part in parts if part in TEST_FOLDERS), None)
    if folder is not None:
        return Purpose(EVALUATION, f"{how} {path} (under {folder}/)")
    return Purpose(TRAINING, f"{how} {path}", names_training(base))


# --------------------------------------------------------------------------- one command

PYTHON = lazy_regex(r"python[\d.]*|pypy[\d.]*")
SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ash", "ksh"))
PREFIXES = frozenset(("exec", "env", "time", "nohup", "command", "builtin", "sudo", "doas"))
# prefixes that take one value after their options: ``timeout 2h``, ``taskset 0xff``, ``nice -n 5``
VALUE_PREFIXES = frozenset(("timeout", "taskset", "chrt", "nice", "ionice", "stdbuf", "numactl", "chpst",
                            "setsid", "unbuffer", "xvfb-run", "catchsegv", "ddtrace-run",
                            "opentelemetry-instrument", "tini", "dumb-init", "gosu", "su-exec"))
RUNNERS = {("coverage", "run"), ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("conda", "run"),
           ("mamba", "run"), ("micromamba", "run"), ("pixi", "run"), ("hatch", "run"), ("pdm", "run")}
MPI_LAUNCHERS = frozenset(("mpirun", "mpiexec", "orterun", "srun", "jsrun", "aprun", "ibrun", "prun",
                           "charmrun", "flux", "oshrun", "horovodrun", "ray"))
LAUNCHERS = frozenset(("torchrun", "deepspeed", "composer", "horovodrun", "colossalai", "megatron", "nemo",
                       "hyperpodrun"))
# container runtimes of HPC clusters: ``apptainer exec [options] IMAGE cmd …`` runs ``cmd``
CONTAINER_RUNTIMES = {"apptainer": ("exec", "run"), "singularity": ("exec", "run"), "enroot": ("start", "exec")}
RUNTIME_VALUE_OPTIONS = frozenset(("-B", "--bind", "--mount", "-e", "--env", "--env-file", "-W", "--workdir",
                                   "--pwd", "-H", "--home", "--overlay", "-o", "--app", "--security", "-m",
                                   "--network", "--dns", "--hostname", "-c", "--conf", "-r", "--rc"))
LAUNCHER_MODULES = frozenset((
    "torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch", "deepspeed.launcher.runner",
    "deepspeed", "paddle.distributed.launch", "torch.distributed.elastic.agent", "composer.cli.launcher",
    "oneccl_bindings_for_pytorch", "intel_extension_for_pytorch.cpu.launch"))
TOOL_MODULES = {
    "pip": UTILITY, "venv": UTILITY, "ensurepip": UTILITY, "json.tool": UTILITY, "site": UTILITY,
    "compileall": UTILITY, "torch.utils.collect_env": UTILITY, "pytest": EVALUATION, "unittest": EVALUATION,
    "http.server": SERVER, "ipykernel": SERVER, "ipykernel_launcher": SERVER, "jupyter": SERVER,
    "jupyterlab": SERVER, "notebook": SERVER, "tensorboard": SERVER, "tensorboard.main": SERVER, "uvicorn": SERVER,
    "gunicorn": SERVER, "streamlit": SERVER, "gradio": SERVER, "flask": SERVER, "mlflow": SERVER,
    "nltk.downloader": DATA, "spacy": DATA, "huggingface_hub": DATA, "huggingface_hub.commands.huggingface_cli": DATA,
    "wandb": UTILITY, "torch.utils.bottleneck": EVALUATION, "cProfile": EVALUATION, "timeit": EVALUATION,
    "lm_eval": EVALUATION, "nccl_tests": EVALUATION, "pdb": UTILITY}
SERVERS = frozenset((
    "nginx", "httpd", "apache2", "caddy", "envoy", "haproxy", "vllm", "tritonserver", "text-generation-launcher",
    "text-generation-server", "uvicorn", "gunicorn", "hypercorn", "jupyter", "jupyter-lab", "jupyter-notebook",
    "jupyterhub", "start-notebook.sh", "start.sh", "code-server", "tensorboard", "mlflow", "streamlit", "gradio",
    "ollama", "redis-server", "postgres", "mysqld", "mongod", "sshd", "dropbear", "trtllm-serve", "sglang",
    "lmdeploy", "torchserve", "bentoml", "mlserver", "seldon-core-microservice", "openvino_model_server",
    "ovms", "llama-server", "llama.cpp", "ray"))
# program -> subcommand -> purpose, for command-line tools that train with one subcommand only
SUBCOMMANDS: dict[str, dict[str, str]] = {
    "accelerate": {"launch": TRAINING},
    "tune": {"run": TRAINING, "download": DATA, "ls": UTILITY, "cp": UTILITY, "validate": UTILITY, "cat": UTILITY},
    "lightning": {"run": TRAINING},
    "llamafactory-cli": {"train": TRAINING, "chat": SERVER, "api": SERVER, "webui": SERVER, "webchat": SERVER,
                         "eval": EVALUATION, "export": DATA, "version": UTILITY, "env": UTILITY},
    "axolotl": {"train": TRAINING, "preprocess": DATA, "inference": EVALUATION, "evaluate": EVALUATION,
                "merge-lora": DATA, "merge-sharded-fsdp-weights": DATA, "quantize": DATA, "fetch": DATA,
                "lm-eval": EVALUATION, "vllm-serve": SERVER},
    "litgpt": {"pretrain": TRAINING, "finetune": TRAINING, "finetune_lora": TRAINING, "finetune_full": TRAINING,
               "finetune_adapter": TRAINING, "serve": SERVER, "chat": SERVER, "generate": EVALUATION,
               "evaluate": EVALUATION, "download": DATA, "convert_to_litgpt": DATA, "convert_from_litgpt": DATA},
}
SERVER_FLAGS = lazy_regex(r"^--?(?:port|host|listen|bind|served-model-name|api-key|model-id)(?:=|$)")
TRAIN_FLAGS = lazy_regex(
    r"^--(?:output[-_]dir|save[-_]steps|save[-_]strategy|num[-_]train[-_]epochs|max[-_]steps|epochs|"
    r"learning[-_]rate|lr|resume[-_]from[-_]checkpoint|checkpoint[-_]dir|ckpt[-_]dir|train[-_]\w+|"
    r"per[-_]device[-_]train[-_]batch[-_]size|gradient[-_]accumulation[-_]steps|job[-_]type=train)(?:=|$)",
    re.IGNORECASE)
# flags only a trainer takes (an output folder alone does not say training: data tools write one too)
TRAINER_FLAGS = lazy_regex(
    r"^--(?:save[-_]steps|save[-_]strategy|num[-_]train[-_]epochs|max[-_]steps|epochs|learning[-_]rate|lr|"
    r"resume[-_]from[-_]checkpoint|train[-_]\w+|per[-_]device[-_]train[-_]batch[-_]size|"
    r"gradient[-_]accumulation[-_]steps|job[-_]type=train)(?:=|$)", re.IGNORECASE)
_ASSIGNMENT = lazy_regex(r"^[A-Za-z_][A-Za-z0-9_]*=")
# options of wrappers and launchers that take a value (the value is not the program)
VALUE_OPTIONS = frozenset((
    "-n", "-np", "-N", "-c", "-H", "-x", "-p", "-u", "-w", "-t", "-k", "-s", "-e", "-o", "-i", "--hostfile",
    "--host", "-host", "-hostfile", "--map-by", "-map-by", "--bind-to", "-bind-to", "--mca", "-mca", "-x",
    "--nodes", "--ntasks", "--ntasks-per-node", "--gpus", "--gpus-per-node", "--cpus-per-task", "--partition",
    "--account", "--time", "--job-name", "--container-image", "--container-mounts", "--mpi", "--export",
    "--name", "--prefix", "--data-file", "--source", "--rcfile", "--omit", "--include", "--env", "--cwd",
    "--signal", "--kill-after", "-l", "--preserve-env", "--num_gpus", "--num_nodes", "--master_port",
    "--master_addr", "--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank", "--node-rank",
    "--rdzv_backend", "--rdzv-backend", "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id",
    "--max_restarts", "--max-restarts", "--config_file", "--config-file", "--num_processes", "--num_machines",
    "--machine_rank", "--main_process_ip", "--main_process_port", "--mixed_precision", "--deepspeed_config_file",
    "--launcher", "--include", "--exclude", "--num_cpu_threads_per_process", "-m", "--module", "--runtime-env",
    "--working-dir", "--address", "--submission-id", "--entrypoint-num-gpus", "--entrypoint-num-cpus"))


def _strip_prefixes(words: list[str]) -> list[str]:
    """Drop ``A=1``, ``exec``, ``env -u X``, ``timeout 2h``, ``coverage run --source x`` before the program."""
    index = 0
    while index < len(words):
        word = words[index]
        base = posixpath.basename(word)
        if _ASSIGNMENT.match(word):
            index += 1
        elif base in PREFIXES:
            index += 1
            while index < len(words) and words[index].startswith("-"):
                index += 2 if words[index] in ("-u", "-C", "-S") else 1
        elif base in VALUE_PREFIXES:
            index += 1
            while index < len(words) and words[index].startswith("-"):
                index += 2 if words[index] in VALUE_OPTIONS else 1
            if base in ("timeout", "taskset", "chrt", "gosu", "su-exec") and index < len(words):
                index += 1  # the duration, CPU mask, priority or user
        elif index + 1 < len(words) and (base, words[index + 1]) in RUNNERS:
            index += 2
            while index < len(words) and words[index].startswith("-"):
                index += 2 if words[index] in VALUE_OPTIONS and "=" not in words[index] else 1
        else:
            break
    return words[index:]


def _first_program(words: list[str]) -> int | None:
    """Index of the program an MPI/Slurm launcher runs: the first word that is not one of its options."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return index + 1 if index + 1 < len(words) else None
        if word.startswith("-"):
            index += 2 if word in VALUE_OPTIONS else 1
            continue
        if word in ("run", "submit", "job", "exec") and index == 0:
            index += 1  # ``flux run``, ``ray job submit``
            continue
        return index
    return None


def _launched(how: str, rest: list[str]) -> Purpose:
    """``torchrun … script.py``: training unless the script's name says otherwise."""
    for index, word in enumerate(rest):
        if word in ("-m", "--module") and index + 1 < len(rest):
            return target_purpose(rest[index + 1], how)._replace(named=True)
        if word.endswith(".py"):
            return target_purpose(word, how)._replace(named=True)
        if word in ("--no_python", "--no-python") and index + 1 < len(rest):
            following = _first_program(rest[index + 1:])
            inner = command_purpose(rest[index + 1 + following:]) if following is not None else None
            if inner is not None:
                return inner
    start = _first_program(rest)
    if start is not None:  # ``python -m paddle.distributed.launch run_check``: a module named without -m
        said = name_says(rest[start].rsplit("/", 1)[-1])
        if said is not None:
            return Purpose(said, f"{how} {rest[start]}")
    return Purpose(TRAINING, how, True)


def _python(program: str, rest: list[str]) -> Purpose | None:
    """``python [options] script|-m module|-c code``: options are read letter by letter, as CPython does."""
    index = 0
    while index < len(rest):
        word = rest[index]
        if word == "-":
            return None  # the program comes from standard input
        if word.startswith("--"):
            index += 1
            continue
        if not word.startswith("-") or len(word) == 1:
            purpose = target_purpose(word, program)
            if purpose.training and any(TRAINER_FLAGS.match(flag) for flag in rest[index + 1:]):
                return purpose._replace(named=True)
            return purpose
        letters = word[1:]
        for position, letter in enumerate(letters):
            attached = letters[position + 1:]
            if letter == "c":
                return Purpose(UTILITY, f"{program} -c")
            if letter == "m":
                if attached:
                    return _module(program, attached, rest[index + 1:])
                module = rest[index + 1] if index + 1 < len(rest) else ""
                return _module(program, module, rest[index + 2:])
            if letter in ("W", "X"):
                index += 0 if attached else 1  # the option's value is the next word
                break
        index += 1
    return None


def _module(program: str, module: str, rest: list[str]) -> Purpose | None:
    if not module:
        return None
    how = f"{program} -m"
    if module in LAUNCHER_MODULES:
        return _launched(f"{how} {module}", rest)
    top = module.split(".")[0]
    tool = TOOL_MODULES.get(module) or TOOL_MODULES.get(top)
    if tool is not None:
        return Purpose(tool, f"{how} {module}")
    if top in ("vllm", "sglang", "text_generation_server") and not names_training(module):
        return Purpose(SERVER, f"{how} {module}")
    return target_purpose(module, how)


def _script(program: str, words: list[str]) -> Purpose:
    """A shell script run by path: its name may say what it does; its content is not here."""
    said = name_says(posixpath.basename(program).rsplit(".", 1)[0])
    if names_training(posixpath.basename(program)):
        return Purpose(TRAINING, f"runs {posixpath.basename(program)}", True)
    if said is not None:
        return Purpose(said, f"runs {posixpath.basename(program)}")
    return Purpose(SCRIPT, f"runs {posixpath.basename(program)}")


def _in_container(program: str, rest: list[str]) -> Purpose:
    """``apptainer exec --nv docker://img python train.py``: what runs inside the image."""
    if not rest or rest[0] not in CONTAINER_RUNTIMES[program]:
        return Purpose(UTILITY, f"{program} {rest[0] if rest else ''}".strip())
    index = 1
    while index < len(rest) and rest[index].startswith("-"):
        index += 2 if rest[index] in RUNTIME_VALUE_OPTIONS else 1
    inner = command_purpose(rest[index + 1:]) if index < len(rest) else None
    return inner if inner is not None else Purpose(UTILITY, f"{program} {rest[0]}")


def command_purpose(words: Sequence[str]) -> Purpose | None:
    """What one simple command does (``None`` for an empty command or a bare interpreter)."""
    argv = _strip_prefixes([str(word) for word in words])
    if not argv:
        return None
    program = posixpath.basename(argv[0])
    rest = argv[1:]
    if PYTHON.fullmatch(program):
        return _python(program, rest)
    if program.endswith(".py"):
        return target_purpose(argv[0], "runs")
    if program in SUBCOMMANDS:
        sub = next((word for word in rest if not word.startswith("-")), "")
        purpose = SUBCOMMANDS[program].get(sub)
        if purpose == TRAINING:
            after = rest[rest.index(sub) + 1:]
            if program in ("accelerate", "lightning"):
                return _launched(f"{program} {sub}", after)
            target = next((word for word in after if not word.startswith("-")), "")
            said = name_says(target.rsplit("/", 1)[-1]) if program == "tune" else None
            return Purpose(said or TRAINING, f"{program} {sub}" + (f" {target}" if program == "tune" else ""), True)
        return Purpose(purpose or UTILITY, f"{program} {sub}".strip())
    if program in MPI_LAUNCHERS and program != "horovodrun" and not (program == "ray" and "start" in rest[:2]):
        start = _first_program(rest)
        if start is None:
            return Purpose(UTILITY, program)
        inner = command_purpose(rest[start:])
        return inner if inner is not None else Purpose(UTILITY, program)
    if program in LAUNCHERS:
        return _launched(program, rest)
    if program in CONTAINER_RUNTIMES:
        return _in_container(program, rest)
    if program in SHELLS:
        for index, word in enumerate(rest):
            if word.startswith("-"):
                if not word.startswith("--") and "c" in word[1:]:
                    return None  # ``sh -c 'script'``: its commands are read one by one
                continue
            return _script(word, rest[index + 1:])
        return None
    if program.endswith((".sh", ".bash")):
        return _script(argv[0], rest)
    if program in SERVERS or program.endswith(("-server", "server", "-serve")):
        return Purpose(SERVER, program)
    if program in ("vllm", "sglang") or (program == "ray" and "start" in rest[:2]):
        return Purpose(SERVER, program)
    return Purpose(UTILITY, program)


# --------------------------------------------------------------------------- the workload

TRAINING_OPERATOR_KINDS = frozenset((
    "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob", "TrainJob", "TrainingRuntime",
    "ClusterTrainingRuntime", "TrainingWorkload", "DistributedWorkload", "RunaiJob"))
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
        purpose = command_purpose(texts)
        if purpose is not None:
            found.append(purpose)
    return found


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
    return None


def _best(purposes: list[Purpose]) -> Purpose:
    return min(purposes, key=lambda purpose: _RANK.get(purpose.what, 9))


def classify(workload: Workload) -> Purpose:
    """The one decision every training rule relies on."""
    kind = workload.kind
    klass = str(workload.extra.get("workload_class") or "")
    if workload.source.startswith("runai") and klass in RUNAI_OTHER_CLASSES:
        return Purpose(RUNAI_OTHER_CLASSES[klass], f"a Run:ai {klass} workload")
    if workload.source == "kubernetes" and SERVING_KIND.search(kind) and kind not in TRAINING_OPERATOR_KINDS:
        return Purpose(SERVER, f"a {kind}")
    operator = kind in TRAINING_OPERATOR_KINDS or (workload.source.startswith("runai")
                                                   and klass in RUNAI_TRAINING_CLASSES)
    written: list[Purpose] = []
    entry = workload.extra.get("entrypoint")
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
    trains = next((purpose for purpose in written if purpose.training), None)
    if trains is not None and not operator and not trains.named and not _requests_gpus(workload):
        # ``python -u prep.py`` on CPU: an entry point whose name does not say it trains costs no GPU time
        written = [purpose if purpose is not trains else Purpose(UTILITY, f"{purpose.reason} without GPUs")
                   for purpose in written]
        trains = next((purpose for purpose in written if purpose.training), None)
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
        return Purpose(TRAINING, "requests GPUs and runs its image's entrypoint")
    if batch and scripts and _requests_gpus(workload):
        return Purpose(TRAINING, "requests GPUs and runs a launch script")
    if written:
        return _best(written)
    return Purpose(IDLE, "writes no command" if unread and _requests_gpus(workload)
                   else "writes no command and requests no GPU")


def _requests_gpus(workload: Workload) -> bool:
    total = workload.gpus_total
    return total is not None and isinstance(total.value, (int, float)) and total.value > 0


def _kind_words(workload: Workload) -> str:
    if workload.source.startswith("runai"):
        return f"Run:ai {workload.extra.get('workload_class') or workload.kind} workload"
    return f"{workload.kind} (a training-operator kind)"


def apply(workload: Workload) -> Workload:
    """Set ``is_training`` and ``purpose`` on a workload an adapter built."""
    purpose = classify(workload)
    workload.is_training = purpose.training
    workload.purpose = purpose.what
    workload.extra["purpose_reason"] = purpose.reason
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
