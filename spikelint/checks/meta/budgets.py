"""SPK003 for the parts of an image tarball or an archive its reading limits left unread.

A decompression bomb or a layer of countless members is cut short by
:class:`~spikelint.documents.limits.ImageLimits`; what was not read is said, never silent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Iterator

from spikelint.checks.registry import check
from spikelint.model import FileKind
from spikelint.model import Problem

if TYPE_CHECKING:
    from spikelint.checks.registry import CheckContext
    from spikelint.documents.archive import ArchiveContents
    from spikelint.documents.image import ImageContents
    from spikelint.model import Document

FIX = "raise max_image_bytes / max_image_seconds / max_layer_entries / max_compression_ratio if the image is trusted"


@check("SPK003", scope="document", kinds=(FileKind.IMAGE,))
def image_read_in_part(document: Document, ctx: CheckContext) -> Iterator[Problem]:
    contents: ImageContents | ArchiveContents | None = document.parsed
    for note in contents.notes if contents is not None else []:
        yield Problem("SPK003", 1, 1, f"{note}; secrets there were not looked for ({FIX})", key=note[:80])
