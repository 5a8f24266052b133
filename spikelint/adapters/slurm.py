"""Slurm batch scripts -> workloads.

A shell file whose leading comment block holds ``#SBATCH`` directives is a job: the
directives say its resources (``--gres=gpu:8``, ``--gpus*``, ``--nodes``), its deadline
(``--time``), its retries (``--requeue``; ``scontrol requeue`` in a signal trap), its
preemption notice (``--signal=B:USR1@90``) and its log files (``--output``/``--error``); the
script body is what the batch step runs, read by the same command reader as a container's
``bash -c`` string.  Images come from ``srun --container-image`` (pyxis/enroot),
``enroot import docker://…`` and ``apptainer``/``singularity … docker://…`` (a ``dockerd://`` or
``podman://`` import of an image the script built before is a local build, not a reference).  A
heredoc that writes a job script (``cat > job.sbatch <<EOF``, ``sbatch <<EOF``) and ``sbatch --wrap``
are jobs too.  ``sbatch`` reads directives only up to the first command, and so does this adapter.
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple
from typing import Sequence

from spikelint.adapters.platforms import slurm_platform
from spikelint.adapters.common import UNBOUNDED_RETRIES
from spikelint.adapters.common import as_int
from spikelint.adapters.common import preemptible_priority
from spikelint.adapters.common import split_words
from spikelint.config import Config
from spikelint.documents.shell import Script
from spikelint.documents.shell import find_wrap
from spikelint.documents.shell import SimpleCommand
from spikelint.documents.shell import Word
from spikelint.documents.shell import expand
from spikelint.adapters.slurm_values import gres_gpus
from spikelint.adapters.slurm_values import signal_seconds
from spikelint.adapters.slurm_values import time_seconds
from spikelint.adapters.slurm_values import typed_count
from spikelint.adapters.slurm_values import untrapped_batch_signal
from spikelint.facts.launchers import launched_index
from spikelint.util.lazyre import lazy_regex
from spikelint.model import BASELINE_ANNOTATION
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import EnvVar
from spikelint.model import Located
from spikelint.model import SlurmJob
from spikelint.model import Workload

SOURCE = "slurm"
KIND = "sbatch"
DIRECTIVE = lazy_regex(r"^\s*#SBATCH(?=\s)")
SCONTROL_REQUEUE = lazy_regex(r"\bscontrol\s+requeue\b")
SHORT_OPTIONS = {"-N": "--nodes", "-n": "--ntasks", "-t": "--time", "-o": "--output", "-e": "--error",
                 "-J": "--job-name", "-G": "--gpus", "-D": "--chdir", "-p": "--partition", "-c": "--cpus-per-task",
                 "-A": "--account", "-q": "--qos", "-a": "--array", "-w": "--nodelist", "-C": "--constraint"}
NO_VALUE = frozenset(("--requeue", "--no-requeue", "--exclusive", "--overcommit", "--hold", "--wait", "--parsable",
                      "--test-only", "--use-min-nodes", "--spread-job", "--contiguous", "--container-writable",
                      "--container-remap-root", "--no-container-mount-home", "--no-container-remap-root",
                      "--container-readonly", "--no-kill", "-H", "-O", "-W", "-k", "-Q", "-v", "--verbose",
                      "--quiet", "--unbuffered", "-u", "-l", "--label"))
IMAGE_TOOLS = frozenset(("enroot", "apptainer", "singularity"))
# ``#SBATCH --comment=spikelint.io/baseline:run-42``: a Slurm job's place for what an annotation says elsewhere
BASELINE_COMMENT = lazy_regex(re.escape(BASELINE_ANNOTATION) + r"\s*[:=]\s*([^\s,;\"']+)")
DAEMON_PREFIXES = ("dockerd://", "podman://")  # an image in the local daemon, not pulled from a registry
BUILDERS = frozenset(("docker", "podman"))
# Slurm and site variables that name the node-local folder (expanded as such)
NODE_LOCAL_VARIABLES = {"SLURM_TMPDIR": "/tmp", "SLURM_JOB_TMPDIR": "/tmp", "LOCAL_SCRATCH": "/local/scratch"}
_NUMBER = lazy_regex(r"(\d+)")
VARIABLE_PREFIX = lazy_regex(r"^\$(?:\{[^}]*\}|\w+)")


class Option(NamedTuple):
    """One option of ``#SBATCH``, ``sbatch`` or ``srun``: its long name, where it is, its value."""

    name: str
    flag: Located
    value: Located | None


