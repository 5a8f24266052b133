"""The secret detectors over the lines each commit added: one finding per secret and path.

Added lines are free text without the rest of their file, so they are read the way ``check``
reads text files (:func:`spikelint.secrets.text.scan_text`, in the mode the file's name
gives): token shapes everywhere, ``key = value`` assignments of secret-named keys,
private-key blocks over consecutive added lines.  A secret is reported once per path, at
the oldest commit that added it; its fingerprint is the one ``check`` gives the secret's first
occurrence at that path, whichever SPK2 rule reports it there (path and hash of the secret),
so one baseline serves both commands.
"""

from __future__ import annotations

from typing import Iterable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.checks.secrets.encoded import with_encoded
from spikelint.checks.secrets.found import Found
from spikelint.files import is_excluded
from spikelint.history.gitlog import Added
from spikelint.secrets.carriers import text_mode
from spikelint.secrets.redact import redact
from spikelint.secrets.redact import secret_key
from spikelint.secrets.text import CODE
from spikelint.secrets.text import CONFIG
from spikelint.secrets.text import scan_text
from spikelint.documents.suppressions import covers
from spikelint.documents.suppressions import parse_suppressions
from spikelint.team.secrets import SecretPattern
from spikelint.team.secrets import applies_to
from spikelint.team.secrets import line_matches

RULE = "SPK201"
SHORT_SHA = 12
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw", ".pyx")
FIX = ("rotate it: it stays in every clone until the history is rewritten (git filter-repo), and load it from a "
       "secret store or an environment variable injected from a secret")


class Leak(NamedTuple):
    """A secret some commit added; ``key`` is the secret's hash, ``shown`` its redacted form."""

    commit: str
    date: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    type: str
    shown: str
    key: str


def scan_added(added: Added, exclude: tuple[str, ...] = (), patterns: Sequence[SecretPattern] = ()) -> Iterator[Leak]:
    """The secrets in one run of added lines, a team's own shapes (``patterns``) included, less those an
    inline directive suppresses."""
    if exclude and is_excluded(added.path, exclude):
        return
    text = "\n".join(added.lines)
    hits = scan_text(text, first_line=added.line, mode=history_mode(added.path, text))
    found = with_encoded(text, [Found(RULE, *hit) for hit in hits], added.line)  # tokens inside encoded values, as check
    team = [match for pattern in patterns if applies_to(pattern, added.path)
            for match in line_matches(pattern, added.lines, added.line)]
    if team:  # a secret the team's shape and a detector both find is one, named as the team names it (as check does)
        places = {(match.line, match.column, match.end_line, match.end_column) for match in team}
        found = team + [hit for hit in found if (hit.line, hit.column, hit.end_line, hit.end_column) not in places]
    if not found:
        return
    suppressions = parse_suppressions(list(added.lines), list(range(added.line, added.line + len(added.lines))))
    for hit in found:
        if any(covers(suppression, RULE, hit.line) for suppression in suppressions):
            continue
        yield Leak(added.commit, added.date, added.path, hit.line, hit.column, hit.end_line, hit.end_column,
                   hit.type, redact(hit.value, hit.type), secret_key(hit.value))


def history_mode(path: str, text: str) -> str:
    """How added lines are read: as ``check`` reads the file kind as text, except Python, which
    ``check`` parses (without the rest of the file, a quoted literal after ``=`` is what counts:
    ``one_ring_pass = partial(ring_pass, 1)`` is no password)."""
    mode = text_mode(path, text)
    if mode == CONFIG and path.lower().endswith(PYTHON_SUFFIXES):
        return CODE
    return mode


def scan_all(runs: Iterable[Added], exclude: tuple[str, ...] = (),
             patterns: Sequence[SecretPattern] = ()) -> tuple[list[Leak], set[str]]:
    """Every secret of ``runs`` (oldest commit first), once per path: where it was first added;
    and the paths the runs touched (what the summary counts as files checked)."""
    paths: set[str] = set()

    def leaks() -> Iterator[Leak]:
        for added in runs:
            paths.add(added.path)
            yield from scan_added(added, exclude, patterns)

    return first_per_path(leaks()), paths


def first_per_path(leaks: Iterable[Leak]) -> list[Leak]:
    """The first leak of each (path, secret): a line edited later without removing the token
    adds it again, but it is one secret to rotate."""
    seen: set[tuple[str, str]] = set()
    kept: list[Leak] = []
    for leak in leaks:
        identity = (leak.path, leak.key)
        if identity not in seen:
            seen.add(identity)
            kept.append(leak)
    return kept


def message(leak: Leak) -> str:
    return f"hardcoded {leak.shown} added in commit {leak.commit[:SHORT_SHA]} ({leak.date[:10]}): {FIX}"
