"""Fixes in YAML (and JSON) workloads and CI files: positions come from ruamel.yaml's round-trip
tree, the new text is spliced into the original at them.

SPK501: ``set -o pipefail; `` at the front of the ``bash -c`` string or CI step script.
SPK702: ``ttlSecondsAfterFinished: 86400`` where each kind reads it.
SPK202 (unsafe): ``value: <literal>`` -> ``valueFrom.secretKeyRef`` naming a placeholder Secret.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any
from typing import Iterator
from typing import Sequence

from spikelint.fix.context import FixContext
from spikelint.fix.context import Outcome
from spikelint.fix.context import refuse
from spikelint.fix.edits import Edit
from spikelint.fix.edits import Fix
from spikelint.fix.edits import line_starts
from spikelint.fix.edits import newline_of
from spikelint.fix.edits import offset
from spikelint.fix.yamltree import Placed
from spikelint.fix.yamltree import YamlError
from spikelint.fix.yamltree import document_at
from spikelint.fix.yamltree import is_flow
from spikelint.fix.yamltree import is_map
from spikelint.fix.yamltree import is_seq
from spikelint.fix.yamltree import key_position
from spikelint.fix.yamltree import load_stream
from spikelint.fix.yamltree import walk
from spikelint.model import Finding

TTL_KEY = "ttlSecondsAfterFinished"
TTL_SECONDS = 86400
PLACEHOLDER_SECRET = "replace-me-secret"
PIPEFAIL_SHELLS = frozenset(("bash", "zsh", "ksh"))  # `sh` is dash on Debian images: no pipefail there
SHELL_FLAGS = re.compile(r"^-[a-z]*c[a-z]*$")


def _documents(context: FixContext, findings: Sequence[Finding]) -> tuple[list[Any] | None, list[Outcome]]:
    try:
        return load_stream(context.text), []
    except YamlError as error:
        return None, [refuse(finding, str(error)) for finding in findings]


# --------------------------------------------------------------------------- SPK501


def _script_value(documents: list[Any], line: int, column: int) -> Placed | None:
    """The string value that holds ``line``/``column``: the last one starting at or before it."""
    document = document_at(documents, line)
    found = None
    for placed in walk(document) if document is not None else ():
        if isinstance(placed.value, str) and (placed.line, placed.column) <= (line, column):
            found = placed
    return found


def _shell_of(document: Any, placed: Placed) -> str | None:
    """For a container's ``command``/``args`` string: the shell that runs it (``""`` for a CI step)."""
    path = placed.path
    if "command" not in path and "args" not in path:
        return ""
    index = max(position for position, step in enumerate(path) if step in ("command", "args"))
    container = document
    for step in path[:index]:
        container = container[step]
    argv = [str(item) for key in ("command", "args") if is_seq(container.get(key)) for item in container[key]]
    script = str(placed.value)
    where = next((position for position, item in enumerate(argv) if item == script), None)
    if where is None:
        return None
    for item in reversed(argv[:where]):
        if not item.startswith("-"):
            return posixpath.basename(item)
    return None


