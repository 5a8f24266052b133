"""How much of an image tarball is read, apart from the reader: the configuration builds these
on every run, and the tarball reader (``tarfile``, layers, manifests) loads only for tarballs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageLimits:
    """How much of an image tarball is read: a decompression bomb or a layer of 200,000 empty
    members is cut short, with a note saying what was not read, instead of stalling the run."""

    max_bytes: int = 4 * 1024**3  # decompressed bytes read from all layers of one tarball
    max_seconds: float = 20.0  # time spent reading one tarball
    max_entries: int = 50_000  # members read per layer
    max_ratio: int = 100  # decompressed / compressed size of a layer (ordinary layers stay below 10)
    ratio_floor: int = 64 * 1024 * 1024  # a small layer may expand this far whatever its ratio
