"""SPK501 and SPK502: shell pipelines that hide a failure or a Python log.

SPK501 (pipe-without-pipefail) fires where a lost failure matters: a program piped into a log
sink (``tee``, ``logger``, ``ts``, ``cat >> f``, ``sed … > f``) or a download piped into a
shell (``curl … | bash``), while ``pipefail`` is off, and the pipeline's status is what the
script ends with or acts on (``set -e``, a following ``&&`` or ``$?`` test, the last command).
Pipelines in ``$(…)``, in ``if``/``while`` conditions, rescued by ``||``, run in the background
or checked through ``PIPESTATUS`` are left alone, and so are filters whose output nothing acts
on (``| grep -q``, ``| head``).  One finding per script or command string, at the first such
pipeline, naming how many more there are.  Trivial producers on the left (``echo``, ``cat``,
``grep``…) do not count: their failure does not hide a failed run.  Templates (Jinja,
``%(name)s``) are not shell and get neither rule.

SPK502 (buffered-python-log) fires once per ``python``/``python3``/``python3.x`` command
whose stdout goes to a pipe or a file (``| tee``, ``> f``, ``>> f``, ``&> f``, a redirected
or piped ``{ …; }``/``( … )``/loop around it, or an earlier ``exec > f``) without ``-u`` and
without ``PYTHONUNBUFFERED``.  ``torchrun``, ``deepspeed`` and ``python -m
torch.distributed.run`` are not reported: they start their workers with ``python -u``.
``python -c`` one-liners, ``python -m pip``/``venv`` and ``--version`` print no run log.  The
``<`` and ``>`` of a fill-in blank (``--model <model name> --epochs 3``) are not redirects.

Both look at launch scripts (and the job scripts their here-documents write), Dockerfile
``RUN``/``CMD``/``ENTRYPOINT`` (shell form, or exec form through ``sh -c``), workload
command/args run through ``sh -c``/``bash -c`` and CI ``run:``/``script:`` steps
(:mod:`spikelint.checks.logs_ci`).

This module holds the checks, one per kind of input; how a command is read is in
:mod:`spikelint.checks.logs.programs`, the analysis of a parsed script in
:mod:`spikelint.checks.logs.pipelines`.
"""

from __future__ import annotations

from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.documents.dockerfile import Dockerfile
from spikelint.documents.dockerfile import Instruction
from spikelint.documents.shell import Script
from spikelint.documents.shell import find_shell_call
from spikelint.documents.shell import is_template
from spikelint.documents.shell import parse_shell
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Container
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.model import Problem
from spikelint.model import Workload
from spikelint.checks.logs.programs import UNBUFFERED
from spikelint.checks.logs.pipelines import ASH_CONTEXT
from spikelint.checks.logs.pipelines import DOCKERFILE_CONTEXT
from spikelint.checks.logs.pipelines import SCRIPT_CONTEXT
from spikelint.checks.logs.pipelines import WORKLOAD_CONTEXT
from spikelint.checks.logs.pipelines import Context
from spikelint.checks.logs.pipelines import Env
from spikelint.checks.logs.pipelines import check_script


# --------------------------------------------------------------------------- launch scripts


