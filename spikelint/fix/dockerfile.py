"""SPK501 in a Dockerfile: ``SHELL ["/bin/bash", "-o", "pipefail", "-c"]`` before the first
piped ``RUN`` of each stage (the instruction hadolint's DL4006 asks for); where the stage sets
its own ``SHELL``, that instruction gains ``"-o", "pipefail"`` in its JSON form instead (a line
above it would be overridden by it).  SHELL is part of the image configuration, so a stage built
on a fixed stage inherits it and needs no line of its own."""

from __future__ import annotations

import posixpath
import re
from typing import Iterator
from typing import Sequence

from spikelint.documents.dockerfile import Dockerfile
from spikelint.documents.dockerfile import Instruction
from spikelint.documents.shell import find_shell_call
from spikelint.fix.context import FixContext
from spikelint.fix.context import Outcome
from spikelint.fix.context import refuse
from spikelint.fix.edits import Edit
from spikelint.fix.edits import Fix
from spikelint.fix.edits import line_starts
from spikelint.fix.edits import newline_of
from spikelint.fix.edits import offset
from spikelint.model import Finding
from spikelint.util.lazyre import lazy_regex

PIPEFAIL_SHELL = 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]'
PIPEFAIL_SHELLS = frozenset(("bash", "zsh", "ksh", "mksh"))  # sh (dash) and ash may have no pipefail
JSON_STRING = lazy_regex(r'"(?:[^"\\]|\\.)*"')
C_FLAG = lazy_regex(r"^-[A-Za-z]*c[A-Za-z]*$")
# bases that ship without bash: a SHELL naming it would break every later RUN
NO_BASH = re.compile(r"(?:^|[/:_.-])(?:alpine|busybox|distroless|scratch|nanoserver|windowsservercore|static|wolfi)"
                     r"(?:$|[/:_.@-])", re.IGNORECASE)


def _parse(context: FixContext) -> Dockerfile | None:
    from spikelint.documents import parse_text
    from spikelint.model import SourceFile

    parsed = parse_text(SourceFile(context.path, context.path, context.kind), context.text).parsed
    return parsed if isinstance(parsed, Dockerfile) else None


def _holder(dockerfile: Dockerfile, line: int) -> Instruction | None:
    return next((instruction for instruction in dockerfile.instructions
                 if instruction.line <= line <= instruction.end_line), None)


def _sets_shell(instruction: Instruction, stage: int) -> bool:
    """A SHELL of ``stage`` that the build honours (the JSON form; the other is an error)."""
    return instruction.keyword == "SHELL" and instruction.stage == stage and instruction.exec_form \
        and bool(instruction.arguments)


def _governing_shell(dockerfile: Dockerfile, instruction: Instruction) -> Instruction | None:
    """The stage's own SHELL instruction in effect at ``instruction`` (None: inherited or the default)."""
    found = None
    for other in dockerfile.instructions:
        if other.line >= instruction.line:
            break
        if _sets_shell(other, instruction.stage):
            found = other
    return found


