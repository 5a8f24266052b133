"""Committed archives (``.zip``, ``.tar``, ``.tar.gz``/``.tgz``, ``.tar.bz2``, ``.tar.xz``) that are not image
tarballs: their text members, read like files so that a token inside ``bundle.tar.gz!config/.env`` is found.

Streamed and bounded by the image tarball limits (decompressed bytes, members, compression ratio, time) and a
cap per member; a member that is itself an archive is not opened (said in a note), nor is a binary one, but a
pickle or checkpoint member keeps its strings, as a committed one does.
"""

from __future__ import annotations

import os
import tarfile
import time
import zipfile
import zlib
from dataclasses import dataclass
from dataclasses import field
from typing import IO
from typing import TYPE_CHECKING
from typing import Callable
from typing import Iterator

from spikelint.documents.bounded import is_scanned_binary
from spikelint.documents.bounded import may_hold_pickle
from spikelint.documents.bounded import scrubbed
from spikelint.documents.limits import ImageLimits

if TYPE_CHECKING:
    from spikelint.documents.pickled import PickleScan

MAX_MEMBER_BYTES = 1 << 20  # of one member: past it, its start is read
MAX_MEMBERS_READ = 2_000  # text members read per archive
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
BINARY_PEEK = 8_192


@dataclass
class ArchiveMember:
    name: str  # inside the archive, without a leading ``./``
    text: str
    pickle: PickleScan | None = None  # a pickle or checkpoint member: the globals a load would import


@dataclass
class ArchiveContents:
    members: list[ArchiveMember] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was not read, and why


class ArchiveError(ValueError):
    """An archive that cannot be read at all (corrupt, truncated, encrypted)."""


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _text(data: bytes) -> str | None:
    if b"\0" in data[:BINARY_PEEK]:
        return None
    return data.decode("utf-8", "replace")


def read_archive(path: str, limits: ImageLimits | None = None) -> ArchiveContents:
    """The text members of the archive at ``path``, within ``limits``; raises :class:`ArchiveError`."""
    limits = limits or ImageLimits()
    contents = ArchiveContents()
    started = time.monotonic()
    compressed = max(os.path.getsize(path), 1)
    budget = min(limits.max_bytes, max(limits.max_ratio * compressed, limits.ratio_floor))
    used = 0
    try:
        for count, (name, size, handle) in enumerate(_members(path), 1):
            if count > limits.max_entries or len(contents.members) >= MAX_MEMBERS_READ:
                contents.notes.append(f"more than {min(limits.max_entries, MAX_MEMBERS_READ)} members: the rest "
                                      "were not read")
                break
            if time.monotonic() - started > limits.max_seconds:
                contents.notes.append(f"reading took longer than {limits.max_seconds:g} s: the members after "
                                      f"{name!r} were not read")
                break
            if used + min(size, MAX_MEMBER_BYTES) > budget:
                contents.notes.append(f"it expands to more than {budget} bytes (over {limits.max_ratio} times its "
                                      f"size: a decompression bomb?): the members from {name!r} on were not read")
                break
            if is_archive(name):
                contents.notes.append(f"{name!r} is an archive inside the archive: not opened")
                continue
            data = handle().read(MAX_MEMBER_BYTES)
            used += len(data)
            if is_scanned_binary(name):  # a pickle: its strings, and the globals a load would import
                from spikelint.documents.pickled import scan_file

                pickle = scan_file(None, data) if may_hold_pickle(name) else None
                contents.members.append(ArchiveMember(name.removeprefix("./"), scrubbed(data), pickle))
                continue
            text = _text(data)
            if text:
                contents.members.append(ArchiveMember(name.removeprefix("./"), text))
    except (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError,
            RuntimeError, NotImplementedError) as error:
        raise ArchiveError(f"archive is corrupt, truncated or encrypted: {error}") from None
    return contents


Opener = Callable[[], IO[bytes]]


def _members(path: str) -> Iterator[tuple[str, int, Opener]]:
    """(name, uncompressed size, how to open it) of every regular file, in archive order."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info.filename, info.file_size, _zip_opener(archive, info)
        return
    with tarfile.open(path, mode="r|*") as archive:
        for member in archive:
            if member.isfile():
                yield member.name, member.size, _tar_opener(archive, member)


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Opener:
    return lambda: archive.open(info)


def _tar_opener(archive: tarfile.TarFile, member: tarfile.TarInfo) -> Opener:
    def opened() -> IO[bytes]:
        handle = archive.extractfile(member)
        if handle is None:
            raise OSError(f"cannot read {member.name!r}")
        return handle

    return opened
