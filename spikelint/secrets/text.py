"""Scan free text (``.env`` files, notebook outputs, markdown, embedded scripts, image history)
for credentials, with positions.

Free text has no structure, so the key context comes from what the line itself says:
``NAME=value``, ``name: value``, ``"name": "value"``, ``Authorization: Bearer …``,
``wandb login <key>``.  Only lines holding a secret-ish word are examined for assignments,
and a whole-text prefilter skips texts that hold nothing token-shaped.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterator
from typing import NamedTuple

from spikelint.util.lazyre import lazy_regex
from spikelint.secrets.context import is_documented_public_value
from spikelint.secrets.context import is_placeholder
from spikelint.secrets.context import is_reference
from spikelint.secrets.context import classify_key
from spikelint.secrets.context import literal_secret_under_key
from spikelint.secrets.detectors import Secret
from spikelint.secrets.detectors import keyed_secret
from spikelint.secrets.detectors import looks_random
from spikelint.secrets.detectors import token_secrets
from spikelint.secrets.detectors import without_overlaps


class Hit(NamedTuple):
    """A secret found in a text, at 1-based positions."""

    value: str
    type: str
    line: int
    column: int
    end_line: int
    end_column: int


HINT_WORDS = ("tok", "secret", "pass", "pwd", "key", "cred", "auth", "bearer", "wandb", "senha", "contrase")
SECRET_HINT = lazy_regex("(?i)" + "|".join(HINT_WORDS))
# ``=``, ``:``, ``=>``, Go's ``:=``, make's ``::=``/``:::=``/``?=``, PHP's ``.=``
ASSIGNMENT_KEY = lazy_regex(r"(?P<key>[A-Za-z_][\w.-]{0,80}?)[\"']?[ \t]*(?::{1,3}=|=>|\.=|\?=|=|:)[ \t]*")
# ``setProperty("API_TOKEN", "…")``, ``os.environ.setdefault("HF_TOKEN", "…")``: a name and a value as arguments
SETTER_ARGUMENTS = lazy_regex(r"\(\s*[\"'](?P<key>[A-Za-z_][\w.-]{0,80})[\"']\s*,\s*")
# a plain value ends at an escaped newline or tab (``"A_TOKEN=value\\nNEXT=…"`` inside a JSON string)
ASSIGNMENT_VALUE = lazy_regex(r"""(?P<quote>["'`])(?P<quoted>[^"'`\n]{1,500})(?P=quote)"""
                              r"""|(?P<plain>(?:(?!\\[nrt])[^\s"'`,;)}\]]){1,500})""")
# ``var apiToken string = "…"`` (Go), ``val apiToken: String = "…"`` (Kotlin): a type between name and value
TYPED_KEY = lazy_regex(r"(?P<key>[A-Za-z_]\w{0,80})[ \t]*:?[ \t]+(?:string|String|str)[ \t]*(?::=|=)[ \t]*")
# ``<apiToken>value</apiToken>``, also with the value on a line of its own
XML_ELEMENT = lazy_regex(r"<(?P<key>[A-Za-z_][\w.-]{0,80})>[ \t]*\n?[ \t]*(?P<value>[^<>\s\"']{8,500})[ \t]*\n?[ \t]*</(?P=key)>")
EXPORT_KEY = lazy_regex(r"(?:^|[\s;&|(])(?:export|set|setenv|declare|local|readonly|ENV|ARG|%env|%set_env)\s+(?:-\w+\s+)*"
                        r"(?P<key>[A-Za-z_]\w{0,80})[ \t]+(?P<value>[^\s=\"']\S{3,500})")
AUTH_HEADER = lazy_regex(r"(?i)(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|apikey|api-key|"
                         r"api-token)\s+|(?=sha256~))(?P<value>[\w=~@.+/-]{8,})")  # sha256~…: an OpenShift token
API_KEY_HEADER = lazy_regex(r"(?i)\b(?:x-api-key|api-key|api-token|private-token|x-auth-token|x-goog-api-key)[\"']?\s*:\s*"
                            r"[\"']?(?P<value>[\w=~.+/-]{12,})")
NETRC_LINE = lazy_regex(r"\bmachine\s+\S+\s+(?:login\s+\S+\s+)?(?:password|passwd)\s+[\"']?(?P<value>[^\s\"']{4,})")
CODE_ASSIGNMENT = lazy_regex(r"""(?P<key>[A-Za-z_][\w.]{0,80})["'`]?[ \t]*(?::=|=|:)[ \t]*(?P<quote>["'`])"""
                             r"""(?P<value>[^"'`\n\\]{1,500})(?P=quote)(?=[\s,;)}\]]|$)""")
DATA_URI = lazy_regex(r"(?P<head>data:[\w/+.-]{1,100};base64,)(?P<payload>[A-Za-z0-9+/=]{16,})")
COMMENT_MARKS = ("#", "//", "/*", "* ", ";", "<!--")
LONG_LINE = 1000  # characters: a line this long is generated (minified, bundled, a data blob)
LOWER_HINT = lazy_regex("|".join(HINT_WORDS))
# ``-u user:pass``, ``--user "j.smith:dB2y@…"``, ``-u ":pass"`` (no user), ``--user kevin:'pass'``
USER_FLAG = lazy_regex(r"""-(?:u|-user)(?:[ \t]{1,5}|=)["']?(?P<user>[^\s:"'$]{0,200}):["']?"""
                       r"""(?P<password>[^\s"']{0,200})(?=["']?(?:\s|$))""")
NEWLINE = lazy_regex("\n")
CLIENT_WORD = lazy_regex(r"\b(?:curl|wget)\b")
CONFIG, CODE, PROSE, DATA = "config", "code", "prose", "data"
WANDB_CONTEXT = lazy_regex(r"(?i)wandb[\w.( -]{0,30}?(?:login|key|token)[^0-9a-f\n]{0,20}?(?<![0-9a-f])"
                           r"(?P<value>[0-9a-f]{40})(?![0-9a-f])")


class LineIndex:
    """Offsets in a text -> 1-based (line, column), relative to where the text was written."""

    def __init__(self, text: str, first_line: int = 1, first_column: int = 1) -> None:
        self.starts = [0] + [match.end() for match in re.finditer("\n", text)]
        self.first_line = first_line
        self.first_column = first_column

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        column = offset - self.starts[index] + 1
        if index == 0:
            column += self.first_column - 1
        return self.first_line + index, column


def _hit(secret: Secret, index: LineIndex) -> Hit:
    line, column = index.position(secret.start)
    end_line, end_column = index.position(secret.end)
    return Hit(secret.value, secret.type, line, column, end_line, end_column)


def _assignment_values(line: str) -> Iterator[tuple[str, str, int]]:
    """``(key, value, offset of value)`` for each ``key=value`` / ``key: value`` on a line."""
    for match in ASSIGNMENT_KEY.finditer(line):
        value = ASSIGNMENT_VALUE.match(line, match.end())
        if value is None:
            continue
        group = "quoted" if value.group("quoted") is not None else "plain"
        text, start = value.group(group), value.start(group)
        if match.start() >= 2 and line.startswith("${", match.start() - 2) and line[match.end() - 1] == ":":
            # ``${PASS:-default}``: the shell's fallback literal, without its operator; ``${PASS:?message}``
            # and ``${PASS:+alternative}`` hold no value the variable falls back to
            if text[:1] not in ("-", "="):
                continue
            text, start = text[1:], start + 1
            if not text:
                continue
        yield match.group("key"), text, start
    for match in EXPORT_KEY.finditer(line):
        yield match.group("key"), match.group("value").strip("\"'"), match.start("value")
    # a call's name-and-value arguments, a typed declaration: only a quoted value counts there
    for regex, present in ((SETTER_ARGUMENTS, "(" in line), (TYPED_KEY, "str" in line or "String" in line)):
        for match in regex.finditer(line) if present else ():
            value = ASSIGNMENT_VALUE.match(line, match.end())
            if value is not None and value.group("quoted") is not None:
                yield match.group("key"), value.group("quoted"), value.start("quoted")


def _context_secrets(line: str, offset: int, mode: str) -> Iterator[Secret]:
    """Secrets a line reveals through its own words: assignments, auth headers, W&B logins.

    Prose (and comment lines) reveal only what is shaped like a credential: headers and W&B
    logins; source code only assigns a quoted literal.
    """
    stripped = line.lstrip()
    prose = mode == PROSE or stripped.startswith(COMMENT_MARKS)
    if not prose:
        for match in NETRC_LINE.finditer(line):
            value = match.group("value")
            if not is_placeholder(value) and not is_reference(value):
                yield Secret(value, "password in a netrc line", offset + match.start("value"),
                             offset + match.end("value"))
    for match in WANDB_CONTEXT.finditer(line):
        yield Secret(match.group("value"), "Weights & Biases API key", offset + match.start("value"),
                     offset + match.end("value"))
    if not prose:
        assignments = _code_assignments(line) if mode == CODE else _assignment_values(line)
        for key, value, start in assignments:
            kind = classify_key(key)
            if not kind.secret:
                continue
            for secret in keyed_secret(value, key, kind, prose=True):
                yield Secret(secret.value, secret.type, offset + start + secret.start, offset + start + secret.end)
    for regex, secret_type in ((AUTH_HEADER, "token in Authorization header"), (API_KEY_HEADER, "API key header")):
        for match in regex.finditer(line):
            value = match.group("value")
            if looks_random(value, 12) and not is_placeholder(value) and not is_documented_public_value(value):
                yield Secret(value, secret_type, offset + match.start("value"), offset + match.end("value"))


def _user_flag_secrets(line: str, offset: int) -> Iterator[Secret]:
    """``curl -u user:password`` / ``--user user:password`` / ``-u TOKEN:`` written in any text."""
    for match in USER_FLAG.finditer(line):
        if match.start() > 0 and not line[match.start() - 1].isspace():
            continue
        user, password = match.group("user"), match.group("password")
        if password:
            value, start, kind = password, match.start("password"), classify_key("password")
        else:
            value, start, kind = user, match.start("user"), classify_key("token")
        if literal_secret_under_key(value, kind, prose=True):
            yield Secret(value, "password" if password else "token", offset + start, offset + start + len(value))


def _code_assignments(line: str) -> Iterator[tuple[str, str, int]]:
    """Source code read as text: only a quoted literal right after ``=``/``:=``/``:`` counts."""
    for match in CODE_ASSIGNMENT.finditer(line):
        yield match.group("key"), match.group("value"), match.start("value")


def _blank_data_uris(text: str) -> str:
    """Base64 payloads of ``data:`` URIs (images in SVG, inline source maps) hold no credential."""
    if "base64," not in text:
        return text
    return DATA_URI.sub(lambda match: match.group("head") + " " * len(match.group("payload")), text)


def find_in_text(text: str, key: str = "", mode: str = CONFIG) -> list[Secret]:
    """Secrets in ``text`` as offsets (token shapes everywhere, key context per line).

    ``mode`` says what the text is: ``CONFIG`` (``.env``, scripts, values), ``CODE`` (source
    code of languages read as text), ``PROSE`` (docs, comments) or ``DATA`` (datasets,
    minified and generated content, where only token shapes are looked for).
    """
    text = _blank_data_uris(text)
    long_text = len(text) > LONG_LINE
    found = token_secrets(text, fast=mode == DATA or long_text and _has_long_line(text))
    if mode == DATA:
        return sorted(found, key=lambda secret: secret.start)
    context_key = classify_key(key) if key else None
    if context_key is not None and context_key.secret and not found and "\n" not in text.strip():
        found = keyed_secret(text, key, context_key)
    has_client = "curl" in text or "wget" in text
    if not has_client and not has_secret_hint(text):  # most scalars of a tree: no line to look at
        return sorted(without_overlaps(found), key=lambda secret: secret.start) if len(found) > 1 else found
    starts = [0] + [match.end() for match in NEWLINE.finditer(text)]
    hinted = _hinted_lines(text, starts)
    users = _lines_of(USER_FLAG.finditer(text), starts) if has_client else set()
    clients = _lines_of(CLIENT_WORD.finditer(text), starts) if users else set()
    for index in sorted(hinted | users):
        start = starts[index]
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(text)
        if end - start > LONG_LINE:
            continue
        line = text[start:end]
        if index in hinted:
            found.extend(_context_secrets(line, start, mode))
        if index in users and any(index - back in clients for back in range(6)):
            found.extend(_user_flag_secrets(line, start))
    if "</" in text and mode != PROSE:
        found.extend(_xml_element_secrets(text))
    return sorted(without_overlaps(found), key=lambda secret: secret.start)


def _xml_element_secrets(text: str) -> Iterator[Secret]:
    """``<apiToken>…</apiToken>``: the element's name is the key (the value may sit on its own line)."""
    for match in XML_ELEMENT.finditer(text):
        key = match.group("key")
        kind = classify_key(key)
        if not kind.secret:
            continue
        start = match.start("value")
        for secret in keyed_secret(match.group("value"), key, kind, prose=True):
            yield Secret(secret.value, secret.type, start + secret.start, start + secret.end)


def has_secret_hint(text: str) -> bool:
    """Whether ``text`` holds a secret-ish word anywhere: ``in`` on the lower-cased text is ten
    times faster than the case-insensitive alternation on ordinary files."""
    lowered = text.lower()
    if len(lowered) < SHORT_HINT_TEXT:  # a scalar: one regex call beats eleven ``in`` tests
        return LOWER_HINT.search(lowered) is not None
    return any(word in lowered for word in HINT_WORDS)


SHORT_HINT_TEXT = 256


def _hinted_lines(text: str, starts: list[int]) -> set[int]:
    """Lines holding a secret-ish word; matched on the lower-cased text where that keeps offsets
    (a case-insensitive alternation is several times slower than a plain one)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return _lines_of(LOWER_HINT.finditer(lowered), starts)
    return _lines_of(SECRET_HINT.finditer(text), starts)


def _lines_of(matches: Iterator[re.Match[str]], starts: list[int]) -> set[int]:
    """The (0-based) lines the matches start on."""
    return {bisect.bisect_right(starts, match.start()) - 1 for match in matches}


def _has_long_line(text: str) -> bool:
    return any(len(line) > LONG_LINE for line in text.split("\n"))


def scan_text(text: str, first_line: int = 1, first_column: int = 1, key: str = "", mode: str = CONFIG) -> list[Hit]:
    """Secrets in ``text`` at file positions (``first_line``/``first_column``: where the text starts)."""
    if not text:
        return []
    secrets = find_in_text(text, key, mode)
    if not secrets:
        return []
    index = LineIndex(text, first_line, first_column)
    return [_hit(secret, index) for secret in secrets]
