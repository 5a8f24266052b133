"""Secret detection shared by every file kind: detectors, context gating, redaction.

``find_secrets(value, key)`` judges one value (a YAML scalar, a shell word, a string
literal) with the key it is written under; ``scan_text(text)`` scans free text with
positions; ``redact`` and ``secret_key`` are the only ways a secret leaves this package.
"""

from __future__ import annotations

from spikelint.secrets.context import classify_key
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.context import is_secret_env_name
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import find_secrets
from spikelint.secrets.redact import redact
from spikelint.secrets.redact import secret_key
from spikelint.secrets.text import Hit
from spikelint.secrets.text import scan_text

__all__ = [
    "Hit", "Secret", "classify_key", "find_secrets", "is_placeholder", "is_reference", "is_secret_env_name",
    "redact", "scan_text", "secret_key",
]
