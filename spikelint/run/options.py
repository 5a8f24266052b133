"""Option parsing shared by the run-contract commands (``precheck``, ``verify-run``)."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

EXIT_OK = 0
EXIT_USAGE = 2


def parse_options(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace | int:
    """``argv`` (default: the process's arguments) parsed, or the exit code when argparse stops.

    argparse exits for ``--help``/``--version`` (0) and for usage errors; a ``main`` that
    returns its exit code instead of exiting gets 0 or 2 back.
    """
    try:
        return parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exit_:
        return EXIT_OK if exit_.code in (0, None) else EXIT_USAGE
