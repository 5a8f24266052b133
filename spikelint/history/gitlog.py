"""The lines each commit added, read from Git itself (``rev-list`` + ``diff-tree --stdin -p``).

A token committed and deleted in the next commit is still in every clone, so ``history``
reads what each commit *added*: ``diff-tree -p -U0`` against its parent (the root commit
against the empty tree), renames detected (``-M``) so a moved file does not add its lines
again, deleted files adding nothing.  A merge is read as a combined diff (``--cc``), keeping
only the lines new against every parent: the lines of a merged branch are read once, in the
branch's own commits (reachable too), and what the merge itself wrote is read there.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import IO
from typing import Iterator
from typing import NamedTuple

COMMIT_MARK = "\x1e"  # starts each commit's header line in diff-tree's output (never in a patch line)
HEADER_FORMAT = COMMIT_MARK + "%H %cI"
HUNK = re.compile(r"^(@{2,}) (?:-\d+(?:,\d+)? )+\+(\d+)(?:,\d+)? @{2,}")
QUOTED_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


class GitError(Exception):
    """Git refused (not a repository, an unknown revision): the message is Git's own reason."""


class Added(NamedTuple):
    """A run of consecutive lines one commit added to one file."""

    commit: str
    date: str  # the committer date, ISO 8601 (what ``--since`` filters on)
    path: str  # the file's path in that commit, '/'-separated, relative to the repository root
    line: int  # 1-based number of the first line in that commit's version of the file
    lines: tuple[str, ...]


def _git(arguments: list[str], cwd: Path) -> str:
    result = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, timeout=600, check=False)
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(" ".join(reason[-3:]) if reason else f"git {arguments[0]} exited with {result.returncode}")
    return result.stdout.decode("utf-8", "surrogateescape")


def repository_root(cwd: Path) -> Path:
    """The work tree's top folder; in a bare repository (a mirror) the repository itself."""
    try:
        if _git(["rev-parse", "--is-bare-repository"], cwd).strip() == "true":
            return Path(_git(["rev-parse", "--absolute-git-dir"], cwd).strip())
        return Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    except GitError as error:
        raise GitError(f"{error} (history needs a Git repository)") from None


# rev-list options that select commits; any other option (``--output=FILE`` writes a file) is refused
REVISION_OPTIONS = ("--not", "--all", "--branches", "--tags", "--remotes", "--glob=", "--exclude=", "--branches=",
                    "--tags=", "--remotes=", "--first-parent", "--no-merges")


def checked_revisions(revisions: list[str]) -> list[str]:
    """``revisions`` as given, when each is a revision or one of :data:`REVISION_OPTIONS`."""
    for revision in revisions:
        if revision.startswith("-") and not any(
                revision == option or option.endswith("=") and revision.startswith(option)
                for option in REVISION_OPTIONS):
            raise GitError(f"{revision!r} is not a revision or range (options allowed among them: "
                           f"{', '.join(REVISION_OPTIONS)})")
    return revisions


def commits(cwd: Path, revisions: list[str], since: str | None = None) -> list[str]:
    """The commits of ``revisions`` (``rev-list`` syntax; default ``HEAD``), oldest first."""
    checked_revisions(revisions)
    arguments = ["rev-list", "--reverse", "--topo-order"]
    if since:
        checked_since(since, cwd)
        arguments.append(f"--since={since}")
    if not revisions and not _has_head(cwd):
        return []  # a repository without a commit yet has no history
    return _git([*arguments, *(revisions or ["HEAD"]), "--"], cwd).split()


def checked_since(since: str, cwd: Path) -> None:
    """Git reads any text as a date (``notadate`` is now, ``2026-13-45`` next year), and a date that is not
    in the past selects no commit: the gate would pass having read nothing, so that is an error."""
    parsed = _git(["rev-parse", f"--since={since}"], cwd).strip()
    seconds = int(parsed.rpartition("=")[2]) if parsed.startswith("--max-age=") else None
    if seconds is None or seconds >= int(time.time()):
        raise GitError(f"--since {since!r} is not a date in the past as git reads it, so no commit would be "
                       "scanned; give one such as 2026-01-31 or '2 weeks ago'")


