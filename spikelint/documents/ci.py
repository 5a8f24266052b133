"""CI pipeline files -> the shell scripts their steps run, parsed with positions in the file.

GitHub Actions workflows (``jobs.<id>.steps[].run``) and composite actions
(``runs.steps[].run``), and GitLab CI jobs (``script``/``before_script``/``after_script``,
also under ``default``).  Each step is parsed with the options its runner starts the shell
with, because that decides whether a pipe loses a failure:

- GitHub: no ``shell`` (and no ``defaults.run.shell``) runs ``bash -e {0}`` — errexit without
  pipefail; ``shell: bash`` runs ``bash --noprofile --norc -eo pipefail {0}``; ``shell: sh``
  runs ``sh -e {0}``; a custom ``shell: bash -x {0}`` uses exactly its options; ``pwsh``,
  ``python``, ``cmd`` and Windows runners are not POSIX shell and are skipped.
- GitLab: the runner's generated bash script starts with ``set -o pipefail`` (when the shell
  has it) and ``set -o errexit``, and runs every line of ``script`` in that one shell.

``${{ … }}`` expressions are masked with underscores of the same length before parsing (the
runner substitutes them first), so positions stay exact; ``Word.raw`` holds the masked text.
"""

from __future__ import annotations

import re
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.documents.shell import Script
from spikelint.documents.shell import find_shell_call
from spikelint.documents.shell import parse_shell
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import Node

_EXPRESSION = lazy_regex(r"\$\{\{.*?\}\}", re.S)
_GITLAB_NAME = lazy_regex(r"(?:^|/)(?:\.gitlab-ci\.ya?ml|[^/]*\.gitlab-ci\.ya?ml|\.gitlab/ci/[^/]*\.ya?ml)$")
_GITHUB_WORKFLOW = lazy_regex(r"(?:^|/)\.github/workflows/[^/]+\.ya?ml$")
_GITHUB_ACTION = lazy_regex(r"(?:^|/)action\.ya?ml$")
GITLAB_SCRIPT_KEYS = ("before_script", "script", "after_script")
GITLAB_RESERVED = frozenset({"stages", "variables", "include", "workflow", "image", "services", "cache",
                             "before_script", "after_script", "types", "pages"})
GITHUB_DEFAULT = ("bash", "-e")  # what a step with no `shell` runs on a Linux or macOS runner
GITHUB_SHELLS = {"bash": ("bash", "--noprofile", "--norc", "-eo", "pipefail"), "sh": ("sh", "-e")}


class CiScript(NamedTuple):
    """One CI step's shell script, where it is, and the environment its runner gives it."""

    script: Script
    node: Node  # the scalar the script was read from
    system: str  # "github" or "gitlab"
    env: dict[str, str]  # variables set for the step (workflow/job/step `env`, GitLab `variables`)


def ci_system(document: Document) -> str:
    """``github``, ``gitlab`` or ``""`` for a YAML document, from its path and shape."""
    path = document.path.replace("\\", "/")
    root = document.trees[0] if document.trees else None
    if root is None or root.kind != "map":
        return ""
    if _GITHUB_WORKFLOW.search(path) and root.get("jobs") is not None:
        return "github"
    if _GITHUB_ACTION.search(path) and root.get("runs", "steps") is not None:
        return "github"
    if _GITLAB_NAME.search(path):
        return "gitlab"
    return ""


def ci_scripts(document: Document) -> Iterator[CiScript]:
    """Every shell script the CI file's steps run, parsed (nothing for other files)."""
    system = ci_system(document)
    if system == "github":
        yield from _github(document)
    elif system == "gitlab":
        yield from _gitlab(document)


# --------------------------------------------------------------------------- GitHub Actions


def _env(node: Node | None) -> dict[str, str]:
    if node is None or node.kind != "map":
        return {}
    return {key: str(child.value) for key, child in node.items() if child.kind == "scalar"}


def _default_shell(node: Node | None) -> str | None:
    value = node.scalar("defaults", "run", "shell") if node is not None else None
    return value if isinstance(value, str) else None


