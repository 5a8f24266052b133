"""Discovery: which files to read, and what kind each one is.

Inside a Git work tree folders expand to ``git ls-files`` plus untracked files that are not
ignored, so ``.gitignore`` is honoured for untracked files only: a tracked file is always
checked, even one ``.gitignore`` matches (a force-added ``.env``); outside Git the tree is walked (dotfiles included)
without entering the folders no team wants linted: ``.git``, virtual environments,
``site-packages``, ``node_modules``, caches and build output (:data:`DEFAULT_EXCLUDED_FOLDERS`).  Symbolic links never lead out of the scanned tree, and anything that
is not a regular file (FIFO, socket, device) is skipped without being opened.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import subprocess
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from pathlib import PurePosixPath

from spikelint.util.lazyre import lazy_regex
from spikelint.util.pathnames import name_suffix
from spikelint.model import FileKind
from spikelint.model import SourceFile

# Dockerfile, Containerfile, Dockerfile.gpu, train.Dockerfile, 14-Dockerfile.bad, Dockerfile-cuda12
DOCKERFILE_NAME = lazy_regex(r"(?:^|[._-])(?:docker|container)file(?:$|[._-])")
# Names that mention a Dockerfile but hold something else: templates, docs, BuildKit's per-Dockerfile
# ignore file (Dockerfile.dockerignore), patches, and source code of Dockerfile tooling (dockerfile_parser.go)
NOT_DOCKERFILE_SUFFIXES = frozenset((
    ".py", ".sh", ".bash", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".toml", ".ipynb", ".j2", ".jinja",
    ".tmpl", ".tpl", ".in", ".lock", ".cfg", ".dockerignore", ".gitignore", ".patch", ".diff", ".adoc", ".html",
    ".xml", ".csv", ".go", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rs", ".java", ".kt", ".scala", ".c",
    ".cc", ".cpp", ".h", ".hpp", ".rb", ".pl", ".php", ".ps1", ".bat", ".cmd", ".vim", ".el", ".lua", ".swift",
    ".cs", ".fs", ".r", ".jl", ".sql", ".snap", ".golden", ".mustache", ".hbs", ".ejs", ".liquid",
    ".mdx", ".markdown", ".qmd", ".rmd", ".org", ".tex", ".svg", ".css", ".scss",
))
SHELL_SUFFIXES = (".sh", ".bash", ".sbatch", ".slurm")
# a Kubernetes manifest saved under a Dockerfile-like name (Dockerfile.job): its first line says YAML
MANIFEST_START = ("apiVersion:", "kind:", "---")
MAKEFILE_NAMES = frozenset(("makefile", "gnumakefile"))
YAML_SUFFIXES = (".yaml", ".yml")
BINARY_SUFFIXES = frozenset((
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".pdf", ".zip", ".gz", ".tgz",
    ".bz2", ".xz", ".zst", ".7z", ".whl", ".so", ".dylib", ".dll", ".exe", ".bin", ".pt",
    ".pth", ".ckpt", ".safetensors", ".onnx", ".npy", ".npz", ".pkl", ".pickle", ".h5",
    ".parquet", ".arrow", ".woff", ".woff2", ".ttf", ".otf", ".mp3", ".mp4", ".wav", ".pyc",
    ".jar", ".class", ".o", ".a",
))

# text files whose first line is never a shebang or an #SBATCH line worth reading (one open per file saved)
PROSE_SUFFIXES = frozenset((".md", ".rst", ".txt", ".csv", ".tsv", ".jsonl", ".html", ".css", ".js", ".ts", ".go",
                            ".java", ".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".svg", ".xml", ".lock", ".proto",
                            ".rs", ".tex", ".bib", ".sql", ".ini", ".cfg", ".env"))


# Outside Git nothing says what is generated or vendored; these never hold the team's workloads,
# and a virtual environment alone turns a second into half a minute (and site-packages' test keys
# into false secrets).
DEFAULT_EXCLUDED_FOLDERS = frozenset((
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "site-packages", "dist-packages", "node_modules",
    "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".spikelint_cache", ".eggs", "build", "dist",
))


@dataclass
class Discovery:
    """The files to check, and what was skipped on the way (path, reason)."""

    files: list[SourceFile] = field(default_factory=list)
    oversized: list[tuple[SourceFile, int]] = field(default_factory=list)  # past the size limit: token scan only
    skipped: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)  # left out on purpose (path, why), --show-files


def detect_kind(path: str, first_line: str = "") -> str:
    """The file kind from its name (and shebang for extension-less scripts)."""
    name = path.rsplit("/", 1)[-1]  # string operations: discovery calls this for every file of the tree
    lower = name.lower()
    suffix = name_suffix(lower)
    if DOCKERFILE_NAME.search(lower) and suffix not in NOT_DOCKERFILE_SUFFIXES:
        return FileKind.YAML if first_line.startswith(MANIFEST_START) else FileKind.DOCKERFILE
    if suffix in YAML_SUFFIXES:
        return FileKind.YAML
    if suffix == ".json":
        return FileKind.JSON
    if suffix == ".ipynb":
        return FileKind.NOTEBOOK
    if suffix == ".toml":
        return FileKind.TOML
    if suffix in (".py", ".pyi"):
        return FileKind.PYTHON
    if suffix in SHELL_SUFFIXES:
        return FileKind.SHELL
    if suffix == ".tar" or lower.endswith((".tar.gz", ".oci.tar", ".tgz", ".zip", ".tar.bz2", ".tbz2", ".tar.xz",
                                            ".txz")):
        return FileKind.IMAGE  # an image tarball, or an archive of files (read for secrets)
    if lower in MAKEFILE_NAMES or suffix == ".mk":
        return FileKind.TEXT  # make syntax, even when a shebang names a shell (recipes are shell, the file is not)
    if first_line.startswith("#SBATCH"):
        return FileKind.SHELL  # a Slurm batch script without a shebang (sbatch runs it with /bin/sh)
    if first_line.startswith("#!"):
        interpreter = [word for word in first_line[2:].split() if not word.startswith("-")]  # env -S bash
        words = [word.rsplit("/", 1)[-1] for word in interpreter[:2]]
        if any(word in ("sh", "bash", "dash", "zsh", "ksh") for word in words):
            return FileKind.SHELL
        if any(word.startswith("python") for word in words):
            return FileKind.PYTHON
    return FileKind.TEXT


def _first_line(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(128).split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return ""


def git_root(folder: Path) -> Path | None:
    try:
        result = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True,
                                text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0 or not result.stdout.strip():
        return None
    return Path(result.stdout.strip())


def git_names(folder: Path) -> list[str] | None:
    """Tracked plus untracked-not-ignored files under ``folder``, as sorted '/'-separated names
    relative to it (no path objects built); ``None`` outside Git."""
    try:
        result = subprocess.run(
            ["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=folder, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return sorted({name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name})


def git_ignored(folder: Path) -> list[str] | None:
    """The untracked files and folders under ``folder`` that Git ignores (a wholly ignored folder once, ending in
    '/'), relative to it: what ``--show-files`` says it leaves out; ``None`` outside Git."""
    try:
        result = subprocess.run(["git", "-c", "core.quotepath=off", "ls-files", "-z", "--others", "--ignored",
                                 "--exclude-standard", "--directory", "--", "."],
                                cwd=folder, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    kept: list[str] = []
    for name in sorted(name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name):
        if not (kept and kept[-1].endswith("/") and name.startswith(kept[-1])):  # a listed folder's contents: once
            kept.append(name)
    return kept


def git_tracked(folder: Path) -> set[str] | None:
    """The files Git tracks under ``folder`` (the index: staged included, untracked never), as
    '/'-separated names relative to it; ``None`` outside Git."""
    try:
        result = subprocess.run(["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--", "."],
                                cwd=folder, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return {name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name}


def walk_names(folder: Path, pruned: list[Path] | None = None) -> list[str]:
    """Every file under ``folder`` as a '/'-separated path relative to it, not entering
    default-excluded folders or following directory links (strings: a path object and a
    ``relpath`` per file cost more than the rest of discovery).

    A folder holding ``pyvenv.cfg`` is a virtual environment whatever its name; one whose
    ``.gitignore`` is ``*`` ignores itself (:func:`ignores_itself`).  ``pruned``
    collects the folders left out, for ``--show-files``.
    """
    found: list[str] = []
    top = str(folder)
    for current, folders, names in os.walk(top, followlinks=False):
        relative = os.path.relpath(current, top)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        kept = []
        for name in sorted(folders):
            if name in DEFAULT_EXCLUDED_FOLDERS or name.endswith(".egg-info") or \
                    os.path.isfile(os.path.join(current, name, "pyvenv.cfg")) or \
                    ignores_itself(os.path.join(current, name)):
                if pruned is not None:
                    pruned.append(Path(current) / name)
            else:
                kept.append(name)
        folders[:] = kept
        found.extend(prefix + name for name in sorted(names))
    return found


def ignores_itself(folder: str) -> bool:
    """A folder whose ``.gitignore`` ignores everything (``*``): a tool's cache or run folder (pytest,
    ruff, ``spikelint smoke``) that Git would not list either."""
    try:
        with open(os.path.join(folder, ".gitignore"), "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    patterns = [line.strip() for line in head.splitlines() if line.strip() and not line.lstrip().startswith(b"#")]
    return patterns == [b"*"]


def display_path(path: Path, cwd: Path) -> str:
    """Relative to the current folder when possible, always '/'-separated."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        relative = os.path.relpath(path, cwd)
        return PurePosixPath(Path(relative).as_posix()).as_posix()


