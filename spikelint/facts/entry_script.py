"""What the Python script a launch line runs says, when it is in the scanned tree.

It resumes by itself — the resume a launch line does not show.

Many trainers find their own newest checkpoint (``get_last_checkpoint(output_dir)`` then
``trainer.train(resume_from_checkpoint=…)``, ``accelerator.load_state``, ``auto_resume``): the
job's command line then carries no resume flag, yet a relaunch continues.  When the script a
workload runs is in the scanned tree, such a call counts as its resume setting, located in the
script, so SPK402/SPK405 do not ask for a flag the program does not need.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING
from typing import cast
from typing import Sequence

from spikelint.model import FileKind
from spikelint.model import Located
from spikelint.facts.runconfig import RESUME
from spikelint.facts.runconfig import Setting
from spikelint.util.lazyre import lazy_regex

if TYPE_CHECKING:
    from spikelint.discovery.project import Project
    from spikelint.model import Document
    from spikelint.model import SourceFile
    from spikelint.model import Workload

# calls that load the newest checkpoint a run left behind (not ``resume_from_checkpoint=None``)
RESUMES_IN_CODE = lazy_regex(
    r"\bget_last_checkpoint\s*\(|\bresume_from_checkpoint\s*=\s*(?!None\b|False\b)[\w\"'.\[]|"
    r"\.load_state\s*\(|\bauto_?resume\w*\s*\(|\bfind_latest_(?:checkpoint|ckpt)\w*\s*\(|"
    r"\bckpt_path\s*=\s*[\"']last[\"']")
MAX_SCRIPT_CHARS = 512 * 1024
MAX_IMPORTS = 8
LOCAL_IMPORT = lazy_regex(r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w.]*))", re.MULTILINE)


def python_entry(words: Sequence[Located]) -> Located | None:
    """The ``.py`` script a launch line runs (``torchrun … train.py``), when it is written literally; else the
    module it runs (``python3 -m verl.trainer.main_ppo`` -> ``verl/trainer/main_ppo.py``)."""
    script = next((word for word in words if str(word.value).endswith(".py") and "$" not in str(word.value)
                   and not str(word.value).startswith("-")), None)
    if script is not None:
        return script
    for word, following in zip(words, words[1:]):
        module = str(following.value)
        if word.value == "-m" and MODULE.fullmatch(module):
            return following._replace(value=module.replace(".", "/") + ".py")
    return None


MODULE = lazy_regex(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # a dotted module of a package (not ``-m pip``)


def code_resumes(words: Sequence[Located], project: Project, near: Document | None) -> list[Setting]:
    """A resume setting where the script a launch line runs (or a module it imports) resumes by itself."""
    for path, text in entry_texts(words, project, near):
        key = f"entry_script.resume:{path}"  # many workloads run one script: each file is searched once
        if key not in project.derived:
            match = RESUMES_IN_CODE.search(text)
            project.derived[key] = _resume_setting(path, text, match) if match is not None else None
        found = cast("Setting | None", project.derived[key])
        if found is not None:
            return [found]
    return []


def _with_local_imports(entry: SourceFile, project: Project) -> list[tuple[str, str]]:
    """(path, text) of the entry script and of the modules of the tree it imports directly
    (``train_mem.py`` is often two lines that call ``train()`` from the package's ``train.py``).
    Each file is read once per run, and counted as read (and each module's name as looked up) by
    every file that asks: the result cache's dependencies."""
    key = f"entry_script.imports:{entry.path}"
    known = cast("tuple[list[tuple[str, str]], list[str]] | None", project.derived.get(key))
    if known is None:
        known = _read_with_local_imports(entry, project)
        project.derived[key] = known
    found, names = known
    project.touched.update(path for path, _ in found)
    project.looked_up.update(names)
    return found


def _read_with_local_imports(entry: SourceFile, project: Project) -> tuple[list[tuple[str, str]], list[str]]:
    text = project.text(entry)[:MAX_SCRIPT_CHARS]
    found = [(entry.path, text)]
    names = []
    for match in LOCAL_IMPORT.finditer(text):
        module = (match.group(1) or match.group(2)).replace(".", "/") + ".py"
        names.append(posixpath.basename(module))
        source = _script_source(module, project, None, whole=True)
        if source is not None and all(source.path != path for path, _ in found):
            found.append((source.path, project.text(source)[:MAX_SCRIPT_CHARS]))
        if len(found) > MAX_IMPORTS:
            break
    return found, names


def _resume_setting(path: str, text: str, match: re.Match[str]) -> Setting:
    line = text.count("\n", 0, match.start()) + 1
    column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
    where = Located(match.group(0), line, column, line, column + len(match.group(0)))
    return Setting(("resume_in_code",), True, where, frozenset((RESUME,)), True,
                   f"{posixpath.basename(path)} resumes by itself ({match.group(0).strip()}…)", config=path)


def module_source(path: str, project: Project) -> SourceFile | None:
    """The scanned file of a module's path (``pkg/sched.py`` for ``pkg.sched``): only a file ending in all of it."""
    return _script_source(path, project, None, whole=True)


def _script_source(reference: str, project: Project, near: Document | None, whole: bool = False) -> SourceFile | None:
    """The scanned Python file a launch line names: the longest matching path tail, nearest the launcher
    on a tie; ``None`` when two files match equally (no guess).  ``whole``: a module's path, which only
    a file ending in all of it is (``trainer.run`` is never another package's ``run.py``)."""
    wanted = [part for part in reference.strip("'\"").split("/") if part not in ("", ".")]
    if not wanted:
        return None
    home = posixpath.dirname(near.path).split("/") if near is not None else []
    ranked = []
    for source in project.named(wanted[-1]):
        if source.kind != FileKind.PYTHON:
            continue
        parts = source.path.split("/")
        matched = 0
        while matched < min(len(parts), len(wanted)) and parts[-1 - matched] == wanted[-1 - matched]:
            matched += 1
        if whole and matched < len(wanted):
            continue
        shared = 0
        while shared < min(len(home), len(parts) - 1) and home[shared] == parts[shared]:
            shared += 1
        ranked.append(((matched, shared), source))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
        return None
    return ranked[0][1]


def entry_texts(words: Sequence[Located], project: Project, near: Document | None) -> list[tuple[str, str]]:
    """(path, text) of the script a launch line runs and the local modules it imports; empty when the
    script is not in the tree (nothing can be said of it)."""
    entry = python_entry(words)
    if entry is None:
        return []
    # a word the line holds is a script's path; one made from ``-m``'s module is not among them
    source = _script_source(str(entry.value), project, near, whole=entry not in words)
    if source is None:
        return []
    return _with_local_imports(source, project)


def workload_entry_texts(workload: Workload, document: Document, project: Project) -> list[tuple[str, str]]:
    """(path, text) of the Python scripts a workload's containers launch that are in the tree, with the
    local modules they import."""
    from spikelint.facts.invocations import container_invocations

    found: list[tuple[str, str]] = []
    for container in workload.main_containers():
        for invocation in container_invocations(container, document):
            found.extend(entry_texts(invocation.words, project, document))
    return found
