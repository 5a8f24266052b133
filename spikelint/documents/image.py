"""Container image tarballs (``docker save``, OCI layout) read as a stream, never extracted.

One sequential pass over the outer tar: small JSON members (``manifest.json``,
``index.json``, image configs, OCI manifests) are kept; every member that is itself a tar
(a layer, gzip/bzip2/xz compressed or not) is streamed through once, keeping only the names
of whiteouts and the first bytes of files that can hold credentials.  Memory stays bounded
by those caps whatever the image size; the layer order and the image config are resolved
from the manifests at the end, since ``docker save`` writes them after the layers.
"""

from __future__ import annotations

import json
import re
import tarfile
import zipfile
import time
import zlib
from dataclasses import dataclass
from dataclasses import field
from pathlib import PurePosixPath
from typing import IO
from typing import Any

from spikelint.documents.limits import ImageLimits
from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import Problem
from spikelint.model import SourceFile

MAX_JSON_BYTES = 8 * 1024 * 1024  # an image config with a long history stays far below this
MAX_FILE_BYTES = 64 * 1024  # bytes read from a credential file
MAX_FILES_PER_LAYER = 500  # credential candidates kept per layer
PEEK_BYTES = 512
LAYOUT_NAME = lazy_regex(r"^(?:blobs/|[0-9a-f]{64}(?:/|\.json$|$)|manifest\.json$|index\.json$|oci-layout$|"
                         r"repositories$)")
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ"
WHITEOUT_PREFIX = ".wh."
OPAQUE_WHITEOUT = ".wh..wh..opq"


class _Budget:
    """What one tarball has used of its :class:`ImageLimits`."""

    def __init__(self, limits: ImageLimits) -> None:
        self.limits = limits
        self.started = time.monotonic()
        self.used = 0
        self.notes: list[str] = []

    def out_of_time(self) -> bool:
        return time.monotonic() - self.started > self.limits.max_seconds


class ImageError(ValueError):
    """The tarball cannot be read (corrupt, truncated); ``skipped`` when it is simply not an image."""

    def __init__(self, message: str, skipped: bool = False) -> None:
        super().__init__(message)
        self.skipped = skipped


@dataclass
class LayerFile:
    path: str  # inside the layer, without a leading ``/`` or ``./``
    size: int
    content: str  # the first MAX_FILE_BYTES, decoded leniently


@dataclass
class Layer:
    member: str  # name of the layer's tar inside the image tarball
    files: list[LayerFile] = field(default_factory=list)
    whiteouts: list[str] = field(default_factory=list)  # paths this layer deletes from the layers below
    opaque: list[str] = field(default_factory=list)  # folders whose lower content this layer hides
    unreadable: str = ""  # why the layer could not be scanned (zstd, …)


@dataclass
class ImageManifest:
    """One image of the tarball: its names, config and layers in order (bottom first)."""

    tags: list[str]
    config: dict[str, Any]
    layers: list[Layer]
    layer_digests: list[str]


@dataclass
class ImageContents:
    images: list[ImageManifest]
    notes: list[str] = field(default_factory=list)


def is_credential_candidate(path: str) -> bool:
    """Files worth keeping bytes of: credential files by name, dotenv files and shell histories."""
    from spikelint.secrets.credentials import credential_file_kind

    name = PurePosixPath(path).name
    return credential_file_kind(path) is not None or name in (".env", ".bash_history", ".zsh_history",
                                                              ".python_history")