def is_excluded(path: str, patterns: tuple[str, ...]) -> bool:
    return any(matches_glob(path, pattern) for pattern in patterns)


def matches_glob(path: str, pattern: str) -> bool:
    """gitignore-flavoured glob: ``**`` spans folders, a pattern without '/' matches any basename."""
    pattern = pattern.rstrip("/")
    if "/" not in pattern:  # by strings: discovery asks for every file of the tree
        return any(fnmatch.fnmatchcase(part, pattern) for part in path.split("/") if part)
    return _glob_regex(pattern.lstrip("/"), path)


def _glob_regex(pattern: str, path: str) -> bool:
    parts = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            parts.append(".*")
            index += 2
            continue
        if char == "*":
            parts.append("[^/]*")
        elif char == "?":
            parts.append("[^/]")
        else:
            parts.append(re.escape(char))
        index += 1
    regex = "".join(parts)
    return re.fullmatch(regex, path) is not None or re.fullmatch(regex + "/.*", path) is not None


def relative_to_base(shown: str, cwd: Path, base: Path | None) -> str | None:
    """``shown`` (relative to ``cwd``) relative to ``base`` (the configuration's folder), when that differs."""
    if base is None:
        return None
    relative = Path(os.path.relpath(os.path.normpath(cwd / shown), os.path.normpath(cwd / base))).as_posix()
    return relative if relative != shown and not relative.startswith("../") else None


