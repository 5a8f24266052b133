"""``bash -c SCRIPT`` and friends in an argv, ``sbatch --wrap CMD``, and the options a shebang line turns on.

``find_shell_call`` is also how the Dockerfile and CI parsers find the scripts their commands run.
"""

from __future__ import annotations

from typing import Sequence

from spikelint.documents.shell.nodes import ShellCall
from spikelint.documents.shell.options import _set_named_option

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "yash"})


def find_shell_call(argv: Sequence[str]) -> ShellCall | None:
    """The first ``sh``/``bash``/… word of ``argv`` with the options before its script.

    ``bash -lc 'x'``, ``/bin/sh -c "x"``, ``bash -euo pipefail -c 'x'``, ``bash -o pipefail -c``.
    """
    for index, word in enumerate(argv):
        if not word.endswith("sh") or word.rsplit("/", 1)[-1] not in SHELLS:
            continue
        options = {"pipefail": False, "errexit": False}
        has_c = False
        k = index + 1
        while k < len(argv):
            arg = argv[k]
            if arg == "--":
                k += 1
                break
            if len(arg) < 2 or arg[0] not in "-+":
                break
            if arg.startswith("--"):
                k += 2 if arg in ("--rcfile", "--init-file") else 1
                continue
            on = arg[0] == "-"
            for letter in arg[1:]:  # each `o`/`O` of a cluster takes the next word (`bash -eo pipefail -c`)
                if letter == "c":
                    has_c = True
                elif letter in "oO":
                    k += 1
                    if letter == "o":
                        _set_named_option(options, argv[k] if k < len(argv) else "", on)
                elif letter == "e":
                    options["errexit"] = on
            k += 1
        script_index = k if has_c and k < len(argv) else None
        return ShellCall(index, script_index, options["pipefail"], options["errexit"])
    return None


def find_wrap(argv: Sequence[str]) -> tuple[int, int] | None:
    """``sbatch [options] --wrap CMD`` or ``--wrap=CMD``: the index of the word that holds the job's
    command and how many characters of it come before the command (``--wrap=``).  sbatch writes the
    command into a ``#!/bin/sh`` job script and submits it: a script of its own, run later.
    """
    if not argv or argv[0].rsplit("/", 1)[-1] != "sbatch":
        return None
    for index in range(1, len(argv)):
        word = argv[index]
        if word == "--wrap":
            return (index + 1, 0) if index + 1 < len(argv) else None
        if word.startswith("--wrap="):
            return index, len("--wrap=")
    return None


def _shebang_options(text: str) -> dict[str, bool]:
    """``#!/bin/bash -eo pipefail`` and ``#!/usr/bin/env -S bash -euo pipefail``."""
    options = {"pipefail": False, "errexit": False}
    if not text.startswith("#!"):
        return options
    first = text[2:].split("\n", 1)[0].split()
    call = find_shell_call(first)
    if call is not None:
        options["pipefail"] = call.pipefail
        options["errexit"] = call.errexit
    return options
