"""Inline suppression comments: ``# spikelint: disable=SPK101 reason="…" until=2026-12-31``.

Also detect-secrets' ``pragma: allowlist secret`` / ``pragma: allowlist nextline secret``,
so repositories that already use them keep working.
"""

from __future__ import annotations

from datetime import date


from spikelint.util.lazyre import lazy_regex
from spikelint.model import Suppression

_RULE = r"[A-Z][A-Z0-9]{1,9}\d{0,3}"  # SPK101, a family SPK1, a team's ACME001 or ACME
DIRECTIVE = lazy_regex(
    rf"#\s*spikelint:\s*(?P<scope>disable-file|disable)\s*=\s*(?P<rules>{_RULE}(?:\s*,\s*{_RULE})*)"
    r"(?P<rest>[^#\n]*)")
REASON = lazy_regex(r"""reason\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""")
UNTIL = lazy_regex(r"until\s*=\s*[\"']?([^\s\"',]+)")  # any value: one that is no date is reported
PRAGMA = lazy_regex(r"pragma:\s*allowlist\s+(nextline\s+)?secret")


def _is_comment_only(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith("#") or stripped.startswith('"#') or stripped.startswith("'#")


def _next_code_line(lines: list[str], index: int) -> int:
    """1-based number of the first non-blank, non-comment line after ``index`` (0-based)."""
    for following in range(index + 1, len(lines)):
        if lines[following].strip() and not _is_comment_only(lines[following]):
            return following + 1
    return index + 2


def _continued(lines: list[str], first: int) -> list[int]:
    """1-based numbers of a command that goes on over backslash-continued lines, from ``first``.

    A comment cannot sit on a continued line of a shell command or Dockerfile instruction, so a
    directive above the command covers all of it (a literal in its seventh line included).
    """
    numbers = [first]
    while numbers[-1] - 1 < len(lines) and lines[numbers[-1] - 1].rstrip().endswith("\\"):
        numbers.append(numbers[-1] + 1)
    return numbers


DOCKERFILE_TRAILING = ("Docker reads a '#' after an instruction as its arguments, not as a comment "
                       "— move it to its own line above the instruction")


def parse_suppressions(lines: list[str], line_numbers: list[int] | None = None, *,
                       trailing_comments: bool = True) -> list[Suppression]:
    """Directives in ``lines``; ``line_numbers`` maps each line to its file line (notebooks).

    ``trailing_comments=False`` (Dockerfiles: ``#`` starts a comment only at the start of a line) keeps a
    directive written after an instruction as a misplaced one, honoured nowhere and reported.
    """
    found: list[Suppression] = []
    for index, line in enumerate(lines):
        if "spikelint" not in line and "pragma" not in line:
            continue
        number = line_numbers[index] if line_numbers else index + 1
        for match in DIRECTIVE.finditer(line):
            rules = tuple(rule.strip() for rule in match.group("rules").split(","))
            rest = match.group("rest")
            reason_match = REASON.search(rest)
            reason = next((group for group in reason_match.groups() if group is not None), None) if reason_match else None
            until_match = UNTIL.search(rest)
            if match.group("scope") == "disable-file":
                applies: tuple[int, ...] = ()
            elif _is_comment_only(line):
                targets = _continued(lines, _next_code_line(lines, index))
                if line_numbers:
                    targets = [line_numbers[target - 1] if target - 1 < len(line_numbers) else number + 1
                               for target in targets]
                applies = (number, *targets)
            else:
                applies = (number,)
            misplaced = "" if trailing_comments or match.group("scope") == "disable-file" or _is_comment_only(line) \
                else DOCKERFILE_TRAILING
            found.append(Suppression(rules, number, applies, reason, until_match.group(1) if until_match else None,
                                     column=match.start() + 1, misplaced=misplaced))
        pragma = PRAGMA.search(line)
        if pragma:
            applies = (number + 1,) if pragma.group(1) else (number,)
            if pragma.group(1) and line_numbers and index + 1 < len(line_numbers):
                applies = (line_numbers[index + 1],)
            found.append(Suppression(("SPK2",), number, applies, "pragma: allowlist secret", None,
                                     column=pragma.start() + 1, report_unused=False))
    return found


def covers(suppression: Suppression, rule: str, line: int) -> bool:
    if not any(rule.startswith(prefix) for prefix in suppression.rules):
        return False
    return not suppression.applies_to or line in suppression.applies_to


def until_date(text: str) -> date | None:
    """A suppression's ``until=`` as a date; ``None`` when it is not one (``2026-13-45``, ``next-year``)."""
    try:
        return date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def expired(suppression: Suppression, today: date) -> bool:
    """Past its ``until=`` date; a date that does not read suppresses nothing: a typo must not turn an
    expiry into a permanent suppression (SPK002 says so)."""
    if suppression.until is None:
        return False
    until = until_date(suppression.until)
    return until is None or until < today
