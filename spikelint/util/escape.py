"""Showing untrusted text (file names, source snippets, messages) on a terminal or in a log.

A contributor chooses file names and file contents; a newline in a name could forge a new
log line (a CI workflow command), an escape sequence could drive the terminal, and a report
pasted into a shell should not run what a name spells.  Formats with their own escaping
(JSON, XML, GitHub workflow commands) apply it themselves; these helpers cover plain text.
"""

from __future__ import annotations

from spikelint.util.lazyre import lazy_regex


SHELL_ACTIVE = lazy_regex(r"[$`;|&<>()!\\\"'{}*?\[\]#~]")
# the ``!`` between a committed archive and a member's name (``bundle.tar.gz!src/.env``) is spikelint's, not the file's
ARCHIVE_MEMBER = lazy_regex(r"(\.(?:zip|tar|tgz|tar\.gz|tar\.bz2|tbz2|tar\.xz|txz))!(?=[^!]*$)")


def printable(text: str) -> str:
    """Control and other non-printable characters as Python escapes (``\\n``, ``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char == " " else ascii(char)[1:-1] for char in text)


def shell_inert_path(path: str) -> str:
    """``path`` as text shows it: escaped, and single-quoted when a shell would expand any of it.

    Ordinary names (letters, digits, ``/._-+@%=,:``) are shown as they are, so editors can
    still jump to ``path:line:col``.
    """
    shown = printable(path)
    if not SHELL_ACTIVE.search(ARCHIVE_MEMBER.sub(r"\1", shown, count=1)):  # ``bundle.tar.gz!src/.env`` as documented
        return shown  # a space alone is common in notebook names and harmless when not executed
    return "'" + shown.replace("'", "'\\''") + "'"
