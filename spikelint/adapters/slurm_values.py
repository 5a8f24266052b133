"""How sbatch reads the value of a directive: a time limit, a signal notice, a GRES or typed GPU count.

Plain functions of the written text, apart from the job model (:mod:`spikelint.adapters.slurm`), so that each
reading is tested on its own (``1-12:00:00``, ``B:USR1@90``, ``gpu:a100:8``).
"""

from __future__ import annotations

from typing import Sequence

from spikelint.util.lazyre import lazy_regex


def time_seconds(text: str) -> int | None:
    """Slurm ``--time``: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; None when unlimited/unreadable."""
    value = text.strip().lower()
    if not value or value in ("unlimited", "infinite", "-1"):
        return None
    days = 0
    if "-" in value:
        head, _, value = value.partition("-")
        if not head.isdigit():
            return None
        days = int(head)
        parts = value.split(":")
        if not all(part.isdigit() for part in parts) or len(parts) > 3:
            return None
        numbers = [int(part) for part in parts] + [0] * (3 - len(parts))
        seconds = days * 86400 + numbers[0] * 3600 + numbers[1] * 60 + numbers[2]
    else:
        parts = value.split(":")
        if not all(part.isdigit() for part in parts) or len(parts) > 3:
            return None
        numbers = [int(part) for part in parts]
        if len(numbers) == 1:
            seconds = numbers[0] * 60
        elif len(numbers) == 2:
            seconds = numbers[0] * 60 + numbers[1]
        else:
            seconds = numbers[0] * 3600 + numbers[1] * 60 + numbers[2]
    return seconds if seconds > 0 else None


BATCH_SIGNAL = lazy_regex(r"(?i)^B:(?:SIG)?(\w+)")
SIGNAL_NUMBERS = {"HUP": 1, "INT": 2, "QUIT": 3, "USR1": 10, "USR2": 12, "TERM": 15, "CONT": 18, "URG": 23}


def untrapped_batch_signal(text: str, lines: Sequence[str]) -> bool:
    """``--signal=B:USR1@90`` goes to the batch shell alone; with no ``trap … USR1`` in the script, bash
    takes the signal's default action and exits, and the job ends early without a checkpoint."""
    found = BATCH_SIGNAL.match(text.strip())
    if found is None:
        return False
    name = found.group(1).upper()
    names = {name, f"SIG{name}"} | ({str(SIGNAL_NUMBERS[name])} if name in SIGNAL_NUMBERS else set())
    for line in lines:
        words = line.split("#", 1)[0].split()
        if "trap" in words and any(word.strip("'\";").upper() in names for word in words[words.index("trap") + 1:]):
            return False
    return True


def signal_seconds(text: str) -> int | None:
    """``--signal=[{R|B}:]SIG[@SECONDS]``: seconds of notice before the time limit (60 when not written)."""
    value = text.strip()
    if not value:
        return None
    _, at, seconds = value.partition("@")
    if not at:
        return 60
    return int(seconds) if seconds.strip().isdigit() else None


def gres_gpus(text: str) -> int | None:
    """``gpu:8``, ``gpu:a100:8``, ``gpu``, ``gpu:8(S:0-1)``, ``nvme:1,gpu:4`` -> GPUs per node."""
    for item in text.split(","):
        parts = item.split("(")[0].strip().split(":")
        if not parts or parts[0].lower() != "gpu":
            continue
        if len(parts) == 1:
            return 1
        count = parts[-1]
        return int(count) if count.isdigit() else 1
    return None


def typed_count(text: str) -> int | None:
    """``--gpus-per-node=8`` or ``=h100:8`` -> 8."""
    tail = text.strip().split(":")[-1]
    return int(tail) if tail.isdigit() else None
