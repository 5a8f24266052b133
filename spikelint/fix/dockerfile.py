"""SPK501 in a Dockerfile: ``SHELL ["/bin/bash", "-o", "pipefail", "-c"]`` before the first
piped ``RUN`` of each stage (the instruction hadolint's DL4006 asks for).  SHELL is part of the
image configuration, so a stage built on a fixed stage inherits it and needs no line of its own."""

from __future__ import annotations

import re
from typing import Iterator
from typing import Sequence

from spikelint.documents.dockerfile import Dockerfile
from spikelint.documents.dockerfile import Instruction
from spikelint.fix.context import FixContext
from spikelint.fix.context import Outcome
from spikelint.fix.context import refuse
from spikelint.fix.edits import Edit
from spikelint.fix.edits import Fix
from spikelint.fix.edits import line_starts
from spikelint.fix.edits import newline_of
from spikelint.model import Finding

PIPEFAIL_SHELL = 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]'
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


def dockerfile_pipefail(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    dockerfile = _parse(context)
    if dockerfile is None:
        for finding in findings:
            yield refuse(finding, "the Dockerfile could not be read back")
        return
    by_stage: dict[int, list[tuple[Instruction, Finding]]] = {}
    for finding in findings:
        instruction = _holder(dockerfile, finding.line)
        if instruction is None or instruction.stage < 0:
            yield refuse(finding, "no instruction holds the finding's line")
            continue
        by_stage.setdefault(instruction.stage, []).append((instruction, finding))
    fixed: set[int] = set()  # stages whose image now runs bash -o pipefail
    starts = line_starts(context.text)
    newline = newline_of(context.text)
    for stage in dockerfile.stages:
        parent = dockerfile.stage_named(stage.base, before=stage.index)
        if parent is not None and parent.index in fixed:
            fixed.add(stage.index)
            continue  # already claimed by the parent stage's fix
        held = sorted(by_stage.get(stage.index, []), key=lambda pair: pair[0].line)
        if not held:
            continue
        reason = _refusal(dockerfile, stage.index, stage.base)
        if reason:
            for _, finding in held:
                yield refuse(finding, reason)
            continue
        fixed.add(stage.index)
        first = held[0][0]
        claims = [finding.fingerprint for _, finding in held]
        claims += [finding.fingerprint for index, pairs in by_stage.items() if index > stage.index
                   and _descends(dockerfile, index, stage.index) for _, finding in pairs]
        line_text = context.text[starts[first.line - 1]:starts[first.line - 1] + first.column - 1]
        indent = line_text if not line_text.strip() else ""
        position = starts[first.line - 1]
        yield Fix("SPK501", tuple(claims), (Edit(position, position, f"{indent}{PIPEFAIL_SHELL}{newline}"),),
                  f"line {first.line}: added {PIPEFAIL_SHELL} before the first piped {first.keyword} of stage "
                  f"{stage.name or stage.index}")


def _refusal(dockerfile: Dockerfile, stage: int, base: str) -> str:
    if dockerfile.escape != "\\":
        return "a Dockerfile with a custom escape character (a Windows image) has no bash"
    if any(instruction.keyword == "SHELL" and instruction.stage == stage for instruction in dockerfile.instructions):
        return "the stage sets its own SHELL: add -o pipefail to it by hand"
    if "$" in base or NO_BASH.search(base):
        return f"the base image {base} may have no bash: use `set -o pipefail` in a shell that has it, by hand"
    return ""


def _descends(dockerfile: Dockerfile, index: int, ancestor: int) -> bool:
    """Whether stage ``index`` is built, directly or through other stages, on stage ``ancestor``."""
    seen: set[int] = set()
    while index not in seen:
        seen.add(index)
        parent = dockerfile.stage_named(dockerfile.stages[index].base, before=index)
        if parent is None:
            return False
        if parent.index == ancestor:
            return True
        index = parent.index
    return False
