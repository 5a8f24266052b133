"""Team secret patterns (``secrets:`` in a rule file, gitleaks-like): a token shape only this team knows.

Each match is an SPK201 finding naming the pattern, shown like every other secret (its first four characters
at most) and keyed by the secret's hash; ``allow`` entries and ``paths`` keep it to where it means something.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING
from typing import Any
from typing import Iterator
from typing import Sequence

from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import CheckSpec
from spikelint.files import is_excluded
from spikelint.model import Document
from spikelint.model import Problem
from spikelint.team.anchoring import anchored_path

if TYPE_CHECKING:
    from spikelint.checks.secrets.found import Found

MAX_MATCHES = 200  # a pattern that matches everywhere in one file says so 200 times at most


@dataclass(frozen=True)
class SecretPattern:
    id: str
    regex: re.Pattern[str]
    file: str
    line: int
    description: str = ""
    keywords: tuple[str, ...] = ()  # the line must hold one (lower-cased) before the regex runs
    entropy: float = 0.0  # the minimum Shannon entropy of the secret, in bits a character
    paths: tuple[str, ...] = ()  # globs: only these files (all when empty)
    allow_regexes: tuple[re.Pattern[str], ...] = ()
    allow_paths: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()
    bad: tuple[Any, ...] = ()
    good: tuple[Any, ...] = ()

    @property
    def type(self) -> str:
        """How messages name what was found: ``team pattern acme-api-key (ACME API key)``."""
        return f"team pattern {self.id}" + (f": {self.description}" if self.description else "")


def pattern_from_entry(entry: dict[str, Any], file: str, line: int, examples: tuple[tuple[Any, ...], tuple[Any, ...]],
                       error: type[Exception]) -> SecretPattern:
    """A validated pattern; ``error`` names the file and line of a regular expression that does not compile."""
    def compiled(text: str, what: str) -> re.Pattern[str]:
        try:
            return re.compile(text)
        except re.error as problem:
            raise error(f"{file}:{line}: secret pattern {entry['id']}: {what} {text!r} is not a valid regular "
                        f"expression: {problem}") from None

    regex = compiled(entry["regex"], "regex")
    if regex.groups > 1:
        raise error(f"{file}:{line}: secret pattern {entry['id']}: the regex has {regex.groups} capture groups — keep "
                    "one, around the secret (make the others non-capturing: (?:…))")
    allow = entry.get("allow") or {}
    return SecretPattern(
        id=entry["id"], regex=regex, file=file, line=line, description=entry.get("description", ""),
        keywords=tuple(word.lower() for word in entry.get("keywords") or ()), entropy=float(entry.get("entropy", 0)),
        paths=tuple(entry.get("paths") or ()),
        allow_regexes=tuple(compiled(text, "allow regex") for text in allow.get("regexes") or ()),
        allow_paths=tuple(allow.get("paths") or ()), stopwords=tuple(word.lower() for word in allow.get("stopwords") or ()),
        bad=examples[0], good=examples[1])


def team_secrets_check(patterns: tuple[SecretPattern, ...]) -> CheckSpec:
    return CheckSpec(("SPK201",), "document", frozenset(), partial(team_secrets, patterns))


def team_secrets(patterns: tuple[SecretPattern, ...], document: Document, ctx: CheckContext) -> Iterator[Problem]:
    from spikelint.checks.secrets.found import to_problem  # the secret rules' own messages and keys

    path = anchored_path(document, ctx.config) if any(p.paths or p.allow_paths for p in patterns) else document.path
    for pattern in patterns:
        if applies_to(pattern, path):
            for found in line_matches(pattern, document.lines):
                yield to_problem(found)


def applies_to(pattern: SecretPattern, path: str) -> bool:
    """Whether the pattern reads ``path`` (its ``paths:`` and ``allow: paths:``, globs as ``exclude:`` has them)."""
    if pattern.paths and not is_excluded(path, pattern.paths):
        return False
    return not (pattern.allow_paths and is_excluded(path, pattern.allow_paths))


def line_matches(pattern: SecretPattern, lines: Sequence[str], first_line: int = 1) -> Iterator[Found]:
    """The pattern's secrets in ``lines`` (a file's, or the lines a commit added from ``first_line`` on)."""
    from spikelint.checks.secrets.found import Found
    from spikelint.secrets.context import shannon_entropy  # the detectors' own measure

    reported = 0
    for number, line in enumerate(lines, first_line):
        if pattern.keywords and not any(word in line.lower() for word in pattern.keywords):
            continue
        for match in pattern.regex.finditer(line):
            group = 1 if pattern.regex.groups else 0
            secret = match.group(group)
            if not secret or shannon_entropy(secret) < pattern.entropy:
                continue
            if any(word in secret.lower() for word in pattern.stopwords):
                continue
            if any(allowed.search(secret) for allowed in pattern.allow_regexes):
                continue
            start, end = match.span(group)
            yield Found("SPK201", secret, pattern.type, number, start + 1, number, end + 1)
            reported += 1
            if reported >= MAX_MATCHES:
                return