def matches_any(shown: str, patterns: tuple[str, ...], cwd: Path, base: Path | None) -> bool:
    """Patterns match paths relative to the current folder, or to the configuration's folder."""
    if not patterns:
        return False
    if is_excluded(shown, patterns):
        return True
    other = relative_to_base(shown, cwd, base)
    return other is not None and is_excluded(other, patterns)


def discover(paths: list[str], *, cwd: Path, exclude: tuple[str, ...] = (), max_file_size: int,
             base: Path | None = None) -> Discovery:
    """Expand ``paths`` into SourceFiles; record what was skipped and why.

    ``exclude`` globs match paths relative to ``cwd`` or, when given, to ``base`` (the folder of
    the configuration that holds them, which may be above the current folder).
    """
    result = Discovery()
    seen: set[str] = set()
    for raw in paths:
        given = Path(raw)
        absolute = Path(os.path.normpath(given if given.is_absolute() else cwd / given))
        if not os.path.lexists(absolute):
            result.missing.append(raw)
            continue
        if absolute.is_dir() and not absolute.is_symlink():
            root = absolute.resolve()
            folder = str(absolute)
            listed = git_names(absolute)  # None outside Git (ls-files fails there): no rev-parse first
            pruned: list[Path] = []
            if listed is None:
                listed = walk_names(absolute, pruned)
            result.excluded.extend((display_path(path, cwd) + "/", "default exclude outside Git") for path in pruned)
            listed, vendored = without_vendored(listed)
            prefix = display_path(absolute, cwd)
            above = prefix == ".." or prefix.startswith("../")  # then a file may lie under cwd: relpath decides
            prefix = "" if prefix == "." else prefix + "/"
            for name in listed:  # paths by string: building path objects cost more than the rest of discovery
                full = os.path.join(folder, name)
                shown = display_path(Path(full), cwd) if above else prefix + name.replace(os.sep, "/")
                _consider(full, shown, root, cwd, (exclude, base), max_file_size, result, seen)
            result.excluded.extend((prefix + folder_name, VENDORED) for folder_name in vendored)
        else:
            root = absolute.parent.resolve()
            _consider(str(absolute), display_path(absolute, cwd), root, cwd, (exclude, base), max_file_size, result,
                      seen)
    return result


