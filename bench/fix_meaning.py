"""Does ``spikelint fix`` keep the meaning of every file it edits?  Run the real CLI on a Git copy
of a repository and check each edited file three ways.

Why: the fix's own proof (:mod:`spikelint.fix.apply`) compares the workloads the adapters read
before and after an edit.  That proof shares its readers with the fixes; this script repeats it
from outside and adds readers that share nothing with spikelint:

1. before the run, the normalised workloads (:func:`spikelint.fix.meaning.workloads_of`) of every
   Slurm batch script, shell script, Dockerfile and YAML/JSON file discovery finds, with the kinds
   spikelint's own discovery gives them;
2. ``spikelint fix .`` (``--unsafe``, ``--pins``) in the copy: exit code, wall time, its summary;
3. for every file ``git diff --name-only`` names: the rules fixed (the findings of
   ``spikelint check --format json`` before and after, by rule), and
   - ``meaning_change`` with those rules (what the fix's proof would say of the file as written),
   - an independent reading per kind: Slurm: the ``#SBATCH`` directives as sbatch reads them
     (column 0, only in the leading block of comment/blank lines, up to the first other line)
     must be the same list; Dockerfile: the instruction sequence must be the same apart from
     added ``SHELL`` instructions and the fixed rules' words; YAML/JSON: the data (PyYAML and
     ruamel.yaml safe loaders, every document) must be equal apart from what the fixed rules set;
   - an edit inventory: every changed span must be one of the texts the fixed rules insert.
4. a summary: files by kind, edited by kind, fixes by rule, meaning-equal count, every difference.

Run it on a clean Git copy (``git init && git add -A && git commit -m base``); it edits the copy:

    python bench/fix_meaning.py ../copies/gpu-recipes
    python bench/fix_meaning.py ../copies/kserve --unsafe --pins pins.txt --json out.json

Exit 0 when every edited file keeps its meaning, 1 when some file differs, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from spikelint.adapters.slurm import late_directives
from spikelint.adapters.slurm import leading_directives
from spikelint.config import load_config
from spikelint.files import discover
from spikelint.fix.meaning import meaning_change
from spikelint.fix.meaning import normalised
from spikelint.fix.meaning import workloads_of
from spikelint.model import FileKind

SPIKELINT = str(Path(sys.executable).with_name("spikelint"))
KINDS = ("slurm", "shell", "dockerfile", "yaml", "json", "notebook")

# what each fixed rule may insert (independent of spikelint's own patterns)
PIPEFAIL_WHOLE_LINE = re.compile(r"^[ \t]*set -o pipefail[ \t]*$")
PIPEFAIL_PREFIX = "set -o pipefail; "
DOCKER_PIPEFAIL_SHELL = re.compile(r'^[ \t]*SHELL \["/bin/bash", "-o", "pipefail", "-c"\][ \t]*$')
SHELL_ARRAY_PIPEFAIL = re.compile(r'^\s*,\s*"-o"\s*,\s*"pipefail"$')
DIGEST_TEXT = re.compile(r"^@sha256:[0-9a-f]{64}$")
TTL_LINE = re.compile(r"^[ \t]*(?:- )?ttlSecondsAfterFinished: \d+[ \t]*$")
RUN_POLICY_LINE = re.compile(r"^[ \t]*runPolicy:[ \t]*$")
PYTHON_BEFORE = re.compile(r"python[\w.]*$")
DIGEST_ANY = re.compile(r"@sha256:[0-9a-f]{64}")
UNBUFFERED_ANY = re.compile(r"(python[\w.]*) -u\b")


# --------------------------------------------------------------------------- running things


def run(command: list[str], cwd: Path) -> tuple[int, str, str, float]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def findings_by_file(repo: Path, extra: list[str]) -> Counter[tuple[str, str]]:
    """(path, rule) -> count, from the real ``spikelint check --format json``."""
    code, out, err, _ = run([SPIKELINT, "check", ".", "--format", "json", *extra], repo)
    if code not in (0, 1):
        raise SystemExit(f"spikelint check failed ({code}): {err.strip()[-2000:]}")
    return Counter((item["path"], item["rule"]) for item in json.loads(out)["findings"])


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


# --------------------------------------------------------------------------- kinds


def report_kind(kind: str, text: str) -> str | None:
    """The kind this report counts a file under (spikelint's kind; a shell file with ``#SBATCH``
    directives, read by spikelint's own Slurm reader, is a Slurm batch script)."""
    if kind == FileKind.SHELL:
        lines = text.splitlines()
        _, anchor = leading_directives(lines, 1, len(lines))
        return "slurm" if anchor is not None or late_directives(lines, 1, len(lines)) else "shell"
    return kind if kind in (FileKind.DOCKERFILE, FileKind.YAML, FileKind.JSON) else None


# --------------------------------------------------------------------------- independent readers


def sbatch_directives(text: str) -> tuple[list[str], int]:
    """The ``#SBATCH`` lines sbatch reads (``_opt_batch_script`` in src/sbatch/opt.c: a line counts
    when it *starts* with ``#SBATCH``, at column 0; other lines whose first non-blank character is
    ``#``, and blank lines, are skipped; the first other line ends the block),
    and the 1-based line that ends the block (0: the file is all block)."""
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            return found, number
        if line.startswith("#SBATCH"):  # sbatch compares the prefix only, at column 0
            found.append(line.rstrip())
    return found, 0


def docker_instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments with whitespace collapsed) of each instruction, in order: parser
    directives, comments, line continuations (the ``# escape=`` character) and heredocs read as
    BuildKit reads them."""
    lines = text.splitlines()
    escape = "\\"
    for line in lines:  # parser directives: leading `# key=value` lines
        match = re.match(r"^#\s*(\w+)\s*=\s*(\S+)\s*$", line)
        if match is None:
            break
        if match.group(1).lower() == "escape":
            escape = match.group(2)
    result: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [line]
        while parts[-1].rstrip().endswith(escape) and index < len(lines):
            parts[-1] = parts[-1].rstrip()[:-1]
            while index < len(lines) and (not lines[index].strip() or lines[index].lstrip().startswith("#")):
                index += 1  # comments and blank lines inside a continuation are dropped
            if index < len(lines):
                parts.append(lines[index])
                index += 1
        logical = " ".join(part.strip() for part in parts)
        for marker in re.findall(r"<<-?[\"']?(\w+)[\"']?", logical):
            body: list[str] = []
            while index < len(lines) and lines[index].strip() != marker:
                body.append(lines[index])
                index += 1
            index += 1
            logical += "\n" + "\n".join(body)
        keyword, _, arguments = logical.strip().partition(" ")
        result.append((keyword.upper(), " ".join(arguments.split())))
    return result


def load_all(kind: str, text: str) -> dict[str, Any]:
    """Every document, by loader name (PyYAML and ruamel.yaml safe; json); a loader that fails gives
    its error text."""
    loaded: dict[str, Any] = {}
    if kind == "json":
        try:
            loaded["json"] = json.loads(text)
        except ValueError as error:
            loaded["json"] = f"<error: {error}>"
        return loaded
    import yaml
    from ruamel.yaml import YAML

    try:
        loaded["pyyaml"] = list(yaml.safe_load_all(text))
    except Exception as error:  # noqa: BLE001 - a template that is not YAML
        loaded["pyyaml"] = f"<error: {type(error).__name__}>"
    try:
        loaded["ruamel"] = list(YAML(typ="safe", pure=True).load_all(text))
    except Exception as error:  # noqa: BLE001
        loaded["ruamel"] = f"<error: {type(error).__name__}>"
    return loaded


def strip_fixed_text(text: str, rules: set[str]) -> str:
    """``text`` without what the fixed rules insert into strings."""
    if "SPK501" in rules:
        text = re.sub(r"(?m)^[ \t]*set -o pipefail;?[ \t]*\n", "", text).replace(PIPEFAIL_PREFIX, "")
    if "SPK502" in rules:
        text = UNBUFFERED_ANY.sub(r"\1", text)
    if rules & {"SPK101", "SPK102"}:
        text = DIGEST_ANY.sub("", text)
    return text


def data_differences(old: Any, new: Any, rules: set[str], where: str = "") -> list[str]:
    """Where the data differ, apart from what the fixed rules set."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in old.keys() - new.keys():
            if not (key == "value" and "SPK202" in rules and "valueFrom" in new):
                found.append(f"{where}/{key} removed")
        for key in new.keys() - old.keys():
            allowed = (key == "ttlSecondsAfterFinished" and "SPK702" in rules) or (
                key == "valueFrom" and "SPK202" in rules and "value" in old) or (
                # Kubeflow jobs keep the TTL under runPolicy, which the fix creates when it is missing
                key == "runPolicy" and "SPK702" in rules and isinstance(new[key], dict)
                and set(new[key]) == {"ttlSecondsAfterFinished"})
            if not allowed:
                found.append(f"{where}/{key} added")
        for key in old.keys() & new.keys():
            found.extend(data_differences(old[key], new[key], rules, f"{where}/{key}"))
        return found
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{where} has {len(old)} -> {len(new)} items"]
        return [item for index, (first, second) in enumerate(zip(old, new))
                for item in data_differences(first, second, rules, f"{where}[{index}]")]
    if old == new:
        return []
    if isinstance(old, str) and isinstance(new, str) and \
            strip_fixed_text(new, rules) == strip_fixed_text(old, rules):  # python -u already there stays
        return []
    return [f"{where} value changed"]


def docker_differences(old: list[tuple[str, str]], new: list[tuple[str, str]], rules: set[str]) -> list[str]:
    found: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert" and all(keyword == "SHELL" for keyword, _ in new[j1:j2]) and "SPK501" in rules:
            stage_started = any(keyword == "FROM" for keyword, _ in new[:j1])
            if not stage_started:
                found.append(f"SHELL added before the first FROM (instruction {j1 + 1})")
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for (keyword, before), (keyword2, after) in zip(old[i1:i2], new[j1:j2]):
                if keyword != keyword2:
                    found.append(f"{keyword} -> {keyword2}")
                elif keyword == "SHELL" and "SPK501" in rules and \
                        re.sub(r',\s*"-o",\s*"pipefail"', "", after) == before:
                    continue
                elif strip_fixed_text(after, rules) != before:
                    found.append(f"{keyword} changed: {before[:60]!r} -> {after[:60]!r}")
            continue
        found.append(f"{tag} of instructions {i1 + 1}-{i2} -> {j1 + 1}-{j2}: "
                     f"{[k for k, _ in old[i1:i2]]} -> {[k for k, _ in new[j1:j2]]}")
    return found


NO_BASH_BASE = re.compile(r"(?:^|[/:_.-])(?:alpine|busybox|distroless|scratch|wolfi|chainguard)(?:$|[/:_.@-])", re.I)


def bashless_stage_shell(new: list[tuple[str, str]], old: list[tuple[str, str]]) -> list[str]:
    """Added SHELL instructions naming /bin/bash in a stage whose image descends (through stage
    names) from a base known to ship without bash: every later RUN of the stage would fail."""
    added = Counter(new) - Counter(old)
    roots: dict[str, str] = {}
    root = ""
    found = []
    for keyword, arguments in new:
        if keyword == "FROM":
            words = [word for word in arguments.split() if not word.startswith("--")]
            base = words[0] if words else ""
            root = roots.get(base.lower(), base)
            if len(words) >= 3 and words[1].lower() == "as":
                roots[words[2].lower()] = root
        elif keyword == "SHELL" and added[(keyword, arguments)] and "bash" in arguments and NO_BASH_BASE.search(root):
            found.append(f"SHELL naming bash added in a stage built on {root}, which has no bash")
    return found


def shell_form_after_shell(new: list[tuple[str, str]], old: list[tuple[str, str]]) -> list[str]:
    """Shell-form CMD/ENTRYPOINT/HEALTHCHECK that an added SHELL now governs (the container's own
    command runs under ``bash -o pipefail`` instead of ``/bin/sh``: intended? it is a change)."""
    added = Counter(new) - Counter(old)
    notes = []
    shell_added = False
    for keyword, arguments in new:
        if keyword == "FROM":
            shell_added = False
        if keyword == "SHELL" and added[(keyword, arguments)]:
            shell_added = True
        if shell_added and keyword in ("CMD", "ENTRYPOINT", "HEALTHCHECK") and not arguments.startswith("["):
            if keyword != "HEALTHCHECK" or "CMD" in arguments and "CMD [" not in arguments:
                notes.append(f"shell-form {keyword} now runs under the added SHELL: {arguments[:60]!r}")
    return notes


def inserted_line(line: str, rules: set[str]) -> bool:
    """A whole line one of the fixed rules inserts."""
    line = line.rstrip("\r\n")
    return bool((PIPEFAIL_WHOLE_LINE.match(line) or DOCKER_PIPEFAIL_SHELL.match(line)) and "SPK501" in rules
                or (TTL_LINE.match(line) or RUN_POLICY_LINE.match(line)) and "SPK702" in rules)


def edit_inventory(old: str, new: str, rules: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(every edit as 'line N: +text', the edits no fixed rule explains, the SPK202 rewrites that
    only the data comparison judges)."""
    edits: list[str] = []
    odd: list[str] = []
    lenient: list[str] = []  # SPK202 rewrites lines: left to the data comparison
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for opcode, i1, i2, j1, j2 in matcher.get_opcodes():
        tag: str = opcode
        if tag == "equal":
            continue
        if tag == "replace":  # a whole inserted line next to a line edited in place: split them
            kept = [number for number in range(j1, j2) if not inserted_line(new_lines[number], rules)]
            for number in range(j1, j2):
                if number not in kept:
                    edits.append(f"line {number + 1}: +{new_lines[number].strip()!r}")
            if len(kept) == i2 - i1:
                tag, j_numbers = "inplace", kept
            else:
                j_numbers = []
        if tag == "insert":
            for number in range(j1, j2):
                added = new_lines[number].rstrip("\r\n")
                edits.append(f"line {number + 1}: +{added.strip()!r}")
                if not inserted_line(added, rules):
                    (lenient if "SPK202" in rules else odd).append(f"line {number + 1}: inserted {added.strip()[:80]!r}")
            continue
        if tag == "inplace":
            for first, number in zip(old_lines[i1:i2], j_numbers):
                second = new_lines[number]
                inner = difflib.SequenceMatcher(a=first, b=second, autojunk=False)
                for tag2, a1, a2, b1, b2 in inner.get_opcodes():
                    if tag2 == "equal":
                        continue
                    piece = second[b1:b2]
                    edits.append(f"line {number + 1} col {b1 + 1}: {tag2} {first[a1:a2]!r} -> {piece!r}")
                    ok = tag2 == "insert" and (
                        piece == " -u" and "SPK502" in rules and PYTHON_BEFORE.search(second[:b1])
                        or piece.strip() == PIPEFAIL_PREFIX.strip() and "SPK501" in rules
                        or SHELL_ARRAY_PIPEFAIL.match(piece) and "SPK501" in rules
                        or DIGEST_TEXT.match(piece) and rules & {"SPK101", "SPK102"})
                    if not ok:
                        (lenient if "SPK202" in rules else odd).append(f"line {number + 1} col {b1 + 1}: {tag2} {first[a1:a2][:40]!r} -> {piece[:40]!r}")
            continue
        edits.append(f"lines {i1 + 1}-{i2} -> {j1 + 1}-{j2}: {tag}")
        (lenient if "SPK202" in rules else odd).append(f"lines {i1 + 1}-{i2}: {tag} of whole lines")
    return edits, odd, lenient


def notebook_differences(old: str, new: str) -> list[str]:
    """A notebook whose outputs were cleared (SPK207) must keep its cells, their types, sources and
    metadata; only outputs and execution counts may change."""
    try:
        first, second = json.loads(old), json.loads(new)
    except ValueError as error:
        return [f"notebook does not load: {error}"]
    cells, others = first.get("cells", []), second.get("cells", [])
    if len(cells) != len(others):
        return [f"cells {len(cells)} -> {len(others)}"]
    found = []
    for index, (one, two) in enumerate(zip(cells, others)):
        for key in (one.keys() | two.keys()) - {"outputs", "execution_count"}:
            if one.get(key) != two.get(key):
                found.append(f"cell {index + 1}: {key} changed")
        if two.get("outputs") or two.get("execution_count") is not None:
            found.append(f"cell {index + 1}: outputs left")
    if {k: v for k, v in first.items() if k != "cells"} != {k: v for k, v in second.items() if k != "cells"}:
        found.append("notebook metadata changed")
    return found[:5]


# --------------------------------------------------------------------------- one file


def compare(path: str, kind: str, spk_kind: str, old: str, new: str, rules: set[str], config: Any,
            before_workloads: list[Any]) -> dict[str, Any]:
    after_workloads = workloads_of(path, spk_kind, new, config)
    differences: list[str] = []
    notes: list[str] = []
    proof = meaning_change(before_workloads, after_workloads, rules)
    if proof:
        differences.append(f"meaning_change: {proof}")
    if before_workloads and rules and normalised(before_workloads, (), set()) == normalised(after_workloads, (), set()):
        notes.append("workloads equal even without erasing the fixed property")
    if kind == "slurm" or kind == "shell":
        old_directives, old_end = sbatch_directives(old)
        new_directives, new_end = sbatch_directives(new)
        if old_directives != new_directives:
            lost = [line for line in old_directives if line not in new_directives]
            differences.append(f"#SBATCH directives sbatch reads: {len(old_directives)} -> {len(new_directives)}"
                               + (f" (no longer read: {lost[:3]})" if lost else ""))
        if kind == "slurm" and old_directives:
            last_directive = max(number for number, line in enumerate(new.splitlines(), 1)
                                 if line.rstrip() in new_directives) if new_directives else 0
            for number, line in enumerate(new.splitlines(), 1):
                if PIPEFAIL_WHOLE_LINE.match(line) and number < last_directive:
                    differences.append(f"line {number}: set -o pipefail above the last #SBATCH line {last_directive}")
        if old.splitlines()[:1] != new.splitlines()[:1]:
            differences.append("the shebang line changed")
    elif kind == "dockerfile":
        old_seq, new_seq = docker_instructions(old), docker_instructions(new)
        differences.extend(f"instructions: {item}" for item in docker_differences(old_seq, new_seq, rules))
        differences.extend(bashless_stage_shell(new_seq, old_seq))
        notes.extend(shell_form_after_shell(new_seq, old_seq))
    else:
        old_data, new_data = load_all(kind, old), load_all(kind, new)
        for loader, data in old_data.items():
            other = new_data[loader]
            if isinstance(data, str) or isinstance(other, str):
                if isinstance(data, str) != isinstance(other, str) or not isinstance(data, str):
                    differences.append(f"{loader}: loads {'' if not isinstance(data, str) else 'not '}before, "
                                       f"{'' if not isinstance(other, str) else 'not '}after")
                else:
                    notes.append(f"{loader} reads neither version (template?): text inventory only")
                continue
            differences.extend(f"{loader}: {item}" for item in data_differences(data, other, rules)[:5])
    edits, odd, lenient = edit_inventory(old, new, rules)
    notes.extend(f"SPK202 rewrite, judged by the data comparison: {item}" for item in lenient[:3])
    differences.extend(f"edit not explained by {sorted(rules) or 'any fixed rule'}: {item}" for item in odd[:5])
    return {"path": path, "kind": kind, "rules": sorted(rules), "edits": edits, "differences": differences,
            "notes": notes, "workloads": len(before_workloads)}


# --------------------------------------------------------------------------- the run


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="a clean Git copy of the repository (it is edited)")
    parser.add_argument("--unsafe", action="store_true", help="run `spikelint fix --unsafe`")
    parser.add_argument("--pins", help="pins file passed to `fix --unsafe --pins`")
    parser.add_argument("--json", type=Path, help="write the per-file results here (outside the copy)")
    parser.add_argument("--show-edits", action="store_true", help="print every edit of every file")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    pins = str(Path(args.pins).resolve()) if args.pins else None  # before the chdir below
    if git(repo, "status", "--porcelain"):
        print(f"{repo}: the work tree is not clean; commit or reset it first", file=sys.stderr)
        return 2
    os.chdir(repo)  # the configuration is found from the current folder, as the CLI finds it
    config = load_config(None, repo)
    base = Path(config.root) if config.path is not None else None
    discovery = discover(["."], cwd=repo, exclude=config.exclude, max_file_size=config.max_file_size, base=base)

    # 1. before
    texts: dict[str, str] = {}
    kinds: dict[str, tuple[str, str]] = {}
    workloads: dict[str, list[Any]] = {}
    for source in discovery.files:
        try:
            text = Path(source.abspath).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        kind = report_kind(source.kind, text)
        if kind is None:
            continue
        texts[source.path], kinds[source.path] = text, (kind, source.kind)
        workloads[source.path] = workloads_of(source.path, source.kind, text, config)
    checked = Counter(kind for kind, _ in kinds.values())
    checked["notebook"] = sum(1 for source in discovery.files if source.kind == FileKind.NOTEBOOK)
    with_workloads = Counter(kinds[path][0] for path, found in workloads.items() if found)
    findings_before = findings_by_file(repo, [])

    # 2. the real fix
    command = [SPIKELINT, "fix", "."] + (["--unsafe"] if args.unsafe else []) + (
        ["--pins", pins] if pins else [])
    code, out, err, seconds = run(command, repo)
    log = Path(tempfile.mkdtemp(prefix="fix_meaning-")) / "fix-output.txt"
    log.write_text(f"$ {shlex.join(command)}\n--- stdout\n{out}\n--- stderr\n{err}", encoding="utf-8")
    claimed: dict[str, Counter[str]] = {}
    for line in err.splitlines():
        match = re.match(r"spikelint: fixed (.+?): (SPK\d+) ", line)
        if match:
            claimed.setdefault(match.group(1), Counter())[match.group(2)] += 1

    # 3. after
    findings_after = findings_by_file(repo, [])
    changed = [line for line in git(repo, "diff", "--name-only").splitlines() if line]
    untracked = [line for line in git(repo, "ls-files", "--others", "--exclude-standard").splitlines() if line]
    results = []
    for path in changed:
        new = (repo / path).read_bytes().decode("utf-8")
        gone = Counter({rule: findings_before[(p, rule)] - findings_after[(p, rule)]
                        for p, rule in findings_before if p == path})
        rules = {rule for rule, count in gone.items() if count > 0}
        if path in kinds:
            kind, spk_kind = kinds[path]
            result = compare(path, kind, spk_kind, texts[path], new, rules, config, workloads[path])
        else:
            old = git(repo, "show", f"HEAD:{path}")
            result = {"path": path, "kind": "notebook" if path.endswith(".ipynb") else "other",
                      "rules": sorted(rules), "edits": [], "notes": [], "workloads": 0,
                      "differences": notebook_differences(old, new) if path.endswith(".ipynb")
                      else ["an edited file of a kind this script does not compare"]}
        result["fixed"] = dict(+gone)
        appeared = {rule: findings_after[(p, rule)] - findings_before[(p, rule)]
                    for p, rule in findings_after if p == path and findings_after[(p, rule)] > findings_before[(p, rule)]}
        if appeared:
            result["differences"].append(f"new findings after the fix: {appeared}")
        if dict(claimed.get(path, Counter())) != result["fixed"]:
            result["notes"].append(f"fix said {dict(claimed.get(path, Counter()))}, check says {result['fixed']}")
        results.append(result)
    stray = sorted({path for path, _ in findings_before} - set(changed))
    vanished = {key: count - findings_after[key] for key, count in findings_before.items()
                if key[0] in stray and findings_after[key] < count}

    # 4. summary
    edited = Counter(result["kind"] for result in results)
    fixes: Counter[str] = Counter()
    for result in results:
        fixes.update(result.get("fixed", {}))
    equal = sum(1 for result in results if not result["differences"])
    print(f"repository   {repo}  (base {git(repo, 'rev-parse', '--short', 'HEAD').strip()})")
    print(f"command      {shlex.join(command)}  -> exit {code}, {seconds:.1f} s  (output: {log})")
    print(f"fix summary  {next((line for line in reversed(err.splitlines()) if line.startswith('spikelint: fixed')), '-')}")
    print(f"{'kind':<12}{'checked':>9}{'with workloads':>16}{'edited':>8}")
    for kind in KINDS:
        print(f"{kind:<12}{checked[kind]:>9}{with_workloads[kind]:>16}{edited[kind]:>8}")
    if edited["other"]:
        print(f"{'other':<12}{'':>9}{'':>16}{edited['other']:>8}")
    print("fixes by rule  " + (", ".join(f"{rule} {count}" for rule, count in sorted(fixes.items())) or "none"))
    print(f"meaning equal  {equal} of {len(results)} edited files")
    if untracked:
        print(f"new files      {untracked[:5]}")
    if vanished:
        print(f"findings gone from files not edited: {dict(list(vanished.items())[:5])}")
    for result in results:
        if result["differences"] or result["notes"] or args.show_edits:
            print(f"- {result['path']} [{result['kind']}, fixed {result.get('fixed', {})}]")
            for item in result["differences"]:
                print(f"    DIFF  {item}")
            for item in result["notes"]:
                print(f"    note  {item}")
            for item in result["edits"] if args.show_edits else ():
                print(f"    edit  {item}")
    if args.json:
        args.json.write_text(json.dumps({"repo": str(repo), "command": command, "exit": code, "seconds": seconds,
                                         "checked": checked, "edited": edited, "fixes": fixes, "files": results},
                                        indent=1), encoding="utf-8")
    return 1 if equal < len(results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
