"""SPK501/SPK502's analysis of a parsed script: pipelines that lose a failure, Python logs left buffered.

The checks in :mod:`spikelint.checks.logs.shell` parse their input (a launch script, a
Dockerfile instruction, a workload command string) and hand the script here, with where
``PYTHONUNBUFFERED`` comes from outside it and how to word the fix for that kind of input.
"""

from __future__ import annotations

import re

from typing import Callable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.documents.shell import Pipeline
from spikelint.documents.shell import Script
from spikelint.documents.shell import SimpleCommand
from spikelint.documents.shell import Word
from spikelint.documents.shell import SHELLS
from spikelint.documents.shell import expand
from spikelint.documents.shell import find_shell_call
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Problem
from spikelint.checks.logs.programs import PYTHON
from spikelint.checks.logs.programs import QUIET_MODULES
from spikelint.checks.logs.programs import UNBUFFERED
from spikelint.checks.logs.programs import base_name
from spikelint.checks.logs.programs import failure_matters
from spikelint.checks.logs.programs import program
from spikelint.checks.logs.programs import python_mode
from spikelint.checks.logs.programs import split_fd
from spikelint.checks.logs.programs import stdout_state
from spikelint.documents.shell import find_wrap

CAPTURED = ("file", "pipe")
DOWNLOADERS = frozenset({"curl", "wget", "aria2c", "fetch"})
LOG_SINKS = frozenset({"tee", "logger", "ts"})
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".md", ".yaml", ".yml", ".toml", ".py", ".sh", ".html", ".xml",
                 ".parquet", ".npy", ".bin", ".pt", ".whl", ".tar", ".gz", ".zip", ".env", ".ini", ".cfg")
CI_FILES = lazy_regex(r"\$\{?GITHUB_(?:STEP_SUMMARY|OUTPUT|ENV|PATH|STATE)\b")  # ``cat`` and ``sed`` count when their stdout goes to a file


class Env(NamedTuple):
    """Where ``PYTHONUNBUFFERED`` comes from outside the script being checked."""

    unbuffered: bool = False


class Context(NamedTuple):
    """How to word and place findings for one kind of input."""

    fix_pipefail: str
    place: Callable[[int, int], tuple[int, int]] = lambda line, column: (line, column)


SCRIPT_CONTEXT = Context("add `set -o pipefail` (bash; `set -euo pipefail` at the top of the script) before it")
DOCKERFILE_CONTEXT = Context('add `SHELL ["/bin/bash", "-o", "pipefail", "-c"]` before this instruction '
                             "(or start the command with `set -o pipefail &&` under bash)")
# BusyBox's ash (alpine, busybox) has pipefail but no bash
ASH_CONTEXT = Context('add `SHELL ["/bin/ash", "-o", "pipefail", "-c"]` before this instruction (the image\'s '
                      "BusyBox ash has pipefail, not bash), or start the command with `set -o pipefail &&`")
# ``sbatch --wrap CMD``: sbatch writes CMD under ``#!/bin/sh``; the submitting script's options do not reach it
WRAP_CONTEXT = Context("run the command with bash and pipefail: `sbatch --wrap \"bash -o pipefail -c '…'\"` "
                       "(sbatch runs a --wrap command with /bin/sh), or submit a job script that sets it")
WORKLOAD_CONTEXT = Context("start the command string with `set -o pipefail;` and run it with bash "
                           '(`command: ["bash", "-c"]`)')


# --------------------------------------------------------------------------- analysis


def _before(word: Word, command: SimpleCommand) -> bool:
    return (word.line, word.column) < (command.line, command.column)


def _sets_unbuffered(assignment: str) -> bool:
    name, _, value = assignment.partition("=")
    return name == UNBUFFERED and value != ""


def _script_unbuffered(script: Script, command: SimpleCommand) -> bool:
    return any(word.text != "" and _before(word, command) for word in script.assignments.get(UNBUFFERED, []))


def _command_unbuffered(command: SimpleCommand, env: list[str]) -> bool:
    words = [word.text for word in command.assignments] + env
    return any(_sets_unbuffered(text) for text in words)


def _passes_unbuffered(command: SimpleCommand) -> bool:
    """``runai … -e PYTHONUNBUFFERED=1 -- bash -c '…'``, ``docker run -e …``: set for the inner script."""
    return any(_sets_unbuffered(word.text) for word in command.words) or _command_unbuffered(command, [])