class Job(NamedTuple):
    """One batch job: its options (directives, or the ``sbatch`` command line) and its body."""

    options: list[Option]
    anchor: Located
    script: Script | None
    body: Located | None  # the text the batch step runs, where it starts
    line_range: tuple[int, int]
    ignored: tuple[Located, ...] = ()  # ``#SBATCH`` lines after the first command: sbatch never reads them
    submitter: Script | None = None  # ``sbatch --wrap "…$IMG…"``: the script whose variables the shell expands
    command_line: bool = False  # the options are the ``sbatch`` command's (``--wrap``), not ``#SBATCH`` lines


# --------------------------------------------------------------------------- options


def read_options(words: Sequence[Located]) -> list[Option]:
    """``--gres=gpu:8``, ``--gres gpu:8``, ``-N 2``, ``-N2``, ``--requeue`` -> options, in order."""
    found: list[Option] = []
    index = 0
    while index < len(words):
        word = words[index]
        text = str(word.value)
        index += 1
        if text.startswith("#"):
            break  # a comment after the directive
        if not text.startswith("-") or text == "-":
            continue
        if text.startswith("--"):
            name, equals, value = text.partition("=")
            if equals:
                offset = len(name) + 1
                found.append(Option(name, word, _part(word, value, offset)))
                continue
        else:
            name = text[:2]
            if len(text) > 2:
                found.append(Option(SHORT_OPTIONS.get(name, name), word, _part(word, text[2:].lstrip("="), 2)))
                continue
            name = SHORT_OPTIONS.get(name, name)
        if name in NO_VALUE or text in NO_VALUE or index >= len(words) or str(words[index].value).startswith("-"):
            found.append(Option(name, word, None))
            continue
        found.append(Option(name, word, words[index]))
        index += 1
    return found


def _part(word: Located, value: str, offset: int) -> Located:
    """``value``, the tail of ``word`` starting ``offset`` characters in."""
    if word.end_line not in (None, word.line):
        return Located(value, word.line, word.column, word.end_line, word.end_column)
    return Located(value, word.line, word.column + offset, word.line, word.column + offset + len(value))


def directive_words(line: str, number: int) -> list[Located]:
    """The words after ``#SBATCH`` on one line, each where it is written."""
    match = DIRECTIVE.match(line)
    if match is None:
        return []
    start = match.end()
    return [Located(span.text, number, start + span.start + 1, number, start + span.end + 1)
            for span in split_words(line[start:])]


def leading_directives(lines: Sequence[str], first: int, last: int,
                       column_zero: bool = False) -> tuple[list[Option], Located | None]:
    """The ``#SBATCH`` options of the comment block that opens lines ``first``..``last`` (1-based).

    ``column_zero``: only lines that start with ``#SBATCH`` count, as sbatch reads a script file (an
    indented one is a comment to it); a heredoc's body may be indented in the script that writes it.
    """
    options: list[Option] = []
    anchor: Located | None = None
    for number in range(first, min(last, len(lines)) + 1):
        line = lines[number - 1]
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        words = directive_words(line, number)
        if DIRECTIVE.match(line) and (not column_zero or line.startswith("#")):
            column = line.index("#") + 1
            anchor = anchor or Located("#SBATCH", number, column, number, column + 7)
            options.extend(read_options(words))
    return options, anchor


def late_directives(lines: Sequence[str], first: int, last: int,
                    skip: Sequence[tuple[int, int]] = ()) -> tuple[Located, ...]:
    """``#SBATCH`` lines of lines ``first``..``last`` that come after the first command (sbatch stops
    reading directives there); lines inside ``skip`` (heredoc bodies: other files' text) are not the
    script's own."""
    found: list[Located] = []
    started = False
    for number in range(first, min(last, len(lines)) + 1):
        line = lines[number - 1]
        stripped = line.strip()
        if not stripped or any(start <= number <= end for start, end in skip):
            continue
        if not started:
            started = not stripped.startswith("#")
            continue
        match = DIRECTIVE.match(line)
        if match is not None:
            column = line.index("#") + 1
            found.append(Located(stripped, number, column, number, len(line.rstrip()) + 1))
    return tuple(found)