def dockerfile_pipefail(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    dockerfile = _parse(context)
    if dockerfile is None:
        for finding in findings:
            yield refuse(finding, "the Dockerfile could not be read back")
        return
    # a group is one edit: ("insert", stage) before the stage's first piped RUN, or ("shell", line) of a
    # stage's own SHELL; its findings are those the edited shell runs, in descendant stages too
    groups: dict[tuple[str, int], list[tuple[Instruction, Finding]]] = {}
    places: dict[tuple[str, int], Instruction] = {}
    refused: dict[tuple[str, int], str] = {}
    end_group: dict[int, tuple[str, int] | None] = {}  # per stage: the group whose shell its image ends with
    by_stage: dict[int, list[tuple[Instruction, Finding]]] = {}
    for finding in findings:
        instruction = _holder(dockerfile, finding.line)
        if instruction is None or instruction.stage < 0:
            yield refuse(finding, "no instruction holds the finding's line")
            continue
        if instruction.exec_form:
            yield refuse(finding, f"the {instruction.keyword} at line {instruction.line} names its own shell in JSON "
                                  f"form, which SHELL does not change: add `set -o pipefail; ` to its script by hand")
            continue
        by_stage.setdefault(instruction.stage, []).append((instruction, finding))
    for stage in dockerfile.stages:
        parent = dockerfile.stage_named(stage.base, before=stage.index)
        inherited = end_group.get(parent.index) if parent is not None else None
        for instruction, finding in sorted(by_stage.get(stage.index, []), key=lambda pair: pair[0].line):
            shell = _governing_shell(dockerfile, instruction)
            if shell is not None:
                key = ("shell", shell.line)
                if key not in places:
                    places[key] = shell
                    refused[key] = _shell_refusal(dockerfile, shell)
            elif inherited is not None:
                key = inherited
            else:
                key = ("insert", stage.index)
                if key not in places:
                    places[key] = instruction
                    refused[key] = _refusal(dockerfile, dockerfile.root_image(stage)) or \
                        _runtime_refusal(dockerfile, stage.index, instruction.line)
            groups.setdefault(key, []).append((instruction, finding))
        own = [instruction for instruction in dockerfile.instructions if _sets_shell(instruction, stage.index)]
        if own:
            key = ("shell", own[-1].line)
            end_group[stage.index] = key if key in groups and not refused[key] else None
        else:
            key = ("insert", stage.index)
            end_group[stage.index] = key if key in groups and not refused[key] else inherited
    starts = line_starts(context.text)
    newline = newline_of(context.text)
    for key, held in groups.items():
        if refused[key]:
            for _, finding in held:
                yield refuse(finding, refused[key])
            continue
        claims = tuple(finding.fingerprint for _, finding in held)
        place = places[key]
        if key[0] == "shell":
            yield _shell_fix(context, place, claims, starts)
            continue
        stage = dockerfile.stages[key[1]]
        line_text = context.text[starts[place.line - 1]:starts[place.line - 1] + place.column - 1]
        indent = line_text if not line_text.strip() else ""
        position = starts[place.line - 1]
        yield Fix("SPK501", claims, (Edit(position, position, f"{indent}{PIPEFAIL_SHELL}{newline}"),),
                  f"line {place.line}: added {PIPEFAIL_SHELL} before the first piped {place.keyword} of stage "
                  f"{stage.name or stage.index}")


def _shell_fix(context: FixContext, shell: Instruction, claims: tuple[str, ...], starts: Sequence[int]) -> Outcome:
    """``"-o", "pipefail"`` right after the shell's own word of the stage's ``SHELL [...]``, in the
    array's own spacing: ``["/bin/bash", "-c"]`` -> ``["/bin/bash", "-o", "pipefail", "-c"]``."""
    (_, line, column), (_, next_line, next_column) = shell.arguments[0], shell.arguments[1]
    start = offset(context.text, line, column, starts)
    literal = JSON_STRING.match(context.text, start)
    end = literal.end() if literal is not None else start
    following = offset(context.text, next_line, next_column, starts)
    separator = context.text[end:following]
    if "\n" in separator or "\r" in separator or not separator.strip().startswith(","):
        separator = ", "
    return Fix("SPK501", claims, (Edit(end, end, f'{separator}"-o"{separator}"pipefail"'),),
               f"line {shell.line}: added \"-o\", \"pipefail\" to the stage's SHELL")


def _shell_refusal(dockerfile: Dockerfile, shell: Instruction) -> str:
    """Why the stage's own SHELL cannot gain ``-o pipefail`` (``""`` when it can)."""
    if dockerfile.escape != "\\":
        return "a Dockerfile with a custom escape character (a Windows image) has no bash"
    words = [argument[0] for argument in shell.arguments]
    name = posixpath.basename(words[0]) if words else ""
    if name not in PIPEFAIL_SHELLS and not name.startswith("bash"):
        return (f"the stage's SHELL at line {shell.line} runs {words[0] if words else 'nothing'}, which may have no "
                f"pipefail: make it [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"] by hand if the image has bash")
    if len(words) < 2 or not any(C_FLAG.match(word) for word in words[1:]):
        return f"the stage's SHELL at line {shell.line} has no -c: add -o pipefail to it by hand"
    call = find_shell_call(words)
    if call is not None and call.pipefail:
        return (f"the stage's SHELL at line {shell.line} already sets pipefail: the pipeline runs in a shell of its "
                f"own, add `set -o pipefail` there by hand")
    return ""


def _runtime_refusal(dockerfile: Dockerfile, stage: int, after: int) -> str:
    """A SHELL also changes the stage's shell-form CMD/ENTRYPOINT: what the container runs would change."""
    runtime = next((instruction for instruction in dockerfile.instructions
                    if instruction.stage == stage and instruction.line > after and not instruction.exec_form
                    and instruction.keyword.upper() in ("CMD", "ENTRYPOINT")), None)
    if runtime is None:
        return ""
    return (f"a SHELL would also run the shell-form {runtime.keyword.upper()} at line {runtime.line} under bash, "
            f"changing what the container runs: add `set -o pipefail; ` to the piped line by hand, or write the "
            f"{runtime.keyword.upper()} in JSON form first")


def _refusal(dockerfile: Dockerfile, base: str) -> str:
    if dockerfile.escape != "\\":
        return "a Dockerfile with a custom escape character (a Windows image) has no bash"
    if "$" in base or NO_BASH.search(base):
        return f"the base image {base} may have no bash: use `set -o pipefail` in a shell that has it, by hand"
    return ""

