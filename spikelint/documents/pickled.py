"""What a committed pickle would import when loaded, read from its opcodes without unpickling it.

``pickle.load`` (and ``torch.load(weights_only=False)``, ``joblib.load``) imports every global the file
names and calls what it is told to: a pickle that names ``os.system`` runs a command on the machine that
loads it.  The opcodes say which globals those are (``GLOBAL``, ``INST``, ``STACK_GLOBAL`` with the two
strings before it), so they are listed here the way picklescan and modelscan do, and nothing is ever
imported or called.  Read: a plain pickle (protocol 0–5, several in a row as legacy ``torch.save`` writes
them), a torch zip checkpoint's ``*.pkl`` members, and a NumPy ``.npy`` of objects; each within a bound
of bytes and opcodes, so a hostile file cannot make it slow.
"""

from __future__ import annotations

import _compat_pickle
import io
import pickletools
import struct
import zipfile
from contextlib import nullcontext
from dataclasses import dataclass
from dataclasses import field
from typing import IO
from typing import Any

MAX_OPCODES = 1_000_000  # per file: a model's pickle has thousands
MAX_PICKLES = 16  # pickles in a row (legacy torch.save writes five)
MAX_MEMBER = 8 * 1024 * 1024  # bytes of one zip member read
ZIP_MAGIC = b"PK\x03\x04"
NPY_MAGIC = b"\x93NUMPY"
# a protocol-0 pickle starts with one of these opcodes (global, mark, empty dict/list/tuple, int, string, none)
TEXT_PROTOCOL_STARTS = frozenset(b"c(}])ISVNLF")
STRING_OPCODES = frozenset(("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING",
                            "SHORT_BINSTRING"))
MEMO_GETS = frozenset(("GET", "BINGET", "LONG_BINGET"))
MEMO_PUTS = frozenset(("PUT", "BINPUT", "LONG_BINPUT"))


@dataclass(frozen=True)
class PickleImport:
    """A global a load would import: ``module.name``, at byte ``offset`` of the file."""

    module: str
    name: str
    offset: int


@dataclass
class PickleScan:
    """The globals of a committed pickle or checkpoint, and why reading stopped short (if it did)."""

    imports: list[PickleImport] = field(default_factory=list)
    stopped: str | None = None


def looks_like_pickle(data: bytes) -> bool:
    """A pickle's first bytes: ``PROTO n`` (protocols 2–5) or a protocol-0/1 opcode."""
    if len(data) >= 2 and data[0] == 0x80:
        return 2 <= data[1] <= 5
    return bool(data) and data[0] in TEXT_PROTOCOL_STARTS


def scan_file(path: str | None, head: bytes) -> PickleScan | None:
    """The globals of the file at ``path`` (``head``: its first bytes, already read; the whole file when ``path``
    is None, as for standard input or an archive member); None when it holds no pickle."""
    if head.startswith(ZIP_MAGIC):
        return _scan_zip(path if path is not None else io.BytesIO(head))
    if head.startswith(NPY_MAGIC):
        start = _npy_data_start(head)
        return scan_pickles(head, start) if start is not None and looks_like_pickle(head[start:start + 2]) else None
    return scan_pickles(head) if looks_like_pickle(head) else None


def scan_pickles(data: bytes, start: int = 0, base: int = 0) -> PickleScan:
    """Every global the pickles from ``start`` on name; offsets are of ``data`` plus ``base``."""
    scan = PickleScan()
    budget = MAX_OPCODES
    position = start
    for _ in range(MAX_PICKLES):
        if position >= len(data) or not looks_like_pickle(data[position:position + 2]):
            break
        try:
            position, budget = _scan_one(data, position, base, budget, scan.imports)
        except _Stopped as stopped:
            scan.stopped = str(stopped)
            break
    return scan


class _Stopped(Exception):
    """Reading stopped: the opcode budget ran out."""


def _scan_one(data: bytes, start: int, base: int, budget: int, found: list[PickleImport]) -> tuple[int, int]:
    """One pickle from ``start``: its globals appended to ``found``; returns where it ended and the budget left."""
    memo: dict[int, Any] = {}
    strings: list[str] = []  # the strings pushed so far, newest last, for STACK_GLOBAL
    top: Any = None  # what the last opcode pushed, for the memo
    stream = io.BytesIO(data)
    stream.seek(start)
    try:
        for opcode, argument, offset in pickletools.genops(stream):
            budget -= 1
            if budget < 0:
                raise _Stopped(f"more than {MAX_OPCODES} opcodes: the rest was not read")
            name = opcode.name
            at = base + (offset or 0)
            if name in STRING_OPCODES:
                top = argument if isinstance(argument, str) else bytes(argument or b"").decode("latin-1")
                strings.append(top)
            elif name in ("GLOBAL", "INST"):
                module, _, attribute = str(argument).partition(" ")
                found.append(_imported(module, attribute, at))
                top = None
            elif name == "STACK_GLOBAL":
                if len(strings) >= 2:
                    found.append(_imported(strings[-2], strings[-1], at))
                top = None
            elif name == "MEMOIZE":
                memo[len(memo)] = top
            elif name in MEMO_PUTS:
                memo[int(argument or 0)] = top
            elif name in MEMO_GETS:
                top = memo.get(int(argument or 0))
                if isinstance(top, str):
                    strings.append(top)
            elif name != "PROTO" and name != "FRAME":
                top = None
    except ValueError:  # not a well-formed pickle past this point: what was read stands, nothing after it is read
        return len(data), budget
    return stream.tell(), budget


def _scan_zip(path: str | IO[bytes]) -> PickleScan | None:
    """A torch zip checkpoint (``archive/data.pkl``): the globals of each pickle member, at their bytes in the file."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = [info for info in archive.infolist() if info.filename.endswith(".pkl")]
            if not members:
                return None
            scan = PickleScan()
            with (open(path, "rb") if isinstance(path, str) else nullcontext(path)) as raw:
                for info in members[:MAX_PICKLES]:
                    data = archive.open(info).read(MAX_MEMBER)
                    inner = scan_pickles(data, base=_member_data_offset(raw, info))
                    scan.imports.extend(inner.imports)
                    scan.stopped = scan.stopped or inner.stopped
            return scan
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, NotImplementedError, RuntimeError):
        return None


def _member_data_offset(raw: Any, info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes start in the file (after its local header), so offsets point into the file."""
    raw.seek(info.header_offset)
    header = raw.read(30)
    if len(header) < 30 or info.compress_type != zipfile.ZIP_STORED:
        return info.header_offset
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_length + extra_length


def _npy_data_start(head: bytes) -> int | None:
    """Where an ``.npy`` file's array data begins; an object array's data is a pickle."""
    if len(head) < 10:
        return None
    major = head[6]
    if major == 1:
        return 10 + struct.unpack("<H", head[8:10])[0]
    if len(head) >= 12:
        return 12 + struct.unpack("<I", head[8:12])[0]
    return None


def import_name(found: PickleImport) -> str:
    return f"{found.module}.{found.name}" if found.name else found.module


def _imported(module: str, name: str, offset: int) -> PickleImport:
    """The module a Python 3 load imports: a protocol 0–2 pickle's Python 2 names are mapped, as ``pickle`` maps them."""
    module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
    return PickleImport(_compat_pickle.IMPORT_MAPPING.get(module, module), name, offset)