def _pipeline_text(pipeline: Pipeline) -> str:
    """The whole pipeline: what SPK501 keyed on before its key became the programs the message names
    (a fix that adds ``-u`` to ``python``, or a new argument, keeps a baselined finding baselined)."""
    return " | ".join(" ".join(command.argv()) for command in pipeline.commands)


def _pipefail_problem(pipeline: Pipeline, context: Context, others: Sequence[Pipeline] = ()) -> Problem:
    first = pipeline.commands[0]
    found = program(first) if not first.compound else None
    word = first.words[found[0]] if found is not None else (first.words[0] if first.words else None)
    line, column = (word.line, word.column) if word is not None else (pipeline.line, pipeline.column)
    line, column = context.place(line, column)
    end_line, end_column = context.place(pipeline.end_line, pipeline.end_column) if pipeline.end_line else (None, None)
    left = ", ".join(dict.fromkeys(_display_name(command) for command in pipeline.commands[:-1]))
    right = _display_name(pipeline.commands[-1])
    more = ""
    if others:
        lines = sorted({context.place(other.line, other.column)[0] for other in others})
        shown = ", ".join(str(number) for number in lines[:5]) + (", …" if len(lines) > 5 else "")
        more = (f" ({len(others)} more pipeline{'s' if len(others) > 1 else ''} like it in this script, "
                f"line{'s' if len(lines) > 1 else ''} {shown})")
    return Problem("SPK501", line, column,
                   f"`{left} | {right}` without pipefail: the pipeline's exit status is {right}'s, so when {left} "
                   f"fails ({_failure_of(pipeline.commands[:-1])}) the failure is reported as success{more} — "
                   f"{context.fix_pipefail}",
                   end_line=end_line, end_column=end_column, key=f"pipefail:{left} | {right}",
                   legacy_key=f"pipefail:{_pipeline_text(pipeline)}")


FETCHERS = DOWNLOADERS | {"gsutil", "aws", "gcloud", "azcopy", "rclone", "hf", "huggingface-cli", "git"}


def _failure_of(commands: list[SimpleCommand]) -> str:
    """How the left side of a pipe fails, in its own terms: a download, or a run."""
    names = {base_name(command.words[0].text) for command in commands if command.words and not command.compound}
    if names and names <= FETCHERS:
        return "a failed download"
    if names & FETCHERS:
        return "a crashed or killed run, a failed download"
    return "a crashed or killed run, any error"


def _display_name(command: SimpleCommand) -> str:
    if command.compound:
        return {"(": "( … )", "{": "{ …; }"}.get(command.compound, f"{command.compound} … ")
    found = program(command)
    if found is None:
        return command.name or "…"
    return base_name(command.words[found[0]].text)


def _buffered_problem(command: SimpleCommand, index: int, state: str, context: Context) -> Problem:
    word = command.words[index]
    line, column = context.place(word.line, word.column)
    end_line, end_column = context.place(word.end_line, word.end_column)
    where = "into a pipe" if state == "pipe" else "into a file"
    return Problem("SPK502", line, column,
                   f"`{word.text}` writes its output {where} block-buffered: the log lags behind the run and its last "
                   f"lines are lost when the job is killed or preempted — run `{word.text} -u …` or set "
                   f"PYTHONUNBUFFERED=1",
                   end_line=end_line, end_column=end_column, key=f"buffered:{word.text} {_run_target(command, index)}:{state}",
                   legacy_key=f"buffered:{' '.join(command.argv())}")


def _run_target(command: SimpleCommand, index: int) -> str:
    """What the buffered program runs (``train.py``, the module after ``-m``): the finding's identity, so that
    editing a flag of the command (``--lr``) keeps a baselined finding baselined."""
    return next((word.text for word in command.words[index + 1:] if not word.text.startswith("-")), "")


# a file named for a log or a console: what a run prints, read while it runs
LOG_NAME = lazy_regex(r"log|\.out$|\.err$|stdout|stderr|console|nohup|output|trace|progress", re.IGNORECASE)


