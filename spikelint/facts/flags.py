"""Run settings written on a command line: ``--key value``, ``--key=value``, bare flags, Hydra overrides.

Each word becomes a :class:`~spikelint.facts.runconfig.Setting` classified by the same key table
as config files, positioned at the value (the part after ``=`` for ``--key=value``).
"""

from __future__ import annotations

import re
from typing import Sequence

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located
from spikelint.facts.runconfig import CKPT_INTERVAL
from spikelint.facts.runconfig import CONFIG_REF
from spikelint.facts.runconfig import CONFIG_SUFFIXES
from spikelint.facts.runconfig import OUTPUT
from spikelint.facts.runconfig import Setting
from spikelint.facts.runconfig import is_path_like
from spikelint.facts.runconfig import normalise_key
from spikelint.facts.runconfig import roles_of


_OVERRIDE = lazy_regex(r"^(?:\+\+|\+|~)?([A-Za-z_][\w\-]*(?:\.[\w\-]+)*)=(.*)$", re.DOTALL)
_NEGATIVE_NUMBER = lazy_regex(r"^-\d+(\.\d+)?$")


def _value_after(word: Located, prefix: int) -> Located:
    """The part of ``--key=value`` after ``=``, positioned at the value."""
    text = str(word.value)[prefix:]
    column = word.column + prefix
    end = word.end_column if word.end_column is not None else column + len(text)
    if word.end_line is not None and word.end_line != word.line:
        return Located(text, word.line, column, word.end_line, end)
    return Located(text, word.line, column, word.line, end)


def _is_flag(text: str) -> bool:
    return text.startswith("--") and len(text) > 2 and not _NEGATIVE_NUMBER.match(text)


def flag_settings(words: Sequence[Located], origin_prefix: str = "") -> list[Setting]:
    """``--key value``, ``--key=value``, bare ``--flag``, ``-c file`` and Hydra ``a.b=value`` words."""
    found: list[Setting] = []
    index = 0
    count = len(words)
    while index < count:
        word = words[index]
        text = str(word.value)
        if _is_flag(text):
            name, equals, rest = text[2:].partition("=")
            key = normalise_key(name)
            if equals:
                value_at = _value_after(word, 2 + len(name) + 1)
                found.append(_flag(key, rest, value_at, f"--{name}", origin_prefix))
            elif index + 1 < count and _takes_value(str(words[index + 1].value)):
                following = words[index + 1]
                found.append(_flag(key, str(following.value), following, f"--{name}", origin_prefix))
                index += 1
            else:
                found.append(Setting(key, True, word, roles_of(key, True), True, f"--{name}", bare=True))
        elif text in ("-c", "-cn", "-cp") and index + 1 < count and str(words[index + 1].value).endswith(
                CONFIG_SUFFIXES if text == "-c" else ("",)):
            following = words[index + 1]
            key = (text[1:],)
            found.append(Setting(key, str(following.value), following, frozenset((CONFIG_REF,)),
                                 str(following.value), text))
            index += 1
        else:
            match = _OVERRIDE.match(text)
            if match and not text.startswith("-"):
                key = normalise_key(match.group(1))
                value_at = _value_after(word, match.start(2))
                value = match.group(2)
                found.append(Setting(key, value, value_at, roles_of(key, value), value, match.group(1)))
        index += 1
    return found


def _takes_value(following: str) -> bool:
    return not following.startswith("-") or bool(_NEGATIVE_NUMBER.match(following)) or following == "-"


# on a command line these name the file the run writes its checkpoint to (PyTorch's ImageNet and
# DDP examples: ``--checkpoint-file /workspace/checkpoint.pth.tar``), not only one it reads
WRITTEN_CHECKPOINT_FLAGS = frozenset(("checkpoint_file", "checkpoint_path"))


def _flag(key: tuple[str, ...], value: str, where: Located, origin: str, prefix: str) -> Setting:
    roles = roles_of(key, value)
    if len(key) == 1 and key[0] in WRITTEN_CHECKPOINT_FLAGS and is_path_like(value):
        roles = roles | {OUTPUT}
    if "ModelCheckpoint" in value:
        roles = roles | {CKPT_INTERVAL}
    return Setting(key, value, where, roles, value, prefix + origin)


def positional_configs(words: Sequence[Located]) -> list[Located]:
    """Config files passed as plain arguments (``python run_sft.py recipes/sft.yaml``)."""
    found = []
    previous = ""
    for word in words:
        text = str(word.value)
        if text.endswith(CONFIG_SUFFIXES) and not text.startswith("-") and "=" not in text \
                and not _is_flag(previous) and not previous.startswith("-"):
            found.append(word)
        previous = text
    return found