# what ``check -o FILE`` writes: a report left in the tree is not linted on the next run (its rule help quotes
# suppression comments, its findings are masked already)
REPORT_SUFFIXES = frozenset((".sarif", ".json", ".xml", ".html", ".htm", ".txt", ".log", ".out"))
OWN_REPORT = "a report spikelint wrote: its findings, not the team's source"
REPORT_SIGNATURE = lazy_regex(
    r'"tool":\s*\{\s*"name":\s*"spikelint"'  # --format json
    r'|"driver":\s*\{\s*"name":\s*"spikelint"'  # sarif
    r'|<testsuites name="spikelint"|<title>spikelint: '  # junit, html
    r'|\A\[\s*\{\s*"type":\s*"issue",\s*"description":\s*"[A-Z][A-Z0-9]{1,9}\d{3} '  # gitlab
    r'|\A::(?:error|warning|notice) file=[^\n]*title=[A-Z][A-Z0-9]{1,9}\d{3} '  # github
    r'|\A[^\n:]+:\d+:\d+: [A-Z][A-Z0-9]{1,9}\d{3} \[(?:error|warning|info)\] ')  # text


def own_report(path: str) -> bool:
    """Whether the file is one of spikelint's own reports (its first 512 bytes say so)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512).decode("utf-8", "replace")
    except OSError:
        return False
    return REPORT_SIGNATURE.search(head) is not None


SCANNED_BINARY = "scanned-binary"  # kind_on_disk's answer for a pickle or checkpoint: read as text for its strings


def kind_on_disk(path: str) -> str | None:
    """A file's kind from its name (and first line, for an extension-less script); ``SCANNED_BINARY`` for
    serialised data whose strings are scanned, None for other binary artefacts."""
    name = os.path.basename(path)
    suffix = name_suffix(name.lower())
    kind = detect_kind(name)
    if ((kind == FileKind.TEXT and suffix not in BINARY_SUFFIXES and suffix not in PROSE_SUFFIXES)
            or (kind == FileKind.DOCKERFILE and suffix)):
        kind = detect_kind(name, _first_line(path))  # launch scripts without .sh: the shebang says
    if suffix in BINARY_SUFFIXES and kind != FileKind.IMAGE:
        from spikelint.documents.bounded import is_scanned_binary

        return SCANNED_BINARY if is_scanned_binary(name) else None
    return kind


VENDORED = "vendored Go modules (the folder holds modules.txt): third-party code, not the team's"
VENDOR_MANIFEST = "vendor/modules.txt"


def without_vendored(names: list[str]) -> tuple[list[str], list[str]]:
    """The names outside Go's vendor folders (``go mod vendor`` copies every dependency there and writes
    ``vendor/modules.txt``: their test keys and fixtures are not a team's secrets), and those folders."""
    roots = [name[: -len("modules.txt")] for name in names
             if name.endswith(VENDOR_MANIFEST) and (name == VENDOR_MANIFEST or name.endswith("/" + VENDOR_MANIFEST))]
    if not roots:
        return names, []
    prefixes = tuple(roots)
    return [name for name in names if not name.startswith(prefixes)], roots


def in_go_vendor(abspath: str) -> bool:
    """Whether a file lies in a Go vendor folder (an ancestor called ``vendor`` holding ``modules.txt``)."""
    parts = abspath.split(os.sep)
    return any(part == "vendor" and os.path.isfile(os.sep.join([*parts[:index + 1], "modules.txt"]))
               for index, part in enumerate(parts[:-1]))


