"""The last step before anything is written: token shapes masked in the text itself.

Rules redact what they report, but other text reaches the output too: a message quoting an
unknown Dockerfile instruction, an image reference or a path, a code frame, a ``runai``
command line, a precheck message, a manifest.  Whatever produced it, every byte spikelint
writes (streams and files) passes :func:`mask_output`, which runs the same detectors as the
secret rules (token shapes, private keys, credentials in URLs, secret-named assignments)
over the text and keeps only the first characters of each hit.

The mask is ``abcd… (type)`` (``abcd... (type)`` in ASCII-only text): no quotes, backslashes,
``&`` or ``<``, so JSON, SARIF, JUnit XML and GitLab reports stay valid after it.
"""

from __future__ import annotations

import re
from typing import Any
from typing import Sequence
from typing import TextIO

from spikelint.util.lazyre import lazy_regex


SHOWN = 4
MIN_MASKED = 8  # a shorter hit is a word of the report, not a credential
ELLIPSIS = "…"
SHOWN_MARKS = (ELLIPSIS, "\\u2026", "...")  # what a value masked upstream ends in (JSON escapes it)
# A private key printed line by line is held until its end line (or this many lines).
HELD_LINES = 200


def masked(value: str, ellipsis: str = ELLIPSIS) -> str:
    """``hf_a…``: at most four characters and never more than a quarter of the value."""
    return value[: min(SHOWN, len(value) // 4)] + ellipsis


def type_label(secret_type: str) -> str:
    """`` (Hugging Face token)``: the secret's type as the spec asks, in characters that every
    report format carries unescaped (``&`` would break JUnit XML written before the mask)."""
    label = _UNSAFE_LABEL.sub("", secret_type.replace("&", "and")).strip()
    return f" ({label})" if label else ""


_UNSAFE_LABEL = re.compile(r"[^A-Za-z0-9 ._-]")


# A token's own prefix followed by random-looking characters: a token cut by whatever shortened the text
# (``ghp_aB3dE5fG7hJ9kL1mN3p``, ``glpat-x9Y…``), or glued to a name (``job-ghp_….yaml``, a file named after
# it), that the whole-shape detectors no longer recognise.
PARTIAL_TOKEN = lazy_regex(
    r"(?<![A-Za-z0-9])(?:"
    # prefixes no word starts with: any six characters after them are a token's
    r"(?:xox[abposre]-|xapp-|github_pat_|glpat-|gldt-|glrt-|glptt-|sk-proj-|sk-ant-|nvapi-|dckr_pat_|api_org_|"
    r"sk_live_|rk_live_|sk_test_)[A-Za-z0-9_-]{6,}"
    # short prefixes that words share (hf_hub_download, sk-learn): only random-looking characters after them
    r"|(?:gh[pousr]_|sk-|hf_|npm_|pypi-|AKIA|ASIA|AIza|ya29\.|r8_|dapi)"
    r"(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{6,})")


def _partial_tokens(text: str, ellipsis: str) -> str:
    return PARTIAL_TOKEN.sub(lambda found: masked(found.group(), ellipsis), text)


def mask_output(text: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """``text`` with every credential the secret detectors recognise in it masked, and every token cut short;
    ``extra``: a team's own token shapes (their first group, else the whole match), masked first."""
    if len(text) < MIN_MASKED:
        return text
    text = mask_shapes(text, extra)
    from spikelint.secrets.text import CONFIG  # the detectors load with the first text worth masking
    from spikelint.secrets.text import find_in_text

    secrets = find_in_text(text, mode=CONFIG)
    if not secrets:
        return _partial_tokens(text, "..." if text.isascii() else ELLIPSIS)
    # An ASCII-only text (the JSON report escapes everything else) stays ASCII-only.
    ellipsis = "..." if text.isascii() else ELLIPSIS
    pieces: list[str] = []
    done = 0
    for secret in sorted(secrets, key=lambda found: found.start):
        start, end = secret.start, secret.end
        if start < done or end - start < MIN_MASKED or any(mark in text[start:end] for mark in SHOWN_MARKS):
            continue  # already masked upstream (``hf_a…``) or too short to be a credential
        while end < len(text) and _escapes_next(text, start, end):
            end += 1  # never leave a lone ``\\`` that would escape the character after the mask
        pieces += [text[done:start], masked(text[start:end], ellipsis) + type_label(secret.type)]
        done = end
    return _partial_tokens("".join(pieces) + text[done:] if pieces else text, ellipsis)


def mask_in_place(text: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """``text`` with each credential :func:`mask_output` would hide replaced by a mask as wide as it
    (``ghp_…*****``); ``extra``: a team's own token shapes (their first group, else the match).  For the
    source lines of code frames: a frame cut to the terminal's width before the output is masked could
    cut a token in two that no pattern then recognises, and the caret under the line must keep its column."""
    if len(text) < MIN_MASKED:
        return text
    from spikelint.secrets.text import CONFIG
    from spikelint.secrets.text import find_in_text

    found = [(secret.start, secret.end) for secret in find_in_text(text, mode=CONFIG)]
    found += [match.span(1 if pattern.groups else 0) for pattern in extra for match in pattern.finditer(text)]
    spans = sorted([(start, end) for start, end in found if end - start >= MIN_MASKED]
                   + [match.span() for match in PARTIAL_TOKEN.finditer(text)])
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        if start < done:
            continue  # inside a span already masked
        pieces += [text[done:start], same_width(text[start:end])]
        done = end
    return "".join(pieces) + text[done:] if pieces else text


def same_width(value: str) -> str:
    """``Zq8v…*****``: masked, but as wide as the value, so carets under a source line stay aligned."""
    shown = masked(value)
    return shown + "*" * max(0, len(value) - len(shown))


def mask_shapes(text: str, patterns: Sequence[re.Pattern[str]]) -> str:
    """``text`` with what ``patterns`` (a team's token shapes) match masked: their first group, else the match."""
    if not patterns or len(text) < MIN_MASKED:
        return text
    ellipsis = "..." if text.isascii() else ELLIPSIS
    for pattern in patterns:
        group = 1 if pattern.groups else 0

        def shown(match: re.Match[str], group: int = group) -> str:
            secret = match.group(group) or ""
            if len(secret) < MIN_MASKED:
                return match.group()
            start, end = match.span(group)
            whole, offset = match.group(), match.start()
            return whole[: start - offset] + masked(secret, ellipsis) + whole[end - offset:]

        text = pattern.sub(shown, text)
    return text


def _escapes_next(text: str, start: int, end: int) -> bool:
    """Whether the span ends in an odd run of backslashes (in JSON it would escape what follows)."""
    run = 0
    while end - run - 1 >= start and text[end - run - 1] == "\\":
        run += 1
    return run % 2 == 1


class MaskedStream:
    """A text stream that masks what it is given, a line at a time (a private key: its whole block).

    Everything else (``isatty``, ``encoding``, ``fileno``, ``buffer``) is the wrapped stream's.
    A reader that goes away (``spikelint check | true``, a closed descriptor) does not end the run:
    what is written after that is dropped, so the exit code still says whether there were findings.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self.wrapped: TextIO = stream if stream is not None else _null_stream()  # started with the descriptor closed
        self._pending = ""
        self.team_shapes: tuple[re.Pattern[str], ...] = ()  # set once a command has read its configuration

    def write(self, text: str) -> int:
        self._pending += text
        cut = self._pending.rfind("\n")
        if cut < 0:
            return len(text)
        head = self._pending[: cut + 1]
        if "PRIVATE KEY" in head and "-----END" not in head[head.rfind("PRIVATE KEY"):] \
                and head.count("\n") < HELD_LINES:
            return len(text)  # the key's body lines are still to come: mask the block as a whole
        self._pending = self._pending[cut + 1:]
        self._send(mask_output(head, self.team_shapes))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, ""
            self._send(mask_output(pending, self.team_shapes))
        try:
            self.wrapped.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _send(self, text: str) -> None:
        try:
            self.wrapped.write(text)
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        """Drop what is still buffered for a reader that closed the pipe: the descriptor then points at
        the null device, so neither this run nor the interpreter's exit tries that pipe again."""
        import os

        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.wrapped.fileno())
            os.close(null)
        except (OSError, ValueError, AttributeError):  # no descriptor (an in-memory stream)
            self.wrapped = _null_stream()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def _null_stream() -> TextIO:
    import os

    return open(os.devnull, "w", encoding="utf-8")


def mask_team_shapes_on_streams(shapes: Sequence[re.Pattern[str]]) -> None:
    """Mask a team's own token shapes in everything the command writes from now on (``spikelint model``'s
    JSON, a message quoting a line), as the shapes spikelint knows are."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, MaskedStream):
            stream.team_shapes = tuple(shapes)
