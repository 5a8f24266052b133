"""What one command runs: a training entry point, or something that trains nothing.

``python train.py``, ``torchrun -m pkg.train``, ``srun --comment x python pretrain.py``,
``mpirun --mca btl tcp python main.py``, ``apptainer exec img python fit.py``: the launcher,
runner and container-runtime words are unwrapped with their options (and the values those
options take) the way the launcher itself reads them, and the script or module that finally runs
is judged by its name (``eval``, ``convert``, ``serve``… say it does not train; ``train``,
``sft``, ``Gemma3LLMTrain`` say it does).  :mod:`spikelint.adapters.purpose` weighs these per
workload.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from typing import NamedTuple
from typing import Sequence

from spikelint.facts.launchers import MPI_LAUNCHERS
from spikelint.facts.launchers import VALUE_OPTIONS
from spikelint.facts.launchers import first_program
from spikelint.util.lazyre import lazy_regex

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
    stated: bool = False  # the script, module or flags themselves say it trains (a launcher alone does not)

    @property
    def training(self) -> bool:
        return self.what == TRAINING


# --------------------------------------------------------------------------- names

_TOKEN = lazy_regex(r"[a-z0-9]+")
# ``Gemma3LLMTrain`` -> ``Gemma3 LLM Train``: a capital after a small letter or digit, or before a small letter
_CAMEL = lazy_regex(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
TRAIN_TOKENS = frozenset(("sft", "dpo", "ppo", "grpo", "rlhf", "orpo", "kto", "fit", "rl"))
TRAIN_PREFIXES = ("train", "finetun", "pretrain", "distill")
TRAIN_INFIXES = ("finetun", "pretrain")
EVALUATION_PREFIXES = ("eval", "infer", "predict", "benchmark", "bench", "test", "generat", "validat", "score",
                       "sample", "smoke")
DATA_PREFIXES = ("convert", "export", "download", "prepar", "preprocess", "postprocess", "shard", "tokeniz",
                 "upload", "publish", "quantiz", "merge", "import", "fetch", "sync", "ingest", "compil", "extract")
SERVER_PREFIXES = ("serve", "server", "serving", "service", "uvicorn", "gunicorn", "vllm", "sglang", "jupyter",
                   "notebook", "streamlit", "gradio", "flask", "fastapi", "tensorboard", "mlflow", "chat")
EXACT_NOT_TRAINING = {"app": SERVER, "api": SERVER, "web": SERVER, "ui": SERVER, "webui": SERVER, "check": UTILITY,
                      "healthcheck": UTILITY, "setup": UTILITY, "install": UTILITY, "manage": UTILITY,
                      "sanity": UTILITY, "screen": UTILITY, "hello": UTILITY, "demo": EVALUATION, "lint": UTILITY, "prep": DATA,
                      "profile": EVALUATION, "nsys": EVALUATION, "ncu": EVALUATION, "burnin": UTILITY}
TEST_FOLDERS = frozenset(("test", "tests", "testing", "unittests", "unit_tests", "functional_tests",
                          "integration_tests", "e2e", "benchmarks", "eval", "evaluation", "inference"))


@lru_cache(maxsize=4096)
def _tokens(name: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(_CAMEL.sub(" ", name).lower()))


@lru_cache(maxsize=4096)
def _leading_verb(name: str) -> str | None:
    """A name that starts by saying what it does: ``convert_sft_data``, ``test_train``, ``eval_finetuned``,
    ``generate_training_files`` convert, test or generate, whatever training word follows."""
    tokens = _tokens(name)
    if not tokens:
        return None
    if tokens[0].startswith(EVALUATION_PREFIXES):
        return EVALUATION
    if tokens[0].startswith(DATA_PREFIXES):
        return DATA
    return None


@lru_cache(maxsize=4096)
def names_training(name: str) -> bool:
    """``train.py``, ``run_sft``, ``finetune_llama``, ``lit_pretrain`` … (not ``convert_sft_data``)."""
    if _leading_verb(name) is not None:
        return False
    for token in _tokens(name):
        if token in TRAIN_TOKENS or token.startswith(TRAIN_PREFIXES) or any(part in token for part in TRAIN_INFIXES):
            return True
    return False


@lru_cache(maxsize=4096)
def name_says(name: str) -> str | None:
    """The non-training purpose a script or module name states, if any (training words win, unless the name
    starts with what it does instead: ``convert_sft_data``)."""
    said = _leading_verb(name)
    if said is not None:
        return said
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
    stated = names_training(base)
    return Purpose(TRAINING, f"{how} {path}", stated, stated)


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


def _launched(how: str, rest: list[str]) -> Purpose:
    """``torchrun … script.py``: training unless the script's name says otherwise."""
    for index, word in enumerate(rest):
        if word in ("-m", "--module") and index + 1 < len(rest):
            return target_purpose(rest[index + 1], how)._replace(named=True)
        if word.endswith(".py"):
            return target_purpose(word, how)._replace(named=True)
        if word in ("--no_python", "--no-python") and index + 1 < len(rest):
            following = first_program(rest[index + 1:])
            inner = command_purpose(rest[index + 1 + following:]) if following is not None else None
            if inner is not None:
                return inner
    start = first_program(rest)
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
            inner = _after_separator(rest[index + 1:])
            if inner is not None and not purpose.named:
                return inner  # ``python mason.py --gpus 0 -- python convert.py …``: a submitter starts the command
            if purpose.training and any(TRAINER_FLAGS.match(flag) for flag in rest[index + 1:]):
                return purpose._replace(named=True, stated=True)
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


COMMAND_SEPARATORS = frozenset(("&&", "||", ";", "|"))


def _after_separator(words: list[str]) -> Purpose | None:
    """What the command after a ``--`` does, for a script that submits or wraps it (``… -- hf download x && python
    prep.py``: each command judged, a training one first); ``None`` without a command after ``--``."""
    if "--" not in words:
        return None
    after = words[words.index("--") + 1:]
    if not after or after[0].startswith("-"):
        return None  # ``python run.py -- --lr 0.1``: arguments, not a command
    commands: list[list[str]] = [[]]
    for word in after:
        if word in COMMAND_SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(word)
    purposes = [purpose for purpose in (command_purpose(command) for command in commands if command)
                if purpose is not None]
    return next((purpose for purpose in purposes if purpose.training), purposes[0] if purposes else None)


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
        return Purpose(TRAINING, f"runs {posixpath.basename(program)}", True, True)
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
            start = first_program(after)  # ``tune run --nnodes 2 --nproc_per_node 8 full_finetune_distributed``
            target = after[start] if start is not None else ""
            said = name_says(target.rsplit("/", 1)[-1]) if program == "tune" else None
            return Purpose(said or TRAINING, f"{program} {sub}" + (f" {target}" if program == "tune" else ""), True,
                           True)
        return Purpose(purpose or UTILITY, f"{program} {sub}".strip())
    if program in MPI_LAUNCHERS and program != "horovodrun" and not (program == "ray" and "start" in rest[:2]):
        start = first_program(rest, program)
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