def leave_out_vendored(discovery: Discovery) -> None:
    """A commit's files in Go vendor folders are left out, as ``check .`` leaves those folders out: pre-commit names
    each file of a ``go mod vendor`` update, and a dependency's test key is not the team's to fix."""
    vendored = {source.path for source in discovery.files if "vendor" in source.abspath and in_go_vendor(source.abspath)}
    if vendored:
        discovery.files = [source for source in discovery.files if source.path not in vendored]
        discovery.excluded.extend((path, VENDORED) for path in sorted(vendored))


def listed_sources(folder: Path, cwd: Path, exclude: tuple[str, ...], base: Path | None) -> list[SourceFile] | None:
    """The files Git lists under ``folder``, from their names alone: the context a run on a few files resolves
    references against (a hook run on one file in a 4,000-file repository). No file is looked at on disk
    here — a link out of the tree, a folder or a file past the size limit is refused when it is read
    (:func:`admissible`); None outside Git."""
    names = git_names(folder)
    if names is None:
        return None
    names, _ = without_vendored(names)
    prefix = display_path(folder, cwd)
    above = prefix == ".." or prefix.startswith("../")
    prefix = "" if prefix == "." else prefix + "/"
    top = str(folder)
    sources = []
    for name in names:
        full = os.path.join(top, name)
        shown = display_path(Path(full), cwd) if above else prefix + name
        if exclude and matches_any(shown, exclude, cwd, base):
            continue
        kind = kind_on_disk(full)
        if kind is not None:
            sources.append(SourceFile(shown, full, FileKind.TEXT if kind == SCANNED_BINARY else kind, listed=True))
    return sources


def readable(source: SourceFile, root: str, max_file_size: int) -> bool:
    """Whether a file may be read: anything discovery looked at, a listed one only when :func:`admissible`."""
    return not source.listed or admissible(source, root, max_file_size)


def admissible(source: SourceFile, root: str, max_file_size: int) -> bool:
    """Whether a listed file may be read: a regular file (or a link to one inside ``root``) within the size limit."""
    try:
        info = os.lstat(source.abspath)
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(source.abspath)
            if os.path.commonpath((target, root)) != root:
                return False
            info = os.stat(target)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(info.st_mode) and (info.st_size <= max_file_size or source.kind == FileKind.IMAGE)


def _consider(path: str, shown: str, root: Path, cwd: Path, exclude: tuple[tuple[str, ...], Path | None],
              max_file_size: int, result: Discovery, seen: set[str]) -> None:
    if shown in seen:
        return
    seen.add(shown)
    if matches_any(shown, exclude[0], cwd, exclude[1]):
        result.excluded.append((shown, "matches an exclude pattern"))
        return
    try:
        info = os.lstat(path)
    except OSError:
        return  # listed by git but deleted from the work tree
    if stat.S_ISLNK(info.st_mode):
        try:
            target = Path(path).resolve(strict=True)
        except (OSError, RuntimeError):
            result.skipped.append((shown, "broken or looping symbolic link"))
            return
        if not target.is_relative_to(root):
            result.skipped.append((shown, "symbolic link points outside the scanned tree"))
            return
        try:
            info = os.stat(target)
        except OSError:
            return
        if stat.S_ISDIR(info.st_mode):
            return  # directory links are not followed
    if stat.S_ISDIR(info.st_mode):
        return  # a Git submodule (gitlink) lists as a folder: its own repository, not ours to check
    if not stat.S_ISREG(info.st_mode):
        result.skipped.append((shown, "not a regular file"))
        return
    kind = kind_on_disk(path)
    if kind is None:
        result.excluded.append((shown, "binary file"))
        return  # binary artefacts (media, archives): nothing of ours to read
    if kind == SCANNED_BINARY:  # serialised data keeps its strings: scanned for tokens, bounded
        result.files.append(SourceFile(shown, path, FileKind.TEXT))
        return
    if name_suffix(shown.lower()) in REPORT_SUFFIXES and own_report(path):
        result.excluded.append((shown, OWN_REPORT))
        return
    if info.st_size > max_file_size and kind != FileKind.IMAGE:
        result.oversized.append((SourceFile(shown, path, kind), info.st_size))
        return
    result.files.append(SourceFile(shown, path, kind, info.st_size))