def indented_directives(lines: Sequence[str]) -> tuple[Located, ...]:
    """Indented ``#SBATCH`` lines of a script's opening comment block: sbatch reads a directive only at the
    start of a line, so to it these are comments and the job runs without them."""
    found: list[Located] = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        if DIRECTIVE.match(line) and not line.startswith("#"):
            column = line.index("#") + 1
            found.append(Located(stripped, number, column, number, len(line.rstrip()) + 1))
    return tuple(found)


def last(options: Sequence[Option], *names: str) -> Option | None:
    """The option that counts (Slurm: the last one written wins)."""
    return next((option for option in reversed(options) if option.name in names), None)


# --------------------------------------------------------------------------- values


def count_of(option: Option | None) -> int | None:
    """``--nodes=2``, ``--nodes=2-4`` (the minimum), ``--ntasks-per-node=8``."""
    if option is None or option.value is None:
        return None
    match = _NUMBER.match(str(option.value.value).strip())
    return int(match.group(1)) if match else None


def gpu_request(options: Sequence[Option]) -> tuple[Located | None, Located | None, int]:
    """(GPUs per node, total GPUs, nodes), each located at the directive that says it."""
    nodes = count_of(last(options, "--nodes")) or 1
    per_node: Located | None = None
    gres = last(options, "--gres")
    if gres is not None and gres.value is not None:
        number = gres_gpus(str(gres.value.value))
        per_node = gres.value._replace(value=number) if number else None
    for name in ("--gpus-per-node",):
        option = last(options, name)
        if per_node is None and option is not None and option.value is not None:
            number = typed_count(str(option.value.value))
            per_node = option.value._replace(value=number) if number else None
    per_task = last(options, "--gpus-per-task")
    if per_node is None and per_task is not None and per_task.value is not None:
        number = typed_count(str(per_task.value.value))
        tasks = count_of(last(options, "--ntasks-per-node")) or 1
        per_node = per_task.value._replace(value=number * tasks) if number else None
    if per_node is not None:
        return per_node, per_node._replace(value=per_node.value * nodes), nodes
    total = last(options, "--gpus")
    if total is not None and total.value is not None:
        number = typed_count(str(total.value.value))
        if number:
            where = total.value._replace(value=number)
            return where._replace(value=as_int(number / nodes)), where, nodes
    return None, None, nodes


# --------------------------------------------------------------------------- images


def image_reference(text: str) -> str | None:
    """``docker://nvcr.io#nvidia/pytorch:24.05-py3`` -> ``nvcr.io/nvidia/pytorch:24.05-py3``; a local
    squashfs/SIF file or a path -> None (nothing to pin)."""
    value = text.strip().strip("'\"")
    for prefix in ("docker://", "dockerd://", "podman://"):
        if value.startswith(prefix):
            value = value[len(prefix):]
            break
    else:
        if "://" in value:
            return None
    if not value or value.startswith(("/", ".", "~")) or value.endswith((".sqsh", ".sif", ".squashfs", ".img")):
        return None
    return value.replace("#", "/", 1)


def _local_file(text: str) -> bool:
    """``${RECIPE_DIR}/sqsh/nemo.sqsh``: a path under a variable, or an image file, not a registry reference."""
    rest = VARIABLE_PREFIX.sub("", text.strip().strip("'\""), count=1)
    return rest.startswith("/") or rest.endswith((".sqsh", ".sif", ".squashfs", ".img")) or "/sqsh/" in rest


def _located(word: Word) -> Located:
    return Located(word.text, word.line, word.column, word.end_line, word.end_column)


