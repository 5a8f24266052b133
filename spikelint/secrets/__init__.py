"""Secret detection shared by every file kind: detectors, context gating, redaction.

``find_secrets(value, key)`` judges one value (a YAML scalar, a shell word, a string
literal) with the key it is written under; ``scan_text(text)`` scans free text with
positions; ``redact`` and ``secret_key`` are the only ways a secret leaves this package.

The package itself imports nothing: every command's output passes ``output_mask``, and the
start-up of ``spikelint --version`` must not pay for the detectors.
"""

