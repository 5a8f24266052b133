"""Secrets in files no parser reads: binary content, UTF-16/32 text, files past the size limit.

A token committed in a pickle, a file with a NUL byte, a UTF-16 file or a file padded past
the size limit is as leaked as one in a YAML file.  Such files are not parsed, but their
text is still scanned for token shapes, within a bound, and the document says what was
limited.  Binary bytes are shown as spaces (newlines kept), so the lines and columns of a
finding are those of the file.
"""

from __future__ import annotations

import codecs
import re
from typing import BinaryIO

from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem
from spikelint.model import SourceFile
from spikelint.util.pathnames import base_name
from spikelint.util.pathnames import name_suffix

MAX_BINARY_SCAN = 8 * 1024 * 1024  # bytes of a binary file looked at
MAX_OVERSIZED_SCAN = 16 * 1024 * 1024  # bytes of an oversized text file looked at, chunk by chunk
CHUNK = 1024 * 1024
OVERLAP = 4096  # a token cut by a chunk boundary is found in the next chunk's overlap
# Serialised data keeps its strings as written: tokens in a pickle or checkpoint are readable.
SCANNED_BINARY_SUFFIXES = frozenset((".bin", ".pkl", ".pickle", ".pt", ".pth", ".ckpt", ".npy", ".h5", ".parquet",
                                     ".arrow", ".safetensors", ".onnx", ".pyc", ".joblib", ".dill", ".db", ".sqlite"))
# the files pickle, torch, joblib and NumPy write: their globals are read too (safetensors, ONNX, HDF5 hold no code)
PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth", ".ckpt", ".bin", ".joblib", ".npy", ".dill")
BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_UNPRINTABLE = re.compile(rb"[^\x20-\x7e\n]")
_TOKEN_CHARS = re.compile(r"[^\s]{8,}")


def is_scanned_binary(path: str) -> bool:
    return name_suffix(base_name(path).lower()) in SCANNED_BINARY_SUFFIXES


def may_hold_pickle(path: str) -> bool:
    return path.lower().endswith(PICKLE_SUFFIXES)


def bom_text(data: bytes) -> tuple[str, str] | None:
    """UTF-16/32 text decoded by its byte-order mark: (text, encoding)."""
    for mark, encoding in BOMS:
        if data.startswith(mark):
            return data[len(mark):].decode(encoding, "replace"), "-".join(encoding.split("-")[:2]).upper()
    return None


def scrubbed(data: bytes) -> str:
    """Printable ASCII kept, every other byte a space, newlines kept: the file's strings in place."""
    return _UNPRINTABLE.sub(b" ", data).decode("ascii")


def binary_document(source: SourceFile, data: bytes, size: int, problem: str | None = None,
                    abspath: str | None = None) -> Document:
    """A binary file as text for the secret rules; ``data`` is at most :data:`MAX_BINARY_SCAN` bytes.

    A pickle or checkpoint also gets the globals a load would import (``parsed``, a ``PickleScan``); a zip
    checkpoint is read from ``abspath`` when given (its directory is at the end, past ``data``).
    """
    problems = []
    if size > len(data):
        problems.append(Problem("SPK003", 1, 1, f"binary file of {size} bytes: only its first {len(data)} bytes "
                                f"were scanned for token shapes", key="binary-truncated"))
    elif problem:
        problems.append(Problem("SPK003", 1, 1, problem, key="binary-content"))
    parsed = None
    if may_hold_pickle(source.path):  # pickletools and zipfile are imported only for such files
        from spikelint.documents.pickled import scan_file

        parsed = scan_file(abspath if size > len(data) else None, data)
        if parsed is not None and parsed.stopped:
            problems.append(Problem("SPK003", 1, 1, f"pickle not read to the end: {parsed.stopped}",
                                    key="pickle-stopped"))
    return Document(SourceFile(source.path, source.abspath, FileKind.TEXT), scrubbed(data), parsed=parsed,
                    problems=problems)


def oversized_document(source: SourceFile, size: int, limit: int) -> Document:
    """A file past the size limit, scanned chunk by chunk for token shapes (never read whole).

    The document's text keeps the lines that hold a token shape at their own line numbers
    (the others blank), so the secret rules report them where they are.
    """
    kept: dict[int, str] = {}
    scanned = 0
    try:
        with open(source.abspath, "rb") as handle:
            scanned = _scan_chunks(handle, kept)
    except OSError as error:
        return Document(source, "", problems=[Problem("SPK003", 1, 1, f"file is {size} bytes, above the "
                                                      f"{limit}-byte limit, and cannot be read: "
                                                      f"{error.strerror or error}", key="oversized")])
    last = max(kept, default=0)
    text = "\n".join(kept.get(number, "") for number in range(1, last + 1))
    limited = "" if scanned >= size else f" (the first {scanned} bytes)"
    message = (f"file is {size} bytes, above the {limit}-byte limit: not parsed, only scanned for token "
               f"shapes{limited}")
    return Document(SourceFile(source.path, source.abspath, FileKind.TEXT), text,
                    problems=[Problem("SPK003", 1, 1, message, key="oversized")])


def _scan_chunks(handle: BinaryIO, kept: dict[int, str]) -> int:
    """Read up to :data:`MAX_OVERSIZED_SCAN` bytes; keep each line holding a token shape.

    Chunks are cut after their last newline, so a token is never split (unless a single
    line is longer than a chunk).
    """
    from spikelint.secrets.detectors import token_secrets

    line_base = 1  # line number of the first line of the block being scanned
    carry = b""
    scanned = 0
    while True:
        chunk = handle.read(min(CHUNK, MAX_OVERSIZED_SCAN - scanned)) if scanned < MAX_OVERSIZED_SCAN else b""
        scanned += len(chunk)
        block = carry + chunk
        if not block:
            break
        cut = block.rfind(b"\n") + 1 if chunk else len(block)
        if cut == 0:
            cut = len(block)  # a line longer than the chunk: scanned as it is
        body, carry = block[:cut], block[cut:]
        text = body.decode("utf-8", "replace")
        if token_secrets(text):
            for offset, line in enumerate(text.split("\n")):
                if _TOKEN_CHARS.search(line) and token_secrets(line):
                    kept[line_base + offset] = line
        line_base += body.count(b"\n")
        if not chunk:
            break
    return scanned
