"""SPK501 in a launch script: ``set -o pipefail`` after the shebang and the script's leading
``set`` lines, where a reader looks for the shell's options."""

from __future__ import annotations

import re
from typing import Iterator
from typing import Sequence

from spikelint.fix.context import FixContext
from spikelint.fix.context import Outcome
from spikelint.fix.context import refuse
from spikelint.fix.edits import Edit
from spikelint.fix.edits import Fix
from spikelint.fix.edits import line_starts
from spikelint.fix.edits import newline_of
from spikelint.model import Finding

PIPEFAIL_SHELLS = frozenset(("bash", "zsh", "ksh", "mksh", "ash", "busybox"))  # dash, a POSIX sh, has none
SHEBANG = re.compile(r"^#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-S\s+)?)?(?P<shell>[\w.-]+)")
SET_LINE = re.compile(r"^\s*set\s+[-+]")
# batch schedulers read their directives only up to the first command: nothing may be inserted above them
SCHEDULER_DIRECTIVE = re.compile(r"^\s*#(?:SBATCH|PBS|BSUB|COBALT|\$|FLUX:)\s")


def script_shell(first_line: str) -> str | None:
    """The shell a shebang names (``bash`` for ``#!/usr/bin/env bash``), ``None`` without one."""
    found = SHEBANG.match(first_line)
    return found.group("shell") if found else None


def insertion_line(lines: Sequence[str]) -> int:
    """The 0-based index of the line before which ``set -o pipefail`` goes: after the shebang and
    the leading comments, blank lines and ``set`` lines, when that block holds a ``set`` line — and
    always after the last ``#SBATCH`` (``#PBS``…) directive, which sbatch stops reading at the first
    command."""
    start = 1 if lines and lines[0].startswith("#!") else 0
    after = start
    for index in range(start, len(lines)):
        stripped = lines[index].strip()
        if SET_LINE.match(lines[index]) or SCHEDULER_DIRECTIVE.match(lines[index]):
            after = index + 1
        elif stripped and not stripped.startswith("#"):
            break
    return after


WRAPPED = ("the pipeline is the command of `sbatch --wrap`, which sbatch runs with /bin/sh in a job of its own: a "
           "`set -o pipefail` in this script does not reach it — run it as `sbatch --wrap \"bash -o pipefail -c "
           "'…'\"` (by hand: its quoting is yours)")


def _wrap_spans(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the ``sbatch --wrap`` commands of a script are written: (line, column) from and to."""
    from spikelint.documents.shell import find_wrap
    from spikelint.documents.shell import parse_shell

    spans = []
    for script in parse_shell(text).scripts():
        for command in script.commands():
            wrap = find_wrap(command.argv()) if command.written is not None else None
            if wrap is not None:
                word = command.words[wrap[0]]
                spans.append(((word.line, word.column), (word.end_line, word.end_column)))
    return spans


def script_pipefail(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    if not findings:
        return
    if "--wrap" in context.text:
        spans = _wrap_spans(context.text)
        wrapped = [finding for finding in findings
                   if any(start <= (finding.line, finding.column) < end for start, end in spans)]
        for finding in wrapped:
            yield refuse(finding, WRAPPED)
        findings = [finding for finding in findings if finding not in wrapped]
        if not findings:
            return
    lines = context.text.splitlines(keepends=True)
    shell = script_shell(lines[0]) if lines else None
    if shell is None or shell not in PIPEFAIL_SHELLS and not shell.startswith("bash"):
        reason = ("the script has no shebang, so it may run under sh (dash), which has no pipefail: start it with "
                  "#!/usr/bin/env bash, then fix again") if shell is None else (
                  f"the script runs under {shell}, which may have no pipefail (nor bash's PIPESTATUS): make it a "
                  "bash script (#!/usr/bin/env bash), then fix again")
        for finding in findings:
            yield refuse(finding, reason)
        return
    index = insertion_line([line.rstrip("\r\n") for line in lines])
    newline = newline_of(context.text)
    starts = line_starts(context.text)
    if index < len(lines):
        position, prefix = starts[index], ""
    else:  # a script of only a shebang and set lines
        position = len(context.text)
        prefix = "" if context.text.endswith(("\n", "\r")) else newline
    first = min(findings, key=lambda finding: finding.line)
    piped = sorted(finding.line for finding in findings)
    plural = "s" if len(piped) > 1 else ""
    yield Fix("SPK501", (first.fingerprint,), (Edit(position, position, f"{prefix}set -o pipefail{newline}"),),
              f"added `set -o pipefail` at line {index + 1}, before the pipeline{plural} at line{plural} "
              f"{', '.join(map(str, piped))}")
