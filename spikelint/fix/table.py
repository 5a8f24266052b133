"""Which fixer handles which rule in which kind of file (a table, not a branch)."""

from __future__ import annotations

from spikelint.fix.context import Fixer
from spikelint.fix.dockerfile import dockerfile_pipefail
from spikelint.fix.notebook import notebook_outputs
from spikelint.fix.shell import script_pipefail
from spikelint.fix.tokens import pinned_image
from spikelint.fix.tokens import unbuffered_python
from spikelint.fix.yamlfix import yaml_pipefail
from spikelint.fix.yamlfix import yaml_secret_ref
from spikelint.fix.yamlfix import yaml_ttl
from spikelint.model import FileKind

FIXERS: dict[tuple[str, str], Fixer] = {
    (FileKind.SHELL, "SPK501"): script_pipefail,
    (FileKind.SHELL, "SPK502"): unbuffered_python,
    (FileKind.SHELL, "SPK101"): pinned_image,
    (FileKind.SHELL, "SPK102"): pinned_image,
    (FileKind.DOCKERFILE, "SPK501"): dockerfile_pipefail,
    (FileKind.DOCKERFILE, "SPK502"): unbuffered_python,
    (FileKind.DOCKERFILE, "SPK101"): pinned_image,
    (FileKind.DOCKERFILE, "SPK102"): pinned_image,
    (FileKind.YAML, "SPK501"): yaml_pipefail,
    (FileKind.YAML, "SPK502"): unbuffered_python,
    (FileKind.YAML, "SPK702"): yaml_ttl,
    (FileKind.YAML, "SPK202"): yaml_secret_ref,
    (FileKind.YAML, "SPK101"): pinned_image,
    (FileKind.YAML, "SPK102"): pinned_image,
    (FileKind.JSON, "SPK501"): yaml_pipefail,
    (FileKind.JSON, "SPK502"): unbuffered_python,
    (FileKind.JSON, "SPK101"): pinned_image,
    (FileKind.JSON, "SPK102"): pinned_image,
    (FileKind.NOTEBOOK, "SPK207"): notebook_outputs,
}
