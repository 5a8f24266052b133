"""SPK108: a committed pickle or checkpoint that runs code when it is loaded.

The globals come from the file's opcodes (:mod:`spikelint.documents.pickled`); nothing is unpickled.
Only the callables that do something on their own when a load calls them are reported — run a
command, evaluate code, import a module, open a file, a socket or a browser, load another pickle — as
picklescan and modelscan list them.  The classes a model's pickle rebuilds (tensors, NumPy arrays,
``OrderedDict``, a project's own config class) are left alone: loading those is SPK107's concern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Iterator

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import check
from spikelint.documents.bounded import may_hold_pickle
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem

if TYPE_CHECKING:  # pickletools and zipfile (25 ms) load only where a pickle was read
    from spikelint.documents.pickled import PickleImport
    from spikelint.documents.pickled import PickleScan

EVERYTHING = "*"
# module -> what its callables do when a load calls them, and which of them ("*": all)
RUNS_CODE: dict[str, tuple[str, frozenset[str] | str]] = {
    "builtins": ("evaluates code, imports a module or opens a file",
                 frozenset(("eval", "exec", "execfile", "compile", "open", "breakpoint", "__import__", "getattr",
                            "apply", "input", "globals", "vars", "setattr", "delattr"))),
    "os": ("runs a command or changes files", EVERYTHING),
    "posix": ("runs a command or changes files", EVERYTHING),
    "nt": ("runs a command or changes files", EVERYTHING),
    "subprocess": ("runs a command", EVERYTHING),
    "pty": ("runs a command", EVERYTHING),
    "commands": ("runs a command", EVERYTHING),
    "sys": ("changes the interpreter", EVERYTHING),
    "shutil": ("copies or deletes files", EVERYTHING),
    "runpy": ("runs a module", EVERYTHING),
    "importlib": ("imports a module", EVERYTHING),
    "ctypes": ("calls native code", EVERYTHING),
    "code": ("evaluates code", EVERYTHING),
    "codeop": ("compiles code", EVERYTHING),
    "timeit": ("evaluates code", EVERYTHING),
    "marshal": ("loads code objects", EVERYTHING),
    "types": ("builds code and functions", frozenset(("CodeType", "FunctionType", "LambdaType"))),
    "pickle": ("loads another pickle", EVERYTHING),
    "_pickle": ("loads another pickle", EVERYTHING),
    "dill": ("loads another pickle", EVERYTHING),
    "cloudpickle": ("loads another pickle", EVERYTHING),
    "joblib": ("loads another pickle", frozenset(("load",))),
    "torch.serialization": ("loads another checkpoint", frozenset(("load",))),
    "torch": ("loads another checkpoint", frozenset(("load",))),
    "numpy": ("loads another pickle", frozenset(("load",))),
    "numpy.testing._private.utils": ("evaluates code", frozenset(("runstring",))),
    "operator": ("calls a method by name", frozenset(("attrgetter", "methodcaller"))),
    "socket": ("opens a network connection", EVERYTHING),
    "webbrowser": ("opens a browser", EVERYTHING),
    "httplib": ("makes a network request", EVERYTHING),
    "http.client": ("makes a network request", EVERYTHING),
    "urllib.request": ("makes a network request", EVERYTHING),
    "requests": ("makes a network request", EVERYTHING),
    "aiohttp": ("makes a network request", EVERYTHING),
    "asyncio": ("runs a command or a coroutine", EVERYTHING),
    "bdb": ("runs a debugger", EVERYTHING),
    "pdb": ("runs a debugger", EVERYTHING),
    "pydoc": ("runs a pager command", frozenset(("pipepager", "locate"))),
    "venv": ("creates an environment", EVERYTHING),
    "pip": ("installs packages", EVERYTHING),
    "torch._inductor.codecache": ("compiles and loads code", EVERYTHING),
}


def what_it_runs(found: PickleImport) -> str | None:
    """What calling this global does, when it is one a load must not call; None for a harmless one."""
    parts = found.module.split(".")
    for length in range(len(parts), 0, -1):  # os.path's functions are os's; torch.serialization has its own entry
        entry = RUNS_CODE.get(".".join(parts[:length]))
        if entry is None:
            continue
        does, names = entry
        if names == EVERYTHING or (length == len(parts) and found.name.split(".")[0] in names):
            return does
        return None
    return None


def pickle_findings(scan: PickleScan, text: str) -> Iterator[Problem]:
    """One finding per global that runs code, at its opcode's place in the file."""
    from spikelint.documents.pickled import import_name
    from spikelint.secrets.text import LineIndex

    index: LineIndex | None = None
    seen: set[str] = set()
    for found in scan.imports:
        does = what_it_runs(found)
        name = import_name(found)
        if does is None or name in seen:
            continue
        seen.add(name)
        index = index or LineIndex(text)
        line, column = index.position(min(found.offset, len(text)))
        yield Problem("SPK108", line, column,
                      f"loading this file calls {name}, which {does}: the pickle names it at byte {found.offset} "
                      f"(read from its opcodes; nothing was unpickled) — remove the file from the repository, "
                      f"rebuild it from code you trust, and share weights as safetensors",
                      key=name)


@check("SPK108", scope="document", kinds=(FileKind.TEXT,))
def committed_pickle_runs_code(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    if document.parsed is None or not may_hold_pickle(document.path):
        return  # before the import: pickletools and zipfile load only where a pickle was read
    from spikelint.documents.pickled import PickleScan

    if isinstance(document.parsed, PickleScan):
        yield from pickle_findings(document.parsed, document.text)


@check("SPK108", scope="document", kinds=(FileKind.IMAGE,))
def archived_pickle_runs_code(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    """A pickle inside a committed ``.zip``/``.tar.gz``, named ``bundle.tar.gz!model.pkl``."""
    from dataclasses import replace

    from spikelint.documents.archive import ArchiveContents

    if not isinstance(document.parsed, ArchiveContents):
        return
    for member in document.parsed.members:
        if member.pickle is not None:
            for problem in pickle_findings(member.pickle, member.text):
                yield replace(problem, path=f"{document.path}!{member.name}")