@check("SPK501", "SPK502", kinds=(FileKind.SHELL,))
def shell_script_logs(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Pipes without pipefail and buffered Python logs in a launch script."""
    script = document.parsed
    if not isinstance(script, Script) or is_template(document.text):
        return
    yield from check_script(script, Env(), SCRIPT_CONTEXT)


# --------------------------------------------------------------------------- Dockerfiles


def _stage_unbuffered(dockerfile: Dockerfile) -> tuple[dict[int, bool], dict[int, bool]]:
    """Per RUN: PYTHONUNBUFFERED set by an earlier ENV or ARG of its stage (or an ENV of the stage it
    builds on); per stage: set by an ENV anywhere in it (the image config CMD/ENTRYPOINT run with —
    an ARG is gone by then)."""
    before: dict[int, bool] = {}
    image: dict[int, bool] = {}  # ENV: kept in the image, inherited by stages built on it
    build: dict[int, bool] = {}  # ENV or ARG: what the next RUN sees
    for instruction in dockerfile.instructions:
        stage = instruction.stage
        if instruction.keyword == "FROM" and 0 <= stage < len(dockerfile.stages):
            parent = dockerfile.stage_named(dockerfile.stages[stage].base, before=stage)
            image[stage] = image.get(parent.index, False) if parent is not None else False
            build[stage] = image[stage]
        before[id(instruction)] = build.get(stage, False)
        if instruction.keyword in ("ENV", "ARG") and stage >= 0:
            for name, value in instruction.pairs:
                if name.value == UNBUFFERED:
                    is_set = value is not None and value.value != ""
                    if instruction.keyword == "ENV":
                        image[stage] = build[stage] = is_set
                    else:  # an ARG never overrides an ENV of the same name
                        build[stage] = build.get(stage, False) or image.get(stage, False) or is_set
    return before, image


@check("SPK501", "SPK502", kinds=(FileKind.DOCKERFILE,))
def dockerfile_logs(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Pipes without pipefail and buffered Python output in RUN/CMD/ENTRYPOINT commands."""
    dockerfile = document.parsed
    if not isinstance(dockerfile, Dockerfile):
        return
    before, stage_set = _stage_unbuffered(dockerfile)
    ash = {stage.index for stage in dockerfile.stages if ASH_IMAGE.search(dockerfile.root_image(stage))}
    for instruction in dockerfile.instructions:
        if instruction.script is None or instruction.keyword not in ("RUN", "CMD", "ENTRYPOINT"):
            continue
        unbuffered = _instruction_unbuffered(instruction, before, stage_set)
        context = ASH_CONTEXT if instruction.stage in ash else DOCKERFILE_CONTEXT
        yield from check_script(instruction.script, Env(unbuffered), context)


ASH_IMAGE = lazy_regex(r"(?:^|[/:_.-])(?:alpine|busybox)(?:[:@/_.-]|$)")


def _instruction_unbuffered(instruction: Instruction, before: dict[int, bool], stage_set: dict[int, bool]) -> bool:
    if instruction.keyword == "RUN":
        return before.get(id(instruction), False)
    return stage_set.get(instruction.stage, False)  # the image's config, whatever the order


# --------------------------------------------------------------------------- workloads


def _container_unbuffered(container: Container) -> bool:
    for variable in container.env:
        if variable.name.value != UNBUFFERED:
            continue
        if variable.reference is not None or (variable.value is not None and str(variable.value.value) != ""):
            return True
    return False


def _source_char(document: Document, line: int, column: int) -> str:
    lines = document.lines
    if 0 < line <= len(lines) and 0 < column <= len(lines[line - 1]):
        return lines[line - 1][column - 1]
    return ""


def _parse_located(text: str, where: Located, document: Document, pipefail: bool, errexit: bool) -> tuple[Script, Context]:
    """Parse a ``-c`` string held in a YAML/JSON value, mapping positions into the document."""
    quoted = _source_char(document, where.line, where.column) in ("'", '"')
    if document.kind == FileKind.JSON or quoted:
        first_line = where.line
        last_line = where.end_line or where.line

        def place(line: int, column: int) -> tuple[int, int]:
            """Lines of an escaped multi-line string all sit on the string's own line(s)."""
            if line > last_line or line < first_line:
                return (last_line if line > last_line else first_line), where.column
            return line, column

        script = parse_shell(text, where.line, where.column + (1 if quoted else 0), pipefail=pipefail, errexit=errexit)
        return script, WORKLOAD_CONTEXT._replace(place=place)
    if "\n" in text:  # a block scalar: every line is indented like the first
        script = parse_shell(text, where.line, where.column, indent=where.column - 1, pipefail=pipefail,
                             errexit=errexit)
        return script, WORKLOAD_CONTEXT
    return parse_shell(text, where.line, where.column, pipefail=pipefail, errexit=errexit), WORKLOAD_CONTEXT


@check("SPK501", "SPK502", scope="workload")
def workload_command_logs(workload: Workload, document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """Container command/args that run a ``sh -c``/``bash -c`` string with a pipe or a redirect."""
    if document.kind not in (FileKind.YAML, FileKind.JSON):
        return  # a runai command in a launch script is checked with the script itself
    seen: set[tuple[int, int]] = set()
    for container in workload.containers:
        argv = [where for where in container.command + container.args if isinstance(where.value, str)]
        call = find_shell_call([str(where.value) for where in argv])
        if call is None or call.script_index is None:
            continue
        where = argv[call.script_index]
        if (where.line, where.column) in seen:
            continue  # one pod template shared by several replica groups
        seen.add((where.line, where.column))
        script, context = _parse_located(str(where.value), where, document, call.pipefail, call.errexit)
        yield from check_script(script, Env(_container_unbuffered(container)), context)


# --------------------------------------------------------------------------- CI steps


GITHUB_CONTEXT = Context("set `shell: bash` on the step (GitHub then runs it with `bash -eo pipefail`) or start the "
                         "script with `set -o pipefail`")
GITLAB_CONTEXT = Context("start the script with `set -o pipefail` (the runner's shell lacks it)")


@check("SPK501", "SPK502", kinds=(FileKind.YAML,))
def ci_step_logs(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """GitHub Actions ``run:`` steps and GitLab CI ``script:`` lines, read with their runner's shell options."""
    from spikelint.documents.ci import ci_scripts

    for step in ci_scripts(document):
        context = GITHUB_CONTEXT if step.system == "github" else GITLAB_CONTEXT
        yield from check_script(step.script, Env(bool(step.env.get(UNBUFFERED))), context)
