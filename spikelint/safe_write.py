"""Writing a report, baseline or manifest without following a link planted under its name.

A CI gate writes fixed names (``spikelint.sarif``, a baseline) inside a checkout that a
contributor controls; a committed symlink under that name, or in a folder on the way to it,
would turn the write into an overwrite of any file the CI user can reach.  So the target and
every folder named on the way (relative to where the path starts) must not be links, and the
text goes to a fresh temporary file beside the target (``O_EXCL | O_NOFOLLOW``) that is then
renamed over it: a rename replaces a name, never what a link points at.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafeTarget(OSError):
    """The target (or a folder on the way to it) is a link: nothing was written."""


def _linked_part(path: Path) -> Path | None:
    """The first part of ``path`` (as given, not resolved) that is a symbolic link."""
    parts = path.parts
    start = 1 if path.is_absolute() else 0  # an absolute path's own folders are the user's choice
    anchor = Path(*parts[:start]) if start else Path()
    candidate = anchor
    for index, part in enumerate(parts[start:], start):
        candidate = candidate / part
        if path.is_absolute() and index < len(parts) - 1:
            continue  # only the final name of an absolute path is checked
        try:
            if stat.S_ISLNK(os.lstat(candidate).st_mode):
                return candidate
        except FileNotFoundError:
            return None
        except OSError:
            return None
    return None


def check_target(path: Path) -> None:
    """Raise :class:`UnsafeTarget` when ``path`` or a folder on the way to it is a link."""
    linked = _linked_part(path)
    if linked is not None:
        what = "is" if linked == path else f"is inside {linked}, which is"
        raise UnsafeTarget(f"{path} {what} a symbolic link; refusing to write through it "
                           f"(remove the link or choose another file)")
    if path.exists() and not path.is_file():
        raise UnsafeTarget(f"{path} exists and is not a regular file; refusing to replace it")


def write_text_safely(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, never through a link;
    token shapes in it are masked first (reports, baselines and manifests alike)."""
    from spikelint.secrets.output_mask import mask_output

    check_target(path)
    text = mask_output(text)
    folder = path.parent
    temporary = folder / f".{path.name}.{os.urandom(8).hex()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        check_target(path)  # the name may have become a link while the text was written
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