def resolve_word(where: Located, script: Script) -> Located:
    """A value that is one variable assigned in the script is located at the assignment; other
    variables are expanded where known (left as written otherwise)."""
    text = str(where.value)
    if "$" not in text:
        return where
    name = text.strip("${}")
    assigned = script.assignments.get(name) if text in (f"${name}", f"${{{name}}}") else None
    if assigned:
        before = [word for word in assigned if (word.line, word.column) < (where.line, where.column)]
        word = (before or assigned)[-1]
        value = expand(word.text, script.variables())
        return Located(value if value is not None else word.text, word.line, word.column, word.end_line,
                       word.end_column)
    value = expand(text, script.variables(), use_defaults=True)
    return where._replace(value=value) if value is not None else where


def step_images(script: Script | None, submitter: Script | None = None) -> list[Located]:
    """Images the job's steps run: ``srun --container-image``, ``enroot import``, ``apptainer exec docker://``;
    a variable the job script does not assign is read from ``submitter`` (it expanded the ``--wrap`` text)."""
    if script is None:
        return []
    found: list[Located] = []
    for inner in script.scripts():
        for command in inner.commands():
            found.extend(_command_images(command, inner, submitter))
    return found


def _command_images(command: SimpleCommand, script: Script, submitter: Script | None = None) -> list[Located]:
    words = [_located(word) for word in command.words]
    if not words:
        return []
    program = posixpath.basename(str(words[0].value))
    candidates: list[Located] = []
    if program in ("srun", "sbatch", "salloc"):
        option = last(read_options(words[1:]), "--container-image")
        if option is not None and option.value is not None:
            candidates.append(option.value)
        start = launched_index([str(word.value) for word in words])
        if start is not None and posixpath.basename(str(words[start].value)) in IMAGE_TOOLS:
            # ``srun apptainer run --nv docker://org/img:tag …``: the tool runs on every task
            candidates.extend(word for word in words[start + 1:] if "://" in str(word.value))
    elif program in IMAGE_TOOLS:
        candidates.extend(word for word in words[1:] if "://" in str(word.value))
    found = []
    for where in candidates:
        resolved = resolve_word(where, script)
        if submitter is not None and "$" in str(resolved.value):
            resolved = resolve_word(where, submitter)
        text = str(resolved.value)
        if text.strip("'\"").startswith(DAEMON_PREFIXES) and _built_before(text, command, script):
            continue  # `docker build -t trainer:latest .` then `enroot import dockerd://trainer:latest`: no registry
        reference = image_reference(text) if "$" not in text else (None if _local_file(text) else text)
        if reference:
            found.append(resolved._replace(value=reference))
    return found


def _built_before(text: str, importing: SimpleCommand, script: Script) -> bool:
    """Whether an image the import reads from the local Docker/Podman daemon was built by an earlier
    ``docker|podman [buildx] build -t NAME`` of the same script: a local build has no registry tag to pin
    (its Dockerfile's ``FROM`` is judged instead)."""
    wanted = _local_name(image_reference(text) or "", script)
    if not wanted:
        return False
    for command in script.commands():
        if (command.line, command.column) >= (importing.line, importing.column):
            continue
        argv = command.argv()
        if not argv or posixpath.basename(argv[0]) not in BUILDERS or "build" not in argv[1:3]:
            continue
        for index, word in enumerate(argv):
            name = argv[index + 1] if word in ("-t", "--tag") and index + 1 < len(argv) else (
                word.split("=", 1)[1] if word.startswith(("-t=", "--tag=")) else None)
            if name is not None and _local_name(name, script) == wanted:
                return True
    return False


def _local_name(text: str, script: Script) -> str:
    """A built or imported name with variables expanded and the implied ``:latest`` written out."""
    value = expand(text.strip("'\""), script.variables()) or ""
    if not value or "$" in value:
        return ""
    tail = value.rsplit("/", 1)[-1]
    return value if ":" in tail or "@" in tail else f"{value}:latest"


# --------------------------------------------------------------------------- jobs


def _body_start(lines: Sequence[str], body: str, after: int) -> int | None:
    """The line where a heredoc's body starts (the first of its lines found after ``after``)."""
    first = next((part for part in body.split("\n") if part.strip()), None)
    if first is None:
        return None
    for number in range(after + 1, min(after + 400, len(lines)) + 1):
        if lines[number - 1] == first or lines[number - 1].lstrip("\t") == first:
            offset = body.split("\n").index(first)
            return number - offset
    return None