def _has_head(cwd: Path) -> bool:
    result = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd=cwd,
                            capture_output=True, timeout=60, check=False)
    return result.returncode == 0


class Unread(NamedTuple):
    """A file of a commit Git could not read: an object missing from the clone (a broken or partial one)."""

    commit: str
    path: str  # the file's path in that commit
    missing: str  # the object Git could not read


Listing = list[tuple[list[str], str]]  # each file a commit changes: its raw fields and its path
UNREADABLE = re.compile(r"unable to read (?:tree )?([0-9a-f]{40})")


def added_lines(cwd: Path, shas: list[str], unread: list[Unread] | None = None) -> Iterator[Added]:
    """Every run of added lines of every commit in ``shas`` (in that order), streamed from Git.

    With ``unread`` given, an object Git cannot read does not end the scan: each file that needs one is listed
    there, the commit's other files are read, and the scan goes on with the next commit."""
    start = 0
    while start < len(shas):
        seen: list[str] = []  # the commits whose header Git wrote
        read: dict[str, set[str]] = {}  # the paths each commit yielded lines for
        try:
            for added in _diff_tree(cwd, shas[start:], seen):
                read.setdefault(added.commit, set()).add(added.path)
                yield added
            return
        except GitError as error:
            missing = _missing_object(error) if unread is not None else None
            failing = _failing(cwd, shas, start, seen, missing) if missing is not None else None
            if unread is None or missing is None or failing is None:
                raise
            index, listing = failing
            commit = shas[index]
            yield from _readable_part(cwd, commit, listing, {missing}, read.get(commit, set()), unread)
            start = index + 1


def _missing_object(error: GitError) -> str | None:
    match = UNREADABLE.search(str(error))
    return match.group(1) if match else None


def _readable_part(cwd: Path, commit: str, listing: Listing, missing: set[str], done: set[str],
                   unread: list[Unread]) -> Iterator[Added]:
    """The lines a commit added to the files Git can read, one missing object after another; the others go to
    ``unread``. ``listing``: the commit's files as :func:`_raw` lists them."""
    while True:
        lost, readable = _paths_needing(listing, missing)
        rest = sorted(readable - done)
        if not rest:
            break
        try:
            for added in _diff_tree(cwd, [commit], [], rest):
                done.add(added.path)
                yield added
            break
        except GitError as error:
            another = _missing_object(error)
            if another is None:
                raise
            if another in missing:  # needed where the listing does not say (a rename's source): none of the rest
                lost.update((path, another) for path in rest if path not in done)
                break
            missing.add(another)
    unread.extend(Unread(commit, path, lost[path]) for path in sorted(lost))


def _failing(cwd: Path, shas: list[str], start: int, seen: list[str], missing: str) -> tuple[int, Listing] | None:
    """Which commit needs the object, with its listing: the last one Git began (its header is written before
    its files are read), else the next."""
    first = shas.index(seen[-1], start) if seen else start
    for index in (first, first + 1):
        listing = _raw(cwd, shas[index]) if index < len(shas) else []
        if any(missing in parts[2:4] for parts, _ in listing):
            return index, listing
    return None


def _raw(cwd: Path, commit: str) -> Listing:
    """``git diff-tree --raw`` of a commit (against each parent of a merge): each file's fields and path."""
    result = subprocess.run(["git", "diff-tree", "-r", "-m", "--root", "--no-commit-id", "--raw", "--no-abbrev",
                             "-z", commit], cwd=cwd, capture_output=True, timeout=120)
    fields = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [(meta.split(), path) for meta, path in zip(fields[0::2], fields[1::2]) if len(meta.split()) >= 5]


def _paths_needing(listing: Listing, missing: set[str]) -> tuple[dict[str, str], set[str]]:
    """The paths of a commit whose added lines need a ``missing`` object (its new content, or the old content of
    a file it changes), each with that object, and its paths that need none (a file it deletes adds nothing: it
    is in neither). Git's raw listing reads trees only, never file contents."""
    needing: dict[str, str] = {}
    others: set[str] = set()
    for parts, path in listing:
        old, new, status = parts[2], parts[3], parts[4]
        if new in missing or (old in missing and not status.startswith("D")):
            needing[path] = new if new in missing else old
        elif old not in missing:
            others.add(path)
    return needing, others - set(needing)