def _writes_data(command: SimpleCommand, script: Script) -> bool:
    """Stdout goes to a data or report file (by its name), which is read when the program is done."""
    targets = [redirect.target for redirect in command.redirects if redirect.target is not None
               and split_fd(redirect.operator)[0] in ("", "1") and split_fd(redirect.operator)[1] in (">", ">>", ">|")]
    if not targets:
        return False
    text = targets[-1].text
    expanded = expand(text, script.variables()) or text
    name = base_name(expanded).lower()
    if name.endswith(DATA_SUFFIXES) or CI_FILES.search(text):
        return True
    # stdout alone into a file that is not named like a log (``apply_bpe.py < train.de > bpe.de``):
    # the program's product; with stderr merged in (``2>&1``, ``&>``) it is the run's console, a log
    merged = any(split_fd(redirect.operator)[0] == "2" and split_fd(redirect.operator)[1] == ">&1"
                 or redirect.operator.startswith("&") for redirect in command.redirects)
    return not merged and not LOG_NAME.search(name) and not LOG_NAME.search(text)


def _inherited_states(script: Script) -> dict[int, str]:
    """Pipelines inside a redirected or piped compound command, or in a function whose call is
    redirected or piped (``main "$@" 2>&1 | tee log``): the stdout they inherit."""
    inherited: dict[int, str] = {}
    for pipeline in script.pipelines:
        last = len(pipeline.commands) - 1
        for position, command in enumerate(pipeline.commands):
            if command.compound:
                body = command.body
            elif command.name in script.functions:
                body = script.functions[command.name]
            else:
                continue
            state = stdout_state(command, position < last) or inherited.get(id(pipeline))
            if state is None:
                continue
            if state == "pipe" and position < last and \
                    not any(_sink(following) == "log" for following in pipeline.commands[position + 1:]):
                state = "read"  # ``( for …; python x.py; done ) | grep | sort``: read by programs, not a log
            for inner in body:
                if inner.nested:
                    continue
                if command.compound:
                    inherited[id(inner)] = state  # compounds come outermost first: the innermost wins
                else:
                    inherited.setdefault(id(inner), state)  # a redirect inside the function wins over the call's
    return inherited


def _sink(command: SimpleCommand) -> str:
    """``log`` when the command writes what it reads to a log, ``shell`` when it runs it, else ``""``."""
    if command.compound:
        return ""
    found = program(command)
    if found is None:
        return ""
    index = found[0]
    name = base_name(command.words[index].text)
    arguments = [word.text for word in command.words[index + 1:]]
    if name in SHELLS:
        call = find_shell_call([name] + arguments)
        reads_file = call is not None and call.script_index is None and any(
            not argument.startswith(("-", "+")) for argument in arguments)
        return "" if call is None or call.script_index is not None or (reads_file and "-s" not in arguments) \
            else "shell"
    state = stdout_state(command, False)
    if name == "tee":
        files = [argument for argument in arguments if not argument.startswith("-")]
        if state == "null" or not files or all(path.startswith("/dev/") for path in files):
            return ""  # `… | sudo tee /etc/apt/keyrings/x.gpg > /dev/null` writes a file, not a log
        return "log"
    if name in LOG_SINKS:
        return "log"
    if name == "cat" and state == "file" and all(argument == "-" for argument in arguments):
        return "log"
    if name == "sed" and state == "file" and not any(argument.startswith(("-i", "--in-place")) for argument in arguments):
        return "log"
    return ""


def _is_download(command: SimpleCommand) -> bool:
    found = program(command) if not command.compound else None
    return found is not None and base_name(command.words[found[0]].text) in DOWNLOADERS


def loses_failure(pipeline: Pipeline) -> bool:
    """A program piped into a log sink, or a download piped into a shell, without pipefail."""
    commands = pipeline.commands
    if len(commands) < 2 or pipeline.pipefail:
        return False
    for position in range(1, len(commands)):
        kind = _sink(commands[position])
        if kind == "log" and any(failure_matters(command) for command in commands[:position]):
            return True
        if kind == "shell" and any(_is_download(command) for command in commands[:position]):
            return True
    return False


def _status_read(pipeline: Pipeline, following: Pipeline | None) -> str:
    """``PIPESTATUS`` or ``$?`` when the next command reads the pipeline's status, else ``""``."""
    if following is None:
        return ""
    raw = " ".join(word.raw for command in following.commands for word in command.assignments + command.words)
    if "PIPESTATUS" in raw:
        return "PIPESTATUS"
    return "$?" if "$?" in raw or "${?}" in raw else ""