def _github(document: Document) -> Iterator[CiScript]:
    root = document.trees[0]
    lines = document.text.split("\n")
    workflow_env = _env(root.get("env"))
    jobs = root.get("jobs")
    groups: list[tuple[Node, str | None, dict[str, str], bool]] = []
    if jobs is not None and jobs.kind == "map":
        for _, job in jobs.items():
            if job.kind != "map":
                continue
            runs_on = job.get("runs-on")
            windows = runs_on is not None and "windows" in str(runs_on.to_python() if runs_on.kind != "scalar"
                                                               else runs_on.value).lower()
            shell = _default_shell(job) or _default_shell(root)
            groups.append((job, shell, {**workflow_env, **_env(job.get("env"))}, windows))
    runs = root.get("runs")
    if runs is not None and runs.kind == "map":
        groups.append((runs, None, {}, False))
    for holder, shell, env, windows in groups:
        steps = holder.get("steps")
        if steps is None or steps.kind != "seq":
            continue
        for step in steps.value:
            run = step.get("run") if step.kind == "map" else None
            if run is None or run.kind != "scalar" or not isinstance(run.value, str):
                continue
            step_shell = step.scalar("shell")
            argv = _github_shell(step_shell if isinstance(step_shell, str) else shell, windows)
            if argv is None:
                continue
            call = find_shell_call(argv)
            if call is None:
                continue
            script = parse_scalar(run, lines, pipefail=call.pipefail, errexit=call.errexit)
            yield CiScript(script, run, "github", {**env, **_env(step.get("env"))})


def _github_shell(shell: str | None, windows: bool) -> Sequence[str] | None:
    """The argv the runner starts for a step's ``shell``; None when it is not a POSIX shell."""
    if shell is None:
        return None if windows else GITHUB_DEFAULT
    if shell in GITHUB_SHELLS:
        return GITHUB_SHELLS[shell]
    words = [word for word in shell.split() if word != "{0}"]
    return words if words and find_shell_call(words) is not None else None


# --------------------------------------------------------------------------- GitLab CI


def _gitlab(document: Document) -> Iterator[CiScript]:
    lines = document.text.split("\n")
    for root in document.trees:
        if root.kind != "map":
            continue
        global_env = _env(root.get("variables"))
        for name, job in root.items():
            if job.kind != "map" or (name in GITLAB_RESERVED and name != "default"):
                continue
            env = {**global_env, **_env(job.get("variables"))}
            for key in GITLAB_SCRIPT_KEYS:
                for line in _script_lines(job.get(key)):
                    script = parse_scalar(line, lines, pipefail=True, errexit=True)
                    yield CiScript(script, line, "gitlab", env)


def _script_lines(node: Node | None) -> Iterator[Node]:
    """A GitLab ``script``: one string or a list of strings (lists may nest, from `!reference`)."""
    if node is None:
        return
    if node.kind == "scalar" and isinstance(node.value, str):
        yield node
    elif node.kind == "seq":
        for child in node.value:
            yield from _script_lines(child)


# --------------------------------------------------------------------------- positions


def mask_expressions(text: str) -> str:
    """``${{ … }}`` replaced by underscores of the same length (newlines kept)."""
    return _EXPRESSION.sub(lambda match: re.sub(r"[^\n]", "_", match.group()), text)


def parse_scalar(node: Node, lines: list[str], *, pipefail: bool, errexit: bool) -> Script:
    """Parse a YAML scalar holding shell, with positions in the file.

    A literal block (``|``) starts on the line after its indicator, indented like its first
    non-empty line; a plain or quoted one-line scalar starts at the node (after the quote).
    Folded and multi-line flow scalars are parsed from their value: lines past the node's
    last line are clamped to it by the caller's placement.
    """
    text = mask_expressions(str(node.value))
    indicator = _char(lines, node.line, node.column)
    if indicator in "|>" and indicator:
        first = node.line + 1
        indent = 0
        for number in range(node.line, min(len(lines), node.end_line)):
            if lines[number].strip():
                indent = len(lines[number]) - len(lines[number].lstrip(" "))
                first = number + 1
                break
        return parse_shell(text, first, indent + 1, indent=indent, pipefail=pipefail, errexit=errexit)
    shift = 1 if indicator in ("'", '"') else 0
    return parse_shell(text, node.line, node.column + shift, pipefail=pipefail, errexit=errexit)


def _char(lines: list[str], line: int, column: int) -> str:
    if 0 < line <= len(lines) and 0 < column <= len(lines[line - 1]):
        return lines[line - 1][column - 1]
    return ""