class _Rejoined:
    """A read-only stream that gives back the peeked head before the rest (for tarfile's stream mode)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head = head
        self.rest = rest

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            data, self.head = self.head + self.rest.read(), b""
            return data
        if self.head:
            data, self.head = self.head[:size], self.head[size:]
            if len(data) < size:
                data += self.rest.read(size - len(data))
            return data
        return self.rest.read(size)


def _normalise(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return name.lstrip("/")


def _is_tar_head(head: bytes) -> bool:
    return head.startswith((GZIP_MAGIC, BZIP2_MAGIC, XZ_MAGIC)) or head[257:262] == b"ustar"


def scan_layer(member: str, stream: IO[bytes], compressed: int = 0, budget: _Budget | None = None) -> Layer:
    """Stream one layer tar: record whiteouts and the credential-candidate files (capped).

    Within ``budget``: the layer stops being read (with a note) before a member that would
    take it past the byte, ratio or time limits, or after too many members.
    """
    layer = Layer(member)
    budget = budget or _Budget(ImageLimits())
    limits = budget.limits
    expandable = max(limits.max_ratio * compressed, limits.ratio_floor) if compressed else limits.max_bytes
    end = 0
    with tarfile.open(fileobj=stream, mode="r|*") as archive:
        for count, entry in enumerate(archive, 1):
            end = entry.offset_data + entry.size  # decompressed bytes the layer has reached
            reason = _over_budget(count, end, expandable, budget)
            if reason is not None:
                budget.notes.append(f"layer {member!r} was read only in part: {reason}")
                layer.unreadable = reason
                break
            path = _normalise(entry.name)
            folder, _, name = path.rpartition("/")
            if name == OPAQUE_WHITEOUT:
                layer.opaque.append(folder)
            elif name.startswith(WHITEOUT_PREFIX):
                layer.whiteouts.append(f"{folder}/{name[len(WHITEOUT_PREFIX):]}".lstrip("/"))
            elif entry.isfile() and len(layer.files) < MAX_FILES_PER_LAYER and is_credential_candidate(path):
                handle = archive.extractfile(entry)
                data = handle.read(MAX_FILE_BYTES) if handle is not None else b""
                layer.files.append(LayerFile(path, entry.size, data.decode("utf-8", "replace")))
    budget.used += end
    return layer


def _over_budget(count: int, end: int, expandable: int, budget: _Budget) -> str | None:
    limits = budget.limits
    if count > limits.max_entries:
        return f"more than {limits.max_entries} members"
    if end > expandable:
        return (f"it expands to more than {expandable} bytes, over {limits.max_ratio} times its compressed size "
                f"(a decompression bomb?)")
    if budget.used + end > limits.max_bytes:
        return f"the image's layers exceed {limits.max_bytes} decompressed bytes"
    if count % 256 == 0 and budget.out_of_time():
        return f"reading the image took longer than {limits.max_seconds:g} s"
    return None


def _read_json(handle: IO[bytes], head: bytes, size: int) -> Any:
    data = head + handle.read(max(size - len(head), 0))
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def read_image(path: str, limits: ImageLimits | None = None) -> ImageContents:
    """Read an image tarball; raises :class:`ImageError` for corrupt, truncated or non-image tars."""
    jsons: dict[str, Any] = {}
    layers: dict[str, Layer] = {}
    budget = _Budget(limits or ImageLimits())
    try:
        with tarfile.open(path, mode="r|*") as outer:
            for member in outer:
                if budget.out_of_time():
                    budget.notes.append(f"reading the image took longer than {budget.limits.max_seconds:g} s: "
                                        f"the members after {member.name!r} were not read")
                    break
                name = _normalise(member.name)
                if not name or member.isdir():
                    continue
                if not LAYOUT_NAME.match(name):
                    raise ImageError(f"not a docker save or OCI image tarball ({name!r} is not part of an image "
                                     f"layout); skipped", skipped=True)
                if not member.isfile():
                    continue
                handle = outer.extractfile(member)
                if handle is None:
                    continue
                head = handle.read(PEEK_BYTES)
                if head.lstrip()[:1] in (b"{", b"[") and member.size <= MAX_JSON_BYTES:
                    jsons[name] = _read_json(handle, head, member.size)
                elif head.startswith(ZSTD_MAGIC):
                    layers[name] = Layer(name, unreadable="zstd-compressed layer (not readable with this Python)")
                elif _is_tar_head(head):
                    layers[name] = _scan_member_layer(name, head, handle, member.size, budget)
    except ImageError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError, ValueError) as error:
        raise ImageError(f"image tarball is corrupt or truncated: {error}") from None
    images = resolve_images(jsons, layers)
    if not images:
        if budget.notes:
            raise ImageError(f"image tarball not read: {budget.notes[0]}")
        raise ImageError("not a docker save or OCI image tarball (no manifest.json or index.json); skipped",
                         skipped=True)
    return ImageContents(images, notes=budget.notes)


def _scan_member_layer(name: str, head: bytes, handle: IO[bytes], compressed: int, budget: _Budget) -> Layer:
    try:
        return scan_layer(name, _Rejoined(head, handle), compressed, budget)  # type: ignore[arg-type]
    except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
        raise ImageError(f"layer {name!r} of the image tarball is corrupt or truncated: {error}") from None


# --------------------------------------------------------------------------- layouts


def _blob_name(digest: Any) -> str:
    if not isinstance(digest, str) or ":" not in digest:
        return ""
    algorithm, _, hexdigest = digest.partition(":")
    return f"blobs/{algorithm}/{hexdigest}"


def resolve_images(jsons: dict[str, Any], layers: dict[str, Layer]) -> list[ImageManifest]:
    """Images from ``manifest.json`` (``docker save``) or else ``index.json`` (OCI layout)."""
    manifest = jsons.get("manifest.json")
    if isinstance(manifest, list) and manifest:
        return [image for entry in manifest if isinstance(entry, dict)
                for image in [_docker_image(entry, jsons, layers)] if image is not None]
    index = jsons.get("index.json")
    if isinstance(index, dict):
        return _oci_images(index, jsons, layers, depth=0)
    return []


def _docker_image(entry: dict[str, Any], jsons: dict[str, Any], layers: dict[str, Layer]) -> ImageManifest | None:
    config = jsons.get(_normalise(str(entry.get("Config") or "")))
    names = [_normalise(str(name)) for name in entry.get("Layers") or [] if isinstance(name, str)]
    tags = [str(tag) for tag in entry.get("RepoTags") or [] if isinstance(tag, str)]
    return ImageManifest(tags, config if isinstance(config, dict) else {},
                         [layers.get(name) or Layer(name, unreadable="layer missing from the tarball")
                          for name in names], [_digest_of(name) for name in names])


def _digest_of(name: str) -> str:
    match = re.search(r"([0-9a-f]{64})", name)
    return f"sha256:{match.group(1)}" if match else name


def _oci_images(index: dict[str, Any], jsons: dict[str, Any], layers: dict[str, Layer], depth: int) -> list[ImageManifest]:
    images: list[ImageManifest] = []
    for descriptor in index.get("manifests") or []:
        if not isinstance(descriptor, dict):
            continue
        body = jsons.get(_blob_name(descriptor.get("digest")))
        if not isinstance(body, dict):
            continue
        if "manifests" in body and depth < 3:  # an index of per-platform manifests
            images.extend(_oci_images(body, jsons, layers, depth + 1))
            continue
        annotations = descriptor.get("annotations") or {}
        tag = annotations.get("io.containerd.image.name") or annotations.get("org.opencontainers.image.ref.name")
        config = jsons.get(_blob_name((body.get("config") or {}).get("digest")))
        digests = [str(layer.get("digest")) for layer in body.get("layers") or [] if isinstance(layer, dict)]
        images.append(ImageManifest([str(tag)] if tag else [], config if isinstance(config, dict) else {},
                                    [layers.get(_blob_name(digest)) or Layer(_blob_name(digest),
                                                                             unreadable="layer missing from the tarball")
                                     for digest in digests], digests))
    return images


# --------------------------------------------------------------------------- documents


def read_image_document(source: SourceFile, limits: ImageLimits | None = None) -> Document:
    """The document for an image tarball: ``parsed`` is :class:`ImageContents`; for an archive of files (a zip, a
    tarball without an image layout) :class:`~spikelint.documents.archive.ArchiveContents`; or a problem says
    why neither."""
    if source.path.lower().endswith(".zip") and not zipfile.is_zipfile(source.abspath):
        # a test fixture of a broken zip, a placeholder: nothing to read, nothing wrong with the repository
        message = "not a readable zip archive; its content was not looked at"
        return Document(source, "", problems=[Problem("SPK003", 1, 1, message, key=message)])
    try:
        contents = read_image(source.abspath, limits) if not zipfile.is_zipfile(source.abspath) else None
    except ImageError as error:
        if not error.skipped:
            return Document(source, "", problems=[Problem("SPK001", 1, 1, str(error), key=str(error))])
        contents = None  # a tarball of files, not of an image: an archive
    except MemoryError:
        return Document(source, "", problems=[Problem("SPK001", 1, 1, "image tarball exceeds the reader's memory limit")])
    if contents is None:
        return _archive_document(source, limits)
    return Document(source, "", parsed=contents)


def _archive_document(source: SourceFile, limits: ImageLimits | None) -> Document:
    """An archive of files (``bundle.tar.gz``, ``configs.zip``): ``parsed`` is its text members."""
    from spikelint.documents.archive import ArchiveError
    from spikelint.documents.archive import read_archive

    try:
        return Document(source, "", parsed=read_archive(source.abspath, limits))
    except ArchiveError as error:
        return Document(source, "", problems=[Problem("SPK001", 1, 1, str(error), key=str(error))])
