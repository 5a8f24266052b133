"""``python -m spikelint.smoke`` behaves like ``spikelint smoke``."""

from __future__ import annotations

import sys

from spikelint.smoke.cli import main

try:
    sys.exit(main(sys.argv[1:]))
except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM while a --cmd runs (the command is killed first)
    print(f"spikelint: {getattr(interrupt, 'said', 'interrupted')}", file=sys.stderr)
    sys.exit(int(getattr(interrupt, "exit_code", 130)))
