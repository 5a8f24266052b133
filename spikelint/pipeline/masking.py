"""One redaction pass: a value a secret rule reported is masked wherever else it would show.

Secret rules redact their own messages, but the same value can reach the output another
way: a parse error quoting it (``found undefined alias 'Zq8v…'``), a path whose last part is
the token, an image reference whose tag is the token, or the source line shown under a
finding of another rule.  After a file's findings are collected, the values its secret
findings point at are read back from the file's lines (at the finding's own span, so the
value never travels in a finding) and masked in every message and in the lines kept for
code frames.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable
from typing import Iterable
from typing import Sequence

from spikelint.model import Finding
from spikelint.secrets.output_mask import mask_in_place
from spikelint.secrets.output_mask import same_width as padded

SECRET_FAMILY = "SPK2"
MIN_MASKED = 8  # shorter values are too likely to be ordinary words elsewhere in a message
SHOWN = 4
# Parsers and messages strip the punctuation around a value (a YAML alias loses its ``*``,
# a quoted value its quotes), so the value without it is masked too.
EDGES = """ \t'"`*&!|,;:()[]{}<>"""


def masked(value: str) -> str:
    """``Zq8v…``: the first few characters, never more than a quarter of the value."""
    return value[: min(SHOWN, len(value) // 4)] + "…"


def needles(values: Iterable[str]) -> list[str]:
    """The values and their punctuation-free parts worth masking, longest first."""
    found: set[str] = set()
    for value in values:
        if len(value) >= MIN_MASKED:
            found.add(value)
        core = value.strip(EDGES)
        if len(core) >= MIN_MASKED:
            found.add(core)
    return sorted(found, key=lambda text: (-len(text), text))


# A value that is one plain word (``password``, ``Welcome``) is masked only where it stands alone: inside a
# longer name (``root_password``, the key that holds it) it is part of the name, not the secret.
WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+")
GLUED = re.compile(r"\w")


def _is_word(part: str) -> bool:
    return WORD.fullmatch(part) is not None


def _glued(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` sits inside a longer name (a word character on either side)."""
    return (start > 0 and GLUED.match(text[start - 1]) is not None) or \
        (end < len(text) and GLUED.match(text[end]) is not None)


def masker(values: Iterable[str], same_width: bool = False) -> Callable[[str], str]:
    """A function masking every occurrence of ``values`` (and their parts, see :func:`needles`)."""
    parts = needles(values)
    if not parts:
        return lambda text: text
    form = padded if same_width else masked
    if len(parts) > MAX_ALTERNATION:
        return _indexed_masker(parts, form)
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(part)}(?!\w)" if _is_word(part) else re.escape(part)
                                  for part in parts))
    return lambda text: pattern.sub(lambda match: form(match.group(0)), text) if text else text


# Past this many values one alternation tries every value at every position of every text (a
# file of 3,000 secret-named keys took seconds per 1,000); then values are looked up by prefix.
MAX_ALTERNATION = 64


def _indexed_masker(parts: list[str], form: Callable[[str], str]) -> Callable[[str], str]:
    """Masking by a dictionary of the values' first MIN_MASKED characters: one lookup per position,
    the longest value first where several share a prefix (``parts`` is longest first)."""
    index: dict[str, list[str]] = {}
    for part in parts:
        index.setdefault(part[:MIN_MASKED], []).append(part)

    def mask(text: str) -> str:
        pieces: list[str] = []
        position = done = 0
        last = len(text) - MIN_MASKED
        lookup = index.get
        while position <= last:
            candidates = lookup(text[position:position + MIN_MASKED])
            found = None if candidates is None else next(
                (part for part in candidates if text.startswith(part, position)
                 and not (_is_word(part) and _glued(text, position, position + len(part)))), None)
            if found is None:
                position += 1
                continue
            pieces += [text[done:position], form(found)]
            position = done = position + len(found)
        return "".join(pieces) + text[done:] if pieces else text

    return mask


def reported_values(findings: Iterable[Finding], path: str, lines: Sequence[str]) -> list[str]:
    """The secret values the file's secret findings point at (single-line spans of the file)."""
    values: list[str] = []
    for finding in findings:
        if not finding.rule.startswith(SECRET_FAMILY) or finding.path != path:
            continue
        if finding.end_line != finding.line or finding.end_column is None or not 0 < finding.line <= len(lines):
            continue
        value = lines[finding.line - 1][finding.column - 1:finding.end_column - 1]
        if len(value.strip()) >= MIN_MASKED:
            values.append(value.strip())
    return values


def mask_file(findings: list[Finding], path: str, lines: list[str], notes: list[str],
              team_shapes: Sequence[re.Pattern[str]] = ()) -> tuple[list[Finding], list[str], list[str]]:
    """Findings, source lines and other messages of one file with its reported secrets masked, and
    whatever else in the shown lines the output's own mask would hide (before a code frame cuts it),
    a team's own token shapes included."""
    values = reported_values(findings, path, lines)
    lines = [mask_in_place(line, team_shapes) for line in lines]
    if not values:
        return findings, lines, notes
    hide, hide_in_source = masker(values), masker(values, same_width=True)
    return ([replace(finding, message=hide(finding.message)) for finding in findings],
            [hide_in_source(line) for line in lines], [hide(note) for note in notes])


def mask_findings(findings: list[Finding], values: Iterable[str]) -> list[Finding]:
    """Findings (of any files) with ``values`` masked in their messages."""
    hide = masker(values)
    return [replace(finding, message=hide(finding.message)) for finding in findings]


def finding_lines(text: str, findings: list[Finding]) -> list[str]:
    """The file's lines up to its last finding's, empty but where a finding is (its snippet): no
    other line is shown, and only the shown ones need masking (or space in the report and the cache)."""
    shown = {finding.line for finding in findings}
    lines = text.splitlines()[:max(shown, default=0)]
    return [line if number in shown else "" for number, line in enumerate(lines, 1)]
