"""``set`` and ``shopt`` as the parser meets them: the ``pipefail``/``errexit`` options in source order."""

from __future__ import annotations

from typing import Sequence


def _apply_set(args: Sequence[str], options: dict[str, bool]) -> None:
    """``set -euo pipefail`` / ``set +o pipefail`` / ``set -e``: update ``options`` in place."""
    k = 0
    while k < len(args):
        arg = args[k]
        if arg in ("--", "-") or len(arg) < 2 or arg[0] not in "-+":
            break
        on = arg[0] == "-"
        for letter in arg[1:]:  # bash: each `o` of a cluster takes the next word (`set -exou pipefail`)
            if letter == "o":
                k += 1
                _set_named_option(options, args[k] if k < len(args) else "", on)
            elif letter == "e":
                options["errexit"] = on
        k += 1


def _set_named_option(options: dict[str, bool], name: str, on: bool) -> None:
    if name == "pipefail":
        options["pipefail"] = on
    elif name == "errexit":
        options["errexit"] = on


def _apply_shopt(args: Sequence[str], options: dict[str, bool]) -> None:
    """``shopt -s -o pipefail`` / ``shopt -so pipefail``."""
    letters = "".join(arg[1:] for arg in args if arg.startswith("-"))
    if "o" not in letters or ("s" not in letters and "u" not in letters):
        return
    for name in (arg for arg in args if not arg.startswith("-")):
        _set_named_option(options, name, "s" in letters)