def _diff_tree(cwd: Path, shas: list[str], seen: list[str], paths: list[str] | None = None) -> Iterator[Added]:
    if not shas:
        return
    command = ["git", "-c", "core.quotepath=off", "--literal-pathspecs", "diff-tree", "--stdin", "-p", "-U0", "-M",
               "--root", "-r", "--cc", "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative",
               f"--format={HEADER_FORMAT}"]
    if paths is not None:
        command += ["--", *paths]
    with subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        assert process.stdin is not None and process.stdout is not None
        _feed(process.stdin, shas)
        yield from parse_patch(process.stdout, seen)
        error = process.stderr.read().decode("utf-8", "replace").strip() if process.stderr else ""
        if process.wait() != 0:
            raise GitError(error or f"git diff-tree exited with {process.returncode}")


def _feed(stdin: IO[bytes], shas: list[str]) -> None:
    """Hand Git the commits from a thread of their own, so a long list never blocks on a full pipe."""
    import threading

    def write() -> None:
        try:
            stdin.write("".join(sha + "\n" for sha in shas).encode("ascii"))
        finally:
            stdin.close()

    threading.Thread(target=write, daemon=True).start()


def parse_patch(stream: IO[bytes], seen: list[str] | None = None) -> Iterator[Added]:
    """``diff-tree -p -U0 --cc`` output (with :data:`HEADER_FORMAT` headers) as runs of added lines.

    A file's header (``diff --git``/``diff --cc`` up to its first hunk) is read apart from its
    hunks, so an added line that itself starts with ``++`` is never taken for ``+++ b/path``.
    A merge's combined diff has one marker column per parent: a line counts as added only when
    it is new against every parent (``++``), what the merge itself wrote (a conflict resolved
    with a token); a line new against one parent came from the other, and was read in the
    branch's own commit.
    """
    commit = date = ""
    path: str | None = None
    in_header = False
    columns = 1  # marker columns: 1 in a plain diff, one per parent in a merge's combined diff
    number = first = 0
    run: list[str] = []
    for raw in stream:
        line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
        if not in_header and path is not None and line[:1] in ("+", "-", " ") and not line.startswith(COMMIT_MARK):
            marks = line[:columns]
            if "-" in marks:
                continue  # a line of a parent, not of this commit's file
            if marks == "+" * columns:
                if not run:
                    first = number
                run.append(line[columns:].rstrip("\r"))
                number += 1
                continue
            number += 1  # in the file already (context, or from one parent of a merge)
        if run and path is not None:
            yield Added(commit, date, path, first, tuple(run))
            run = []
        if line.startswith(COMMIT_MARK):
            commit, _, date = line[1:].partition(" ")
            path, in_header = None, False
            if seen is not None:
                seen.append(commit)
        elif line.startswith(("diff --git ", "diff --cc ", "diff --combined ")):
            path, in_header = None, True
        elif in_header and line.startswith("+++ "):
            target = line[4:]
            path = None if target == "/dev/null" else _unquoted(target)[2:]  # drop ``b/``
        elif line.startswith("@@"):
            in_header = False
            match = HUNK.match(line)
            columns = len(match.group(1)) - 1 if match else 1
            number = int(match.group(2)) if match else 0
    if run and path is not None:
        yield Added(commit, date, path, first, tuple(run))


def _unquoted(name: str) -> str:
    """A path as Git writes it: C-quoted (``"b/sp\\303\\251cial"``) when it holds odd characters."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    body = name[1:-1]
    out = bytearray()
    index = 0
    while index < len(body):
        character = body[index]
        if character == "\\" and index + 1 < len(body):
            following = body[index + 1]
            if following in "01234567" and index + 3 < len(body) + 1:
                out.append(int(body[index + 1:index + 4], 8))
                index += 4
                continue
            out.extend(QUOTED_ESCAPES.get(following, following).encode("utf-8"))
            index += 2
            continue
        out.extend(character.encode("utf-8", "surrogateescape"))
        index += 1
    return out.decode("utf-8", "surrogateescape")
