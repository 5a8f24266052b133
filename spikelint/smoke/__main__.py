"""``python -m spikelint.smoke`` behaves like ``spikelint smoke``."""

from __future__ import annotations

import sys

from spikelint.smoke.cli import main

sys.exit(main(sys.argv[1:]))