def status_matters(pipeline: Pipeline, following: Pipeline | None, exits_with: bool) -> bool:
    """Whether the pipeline's status is acted on or is what the script ends with.

    ``exits_with`` tells whether the script's own exit status matters (it does for a launch
    script, a container command, a ``RUN`` or a CI step; for a ``bash -c`` inside a script
    only when that command's status matters in turn).
    """
    if pipeline.nested or pipeline.tested or pipeline.rescued or pipeline.background:
        return False
    read = _status_read(pipeline, following)
    if read == "PIPESTATUS":
        return False
    return pipeline.errexit or pipeline.next_op == "&&" or read == "$?" or (pipeline.last and exits_with)


def pipefail_findings(script: Script, exits_with: bool = True) -> list[Pipeline]:
    """The pipelines of a script (and of the ``bash -c`` scripts inside it) that lose a failure that matters."""
    found: list[Pipeline] = []
    pipelines = script.pipelines
    for index, pipeline in enumerate(pipelines):
        following = next((p for p in pipelines[index + 1:index + 8] if not p.nested), None)
        matters = status_matters(pipeline, following, exits_with)
        if matters and loses_failure(pipeline):
            found.append(pipeline)
        for command in pipeline.commands:
            if command.inner is not None and not command.compound:
                found.extend(pipefail_findings(command.inner, matters and len(pipeline.commands) == 1))
    return found


def check_script(script: Script, env: Env, context: Context, exits_with: bool = True) -> Iterator[Problem]:
    """SPK501 (once per script) and SPK502 for a script, its ``bash -c`` scripts and the job scripts it writes."""
    lost = pipefail_findings(script, exits_with)
    if lost:
        yield _pipefail_problem(lost[0], context, lost[1:])
    yield from buffered_logs(script, env, context)
    for command in script.commands():
        if command.written is not None:
            wrapped = find_wrap(command.argv()) is not None
            yield from check_script(command.written, Env(env.unbuffered or _script_unbuffered(script, command)),
                                    WRAP_CONTEXT._replace(place=context.place) if wrapped else context)


def buffered_logs(script: Script, env: Env, context: Context) -> Iterator[Problem]:
    """SPK502 for a script and the ``bash -c`` scripts inside it."""
    inherited = _inherited_states(script)
    exec_state: str | None = None
    for pipeline in script.pipelines:
        commands = pipeline.commands
        last = len(commands) - 1
        for position, command in enumerate(commands):
            if command.compound:
                continue
            if command.inner is not None:
                inner_env = Env(env.unbuffered or _script_unbuffered(script, command) or _passes_unbuffered(command))
                yield from buffered_logs(command.inner, inner_env, context)
            if command.name == "exec" and len(command.words) == 1:  # `exec > log 2>&1`: the rest of the script
                if not pipeline.nested:
                    exec_state = stdout_state(command, False) or exec_state
                continue
            found = program(command)
            if found is None:
                continue
            index, wrapper_env = found
            if not PYTHON.fullmatch(base_name(command.words[index].text)):
                continue
            if pipeline.nested in ("$(", "`") and stdout_state(command, False) != "file":
                continue  # output captured into a variable is not a log
            state = stdout_state(command, position < last) or inherited.get(id(pipeline))
            if state is None and not pipeline.nested:
                state = exec_state
            if state not in CAPTURED:
                continue
            if state == "pipe" and position < last and not any(_sink(c) == "log" for c in commands[position + 1:]):
                continue  # `python gen.py | sh`, `python list.py | jq …`: output read by a program, not a log
            if state == "file" and _writes_data(command, script):
                continue  # `python prepare.py > dataset.json`, `>> $GITHUB_STEP_SUMMARY`: a result, not a log
            unbuffered, what = python_mode([word.text for word in command.words[index + 1:]])
            if unbuffered or what in ("command", "info") or what.partition(":")[2] in QUIET_MODULES:
                continue
            if env.unbuffered or _command_unbuffered(command, wrapper_env) or _script_unbuffered(script, command):
                continue
            yield _buffered_problem(command, index, state, context)