def yaml_pipefail(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    documents, failed = _documents(context, findings)
    yield from failed
    if documents is None:
        return
    lines = context.text.splitlines(keepends=True)
    starts = line_starts(context.text)
    newline = newline_of(context.text)
    for finding in findings:
        placed = _script_value(documents, finding.line, finding.column)
        if placed is None:
            yield refuse(finding, "no string value holds the pipeline")
            continue
        shell = _shell_of(document_at(documents, finding.line), placed)
        if shell is None or shell and shell not in PIPEFAIL_SHELLS:
            yield refuse(finding, f"the script runs under {shell or 'an unknown shell'}, which may have no "
                                  f"pipefail: run it with bash -c (or -o pipefail) by hand")
            continue
        style = context.text[offset(context.text, placed.line, placed.column, starts):][:1]
        if style in ("|", ">"):
            body = next((number for number in range(placed.line, len(lines)) if lines[number].strip()), None)
            if body is None:
                yield refuse(finding, "the block scalar has no lines")
                continue
            indent = lines[body][:len(lines[body]) - len(lines[body].lstrip(" "))]
            text = f"{indent}set -o pipefail{';' if style == '>' else ''}{newline}"
            position = starts[body]
        else:
            position = offset(context.text, placed.line, placed.column, starts) + (1 if style in ("'", '"') else 0)
            text = "set -o pipefail; "
        yield Fix("SPK501", (finding.fingerprint,), (Edit(position, position, text),),
                  f"line {finding.line}: added `set -o pipefail` to the script of {'.'.join(map(str, placed.path))}")


# --------------------------------------------------------------------------- SPK702


def ttl_place(document: Any) -> tuple[str, ...]:
    """The mapping that holds ``ttlSecondsAfterFinished`` for this kind of object."""
    api_version = str(document.get("apiVersion", ""))
    if api_version.startswith("kubeflow.org/"):
        return ("spec", "runPolicy")
    if document.get("kind") == "CronJob":
        return ("spec", "jobTemplate", "spec")
    return ("spec",)


def yaml_ttl(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    documents, failed = _documents(context, findings)
    yield from failed
    if documents is None:
        return
    starts = line_starts(context.text)
    newline = newline_of(context.text)
    for finding in findings:
        document = next((document for document in documents if is_map(document) and "kind" in document
                         and key_position(document, "kind")[0] == finding.line), None)
        if document is None:
            yield refuse(finding, "no object's kind is at the finding's line")
            continue
        place = ttl_place(document)
        holder, parent, missing = document, None, list(place)
        while missing and is_map(holder.get(missing[0])):
            parent, holder = holder, holder[missing.pop(0)]
        if not missing and TTL_KEY in holder:
            yield refuse(finding, f"{'.'.join(place)}.{TTL_KEY} is written but is not a number of seconds")
            continue
        if parent is None or is_flow(holder) or not holder or (missing and missing[0] in holder):
            yield refuse(finding, f"{'.'.join(place)} is not a block mapping that a line can be added to")
            continue
        named = next(iter(holder))
        column = key_position(holder, str(named))[1]
        own_key = str(place[len(place) - len(missing) - 1])
        parent_line, parent_column = key_position(parent, own_key)
        if key_position(holder, str(named))[0] == parent_line:
            yield refuse(finding, f"{own_key} shares its line with its first key")
            continue
        step = max(column - parent_column, 1)
        nested = [f"{' ' * (column - 1 + step * depth)}{key}:" for depth, key in enumerate(missing)]
        nested.append(f"{' ' * (column - 1 + step * len(missing))}{TTL_KEY}: {TTL_SECONDS}")
        position = starts[parent_line] if parent_line < len(starts) else len(context.text)
        yield Fix("SPK702", (finding.fingerprint,), (Edit(position, position, newline.join(nested) + newline),),
                  f"line {parent_line + 1}: added {'.'.join(place)}.{TTL_KEY}: {TTL_SECONDS}")


# --------------------------------------------------------------------------- SPK202 (unsafe)


def yaml_secret_ref(context: FixContext, findings: Sequence[Finding]) -> Iterator[Outcome]:
    documents, failed = _documents(context, findings)
    yield from failed
    if documents is None:
        return
    starts = line_starts(context.text)
    newline = newline_of(context.text)
    for finding in findings:
        document = document_at(documents, finding.line)
        entry = next((placed.value for placed in (walk(document) if document is not None else ())
                      if is_map(placed.value) and "name" in placed.value and "value" in placed.value
                      and placed.value.lc.value("value")[0] + 1 == finding.line), None)
        if entry is None or is_flow(entry) or finding.end_line not in (None, finding.line):
            yield refuse(finding, "the literal is not a one-line `value:` of a block-style env entry")
            continue
        key_line, key_column = key_position(entry, "value")
        if key_line != finding.line:
            yield refuse(finding, "the literal is not on the line of its `value:` key")
            continue
        name = str(entry["name"])
        start = starts[key_line - 1] + key_column - 1
        line_end = starts[key_line] if key_line < len(starts) else len(context.text)
        end = len(context.text[:line_end].rstrip("\r\n"))
        pad = " " * (key_column - 1)
        replacement = newline.join(("valueFrom:", f"{pad}  secretKeyRef:", f"{pad}    name: {PLACEHOLDER_SECRET}",
                                    f"{pad}    key: {name}"))
        yield Fix("SPK202", (finding.fingerprint,), (Edit(start, end, replacement),),
                  f"line {key_line}: the literal of {name} replaced by a secretKeyRef (value removed)",
                  f"create the Secret and point the reference at it: kubectl create secret generic "
                  f"{PLACEHOLDER_SECRET} --from-literal={name}=…, rename {PLACEHOLDER_SECRET} at line "
                  f"{key_line + 2}, and revoke the old value: it stays in the Git history")
