"""A secret found in a document: where it is written, what its message says, one finding per value.

Every collector of the secret checks yields ``Found``; this is the one place that turns them
into problems (redacted message, hashed key) and drops the duplicates two recognisers make.
"""

from __future__ import annotations

from typing import Iterable
from typing import NamedTuple
from typing import Sequence

from spikelint.model import Problem
from spikelint.secrets.detectors import Secret
from spikelint.secrets.redact import redact
from spikelint.secrets.redact import secret_key


FIX_GENERAL = "rotate it and load it from a secret store or an environment variable injected from a secret"
FIX_ENV = ("reference a secret instead (valueFrom.secretKeyRef, Run:ai SECRET:<name>,<key> or --env-secret, "
           "REST secret: {name, key}) and rotate it")
FIX_COMMAND = ("command lines show up in ps, shell history, CI logs and the workload spec: pass it through an "
               "environment variable populated from a secret, and rotate it")


class Found(NamedTuple):
    """A secret located in a document, with the rule that reports it and how to say where it is."""

    rule: str
    value: str
    type: str
    line: int
    column: int
    end_line: int
    end_column: int
    context: str = ""  # " under 'HF_TOKEN'", " in cell 3", …
    message: str = ""  # the whole message, where it names no value (a Dockerfile's build argument or COPY)


# --------------------------------------------------------------------------- positions


def locate(lines: list[str], value: str, first: int, last: int, fallback: tuple[int, int]) -> tuple[int, int, int, int]:
    """Where ``value`` is written between lines ``first`` and ``last`` (1-based, inclusive).

    Parsers give the position of the scalar or word; the secret inside it is found by
    searching the file lines, which also copes with block scalars, JSON escapes around it
    and words joined across continuation lines.
    """
    needle = value.split("\n", 1)[0][:60] or value[:60]
    if needle:
        for number in range(max(first, 1), min(max(last, first), len(lines)) + 1):
            column = lines[number - 1].find(needle)
            if column >= 0:
                if "\n" in value:
                    return number, column + 1, number, column + 1 + len(needle)
                return number, column + 1, number, column + 1 + len(value)
    return fallback[0], fallback[1], fallback[0], fallback[1]


def found_at(rule: str, lines: list[str], secret: Secret, first: int, last: int, fallback: tuple[int, int],
           context: str = "") -> Found:
    line, column, end_line, end_column = locate(lines, secret.value, first, last, fallback)
    return Found(rule, secret.value, secret.type, line, column, end_line, end_column, context)


def quoted_key(key: str, value: str) -> str:
    if not key or value in key or len(key) > 60:
        return ""
    return f" under {key!r}"


# --------------------------------------------------------------------------- messages


MESSAGES = {  # {shown}: the redacted secret; {context}: where it is (key, cell, flag, image layer …)
    "SPK201": "hardcoded {shown}{context} — " + FIX_GENERAL,
    "SPK202": "secret-named env var{context} has the literal value {shown} — " + FIX_ENV,
    "SPK203": "credential {shown} {context} — " + FIX_COMMAND,
    "SPK204": ("notebook output{context} shows {shown} — rotate it, clear the outputs "
               "(jupyter nbconvert --clear-output --inplace) and stop printing secrets"),
    "SPK205": "image {context} holds {shown} — rebuild without it (BuildKit --mount=type=secret) and rotate it",
    "SPK206": ("credential file/object committed: {shown}{context} — remove it from the repository "
               "(and its history), keep only a reference, and rotate it"),
}


def _message(found: Found) -> str:
    if found.message:
        return found.message
    context = found.context or ("on a command line" if found.rule == "SPK203" else "")
    return MESSAGES[found.rule].replace("{shown}", redact(found.value, found.type)).replace("{context}", context)


def to_problem(found: Found) -> Problem:
    return Problem(found.rule, found.line, found.column, _message(found), end_line=found.end_line,
                   end_column=found.end_column, key=secret_key(found.value))


def one_value_one_finding(found: Iterable[Found], taken: Iterable[tuple[int, str]] = ()) -> list[Found]:
    """Drop general (SPK201) findings of values that a specific rule reports on the same line.

    A value two recognisers read (a service-account key as file text and as a parsed object)
    is reported once: one finding per rule and position.
    """
    items = list(found)
    specific: dict[int, list[str]] = {}
    for line, value in [(item.line, item.value) for item in items if item.rule != "SPK201"] + list(taken):
        specific.setdefault(line, []).append(value)
    kept: list[Found] = []
    seen: set[tuple[str, int, str]] = set()
    places: set[tuple[str, int, int]] = set()
    for item in items:
        identity = (item.rule, item.line, item.value)
        place = (item.rule, item.line, item.column)
        if identity in seen or place in places:
            continue
        seen.add(identity)
        places.add(place)
        if item.rule == "SPK201" and _reported_on_line(item.value, specific.get(item.line, ())):
            continue
        kept.append(item)
    return kept


def _reported_on_line(value: str, values: Sequence[str]) -> bool:
    """A specific rule reported ``value`` (or a value holding it, or held by it) on the same line."""
    if not values:
        return False
    if value in values:
        return True
    return any(value in other or other in value for other in values[:MAX_SAME_LINE])


MAX_SAME_LINE = 200  # values compared per line: beyond that a line is generated text, and exact matches decide