def _heredoc_bodies(document: Document, script: Script) -> list[tuple[SimpleCommand, str, int, int]]:
    """Every heredoc of the script: its command, its text and the lines it spans."""
    found = []
    for inner in script.scripts():
        for command in inner.commands():
            for redirect in command.redirects:
                if redirect.body is None:
                    continue
                start = _body_start(document.lines, redirect.body, redirect.line)
                if start is not None:
                    found.append((command, redirect.body, start, start + redirect.body.count("\n")))
    return found


def _heredoc_jobs(document: Document, heredocs: list[tuple[SimpleCommand, str, int, int]]) -> list[Job]:
    jobs: list[Job] = []
    lines = document.lines
    for command, text, start, end in heredocs:
        if command.written is None:
            continue
        options, anchor = leading_directives(lines, start, end)
        if anchor is None:
            continue
        body = Located(text, start, 1, end, 1)
        jobs.append(Job(options, anchor, command.written, body, (start, end), late_directives(lines, start, end)))
    return jobs


def _wrap_jobs(script: Script) -> list[Job]:
    """``sbatch [options] --wrap "cmd"``: the options are the job's, the string its body."""
    jobs: list[Job] = []
    for inner in script.scripts():
        for command in inner.commands():
            words = [_located(word) for word in command.words]
            if not words or posixpath.basename(str(words[0].value)) != "sbatch":
                continue
            options = read_options(words[1:])
            wrap = last(options, "--wrap")
            if wrap is None or wrap.value is None:
                continue
            anchor = words[0]
            index, skip = find_wrap(command.argv()) or (0, 0)
            raw = command.words[index].raw
            quoted = raw[skip:] if raw[:skip] == command.words[index].text[:skip] else raw  # ``'--wrap=…'`` whole
            expanded_here = not quoted.startswith("'")  # '…' expands when the job runs
            jobs.append(Job(options, anchor, command.written, wrap.value,
                            (anchor.line, max(w.end_line or w.line for w in words)),
                            submitter=inner if expanded_here else None, command_line=True))
    return jobs


def jobs_in(document: Document) -> list[Job]:
    """The batch jobs a shell document defines: itself (with ``#SBATCH`` directives), the job scripts
    it writes with heredocs, and ``sbatch --wrap`` commands."""
    script = document.parsed if isinstance(document.parsed, Script) else None
    text = document.text
    jobs: list[Job] = []
    if "#SBATCH" in text:
        lines = document.lines
        heredocs = _heredoc_bodies(document, script) if script is not None else []
        options, anchor = leading_directives(lines, 1, len(lines), column_zero=True)
        ignored = indented_directives(lines) + \
            late_directives(lines, 1, len(lines), [(start, end) for _, _, start, end in heredocs])
        if anchor is None and ignored:  # every directive comes after a command: a job that reads none of them
            anchor = Located("#SBATCH", ignored[0].line, ignored[0].column, ignored[0].line, ignored[0].column + 7)
        if anchor is not None:
            jobs.append(Job(options, anchor, script, Located(text, 1, 1, len(lines), 1), (1, len(lines)), ignored))
        jobs.extend(_heredoc_jobs(document, heredocs))
    if script is not None and "--wrap" in text:
        jobs.extend(_wrap_jobs(script))
    return jobs


def requeue(job: Job, lines: Sequence[str]) -> Located | None:
    """Retries: ``--requeue`` (unbounded), ``--no-requeue`` (0), or ``scontrol requeue`` in the script."""
    option = last(job.options, "--requeue", "--no-requeue")
    if option is not None:
        return option.flag._replace(value=0 if option.name == "--no-requeue" else UNBOUNDED_RETRIES)
    first, final = job.line_range
    for number in range(first, min(final, len(lines)) + 1):
        match = SCONTROL_REQUEUE.search(lines[number - 1])
        if match is not None and not lines[number - 1].lstrip().startswith("#"):
            return Located(UNBOUNDED_RETRIES, number, match.start() + 1, number, match.end() + 1)
    return None


def build_workload(job: Job, document: Document, config: Config) -> Workload:
    options = job.options
    per_node, total, nodes = gpu_request(options)
    name = last(options, "--job-name")
    workload = Workload(path=document.path, source=SOURCE, kind=KIND, anchor=job.anchor,
                        name=name.value if name is not None else None)
    body = job.body
    command = [] if body is None else [Located("bash", body.line, body.column), Located("-c", body.line, body.column),
                                       body]
    chdir = last(options, "--chdir")
    from spikelint.facts.placement import WORKDIR_UNKNOWN

    working = chdir.value if chdir is not None and chdir.value is not None and \
        str(chdir.value.value).startswith("/") else Located(WORKDIR_UNKNOWN, job.anchor.line, job.anchor.column)
    image = last(options, "--container-image")
    env = [EnvVar(Located(key, job.anchor.line, job.anchor.column), Located(value, job.anchor.line, job.anchor.column),
                  implied=True) for key, value in NODE_LOCAL_VARIABLES.items()]
    main = Container(name="batch", role="main",
                     image=_directive_image(image), command=command, env=env, working_dir=working,
                     gpus=per_node, replicas=nodes)
    workload.containers.append(main)
    seen = {(main.image.line, main.image.column)} if main.image is not None else set()
    for where in step_images(job.script, job.submitter):
        if (where.line, where.column) not in seen:
            seen.add((where.line, where.column))
            workload.containers.append(Container(name="step", role="step", image=where, replicas=nodes))
    workload.pods = nodes
    workload.gpus_total = total if total is not None and total.value else None
    workload.retries = requeue(job, document.lines)
    requeue_by = None
    if workload.retries is not None:
        by_option = any(option.flag is workload.retries or option.flag[1:3] == workload.retries[1:3]
                        for option in options)
        requeue_by = ("sbatch --requeue" if job.command_line else "#SBATCH --requeue") if by_option \
            else "scontrol requeue"
    untrapped = None
    signal = last(options, "--signal")
    if signal is not None and signal.value is not None:
        seconds = signal_seconds(str(signal.value.value))
        workload.grace_period = signal.value._replace(value=seconds) if seconds is not None else None
        if untrapped_batch_signal(str(signal.value.value), document.lines[job.line_range[0] - 1:job.line_range[1]]):
            untrapped = signal.value
    limit = last(options, "--time")
    if limit is not None and limit.value is not None:
        seconds = time_seconds(str(limit.value.value))
        workload.deadline = limit.value._replace(value=seconds) if seconds is not None else None
    workload.supports_deadline = True
    qos = last(options, "--qos") or last(options, "--partition")
    if qos is not None and qos.value is not None:
        workload.priority_class = qos.value
        workload.preemptible = preemptible_priority(str(qos.value.value), config.preemptible_priority_classes)
    comment = last(options, "--comment")
    if comment is not None and comment.value is not None:
        baseline = BASELINE_COMMENT.search(str(comment.value.value))
        if baseline is not None:
            workload.annotations[BASELINE_ANNOTATION] = comment.value._replace(value=baseline.group(1))
    requeue_line = workload.retries.line if workload.retries is not None and workload.retries.line and \
        workload.retries.line != job.anchor.line else None
    workload.platform = slurm_platform(job.line_range, requeue_by, requeue_line, job.command_line)
    workload.slurm = SlurmJob(
        directives={option.name.lstrip("-"): option.value for option in options if option.value is not None},
        time_written=limit is not None, untrapped_signal=untrapped, ignored=tuple(job.ignored),
        logs=tuple((option.name, option.value) for option in options
                   if option.name in ("--output", "--error") and option.value is not None),
        requeue_by=requeue_by)
    return workload


def _directive_image(option: Option | None) -> Located | None:
    if option is None or option.value is None:
        return None
    reference = image_reference(str(option.value.value))
    return option.value._replace(value=reference) if reference else None


def slurm_workloads(document: Document, config: Config) -> list[Workload]:
    return [build_workload(job, document, config) for job in jobs_in(document)]
