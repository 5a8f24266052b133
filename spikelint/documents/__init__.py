"""Read a discovered file into a :class:`Document`: decode, parse by kind, find suppressions.

Nothing here raises for bad input: a file that cannot be decoded or parsed becomes a
document carrying one SPK001 (or SPK003) problem, and the run goes on.
"""

from __future__ import annotations

import ast
import codecs
import os
import re
import sys
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from typing import Callable

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Problem
from spikelint.model import SourceFile
from spikelint.documents.templates import UnrenderedTemplate
from spikelint.documents.templates import is_helm_template
from spikelint.documents.templates import is_helm_unittest_suite
from spikelint.documents.templates import markup_caused
from spikelint.documents.suppressions import parse_suppressions

__all__ = ["FILLED_IN_KEY", "ParseFailure", "UnrenderedTemplate", "decode", "is_helm_template", "parse_bytes", "parse_text",
           "read_document"]

if TYPE_CHECKING:
    from spikelint.documents.limits import ImageLimits
    from spikelint.documents.yamldoc import DuplicateKey

COMMENTED_KINDS = (FileKind.YAML, FileKind.SHELL, FileKind.DOCKERFILE, FileKind.TOML, FileKind.PYTHON, FileKind.TEXT)
TEXT_KINDS_THAT_MUST_DECODE = (FileKind.YAML, FileKind.JSON, FileKind.TOML, FileKind.NOTEBOOK, FileKind.DOCKERFILE,
                               FileKind.SHELL, FileKind.PYTHON)
MAX_PYTHON_NESTING = 200
MAX_PYTHON_SYNTAX_TREE_CHARS = 1024 * 1024
SAVE_CALL = lazy_regex(r"\b(?:save|save_state_dict|async_save)\s*\(")
# kinds whose files that markup makes unparseable are unrendered templates (Jinja, cookiecutter): SPK003, not SPK001
TEMPLATED_KINDS = (FileKind.YAML, FileKind.JSON, FileKind.TOML)
BYTE_ORDER_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
# JSON files whose tools define them as JSON with comments and trailing commas (VS Code's dialect)
JSONC_NAME = lazy_regex(r"^(?:\.?devcontainer|(?:ts|js)config(?:\..+)?|\.eslintrc|argv)\.json$", re.IGNORECASE)
JSONC_FOLDERS = (".vscode", "vscode", ".devcontainer")  # ``contrib/vscode/settings.json`` is shared settings


class ParseFailure(Exception):
    """Raised by a parser with the 1-based position of the problem."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def decode(data: bytes) -> tuple[str | None, Problem | None]:
    """UTF-8 text (BOM stripped), or the problem that prevents reading it."""
    if data.startswith(BYTE_ORDER_MARKS):
        return None, Problem("SPK001", 1, 1, "file is UTF-16/UTF-32 encoded (byte-order mark); save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = error.start - (before.rfind(b"\n") + 1) + 1
        return None, Problem("SPK001", line, column,
                             f"file is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}); save it as UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


def _position_problem(error: Exception, text: str, prefix: str = "") -> Problem:
    line = getattr(error, "line", 1) or 1
    column = getattr(error, "column", 1) or 1
    last = max(text.count("\n") + (0 if text.endswith("\n") else 1), 1)
    if line > last:
        line, column = last, 1
    return Problem("SPK001", line, column, f"{prefix}{error}")


def _parse_yaml(document: Document) -> None:
    from spikelint.documents.yamldoc import parse_yaml

    duplicates: list[DuplicateKey] = []
    document.trees = parse_yaml(document.text, duplicates)
    document.problems.extend(Problem("SPK001", duplicate.line, duplicate.column, _duplicate_key_message(duplicate))
                             for duplicate in duplicates)


def _duplicate_key_message(duplicate: DuplicateKey) -> str:
    """Whether the value changed decides what the reader is told: a silent change, or a redundant line."""
    if duplicate.same_value:
        return (f"invalid YAML: the key {duplicate.key!r} is written twice in one mapping, with the same value as at "
                f"line {duplicate.first_line}: kubectl, Helm and OmegaConf reject the file; remove one of them")
    return (f"invalid YAML: the key {duplicate.key!r} is written twice in one mapping (first at line "
            f"{duplicate.first_line}): PyYAML silently keeps only this value, kubectl, Helm and OmegaConf reject "
            "the file; remove the one that should not count")


def is_jsonc(path: str) -> bool:
    """A JSON file its tool reads with comments allowed (``devcontainer.json``, ``.vscode/*.json``)."""
    parts = PurePosixPath(path).parts
    return bool(JSONC_NAME.match(parts[-1])) or any(folder in parts[:-1] for folder in JSONC_FOLDERS)


def _parse_json(document: Document) -> None:
    from spikelint.documents.jsondoc import parse_json

    from spikelint.documents.jsondoc import JsonError
    from spikelint.documents.jsondoc import parse_json_values

    comments = is_jsonc(document.path)
    try:
        document.trees = [parse_json(document.text, comments=comments)] if document.text.strip() else []
    except JsonError as error:
        if _json_template(document, comments):
            return
        if "extra data after the top-level value" not in str(error):
            raise
        try:  # JSON Lines or concatenated values saved as .json: each value is a document
            document.trees = parse_json_values(document.text)
        except JsonError:
            raise error from None


# ``"train_micro_batch_size_per_gpu": BATCH_SIZE_PER_GPU``: a bare name where a value goes (JSON has none
# but true, false and null; a name with a capital, ``QuantW_FORWARD`` as well as ``FP16_ENABLE``)
_JSON_PLACEHOLDER = lazy_regex(r"(?<=[:\[,])(\s*)((?=[A-Za-z0-9_]*[A-Z])[A-Za-z_][A-Za-z0-9_]*)(?=\s*[,}\]])")
_TEMPLATE_WORD = lazy_regex(r"[._-]?template(?=[._-]|$)|template[._-]?", re.IGNORECASE)


def _json_template(document: Document, comments: bool) -> bool:
    """A JSON template that a tool fills in (``ds_config_TEMPLATE.json``) and whose only syntax errors
    are its placeholders: SPK003 naming the first, not SPK001 — the rendered file is what runs."""
    from spikelint.documents.jsondoc import JsonError
    from spikelint.documents.jsondoc import parse_json

    path = PurePosixPath(document.path)
    if "template" not in path.name.lower():
        return False
    found = list(_JSON_PLACEHOLDER.finditer(document.text))
    if not found:
        return False
    filled = _JSON_PLACEHOLDER.sub(lambda match: match.group(1) + "0".ljust(len(match.group(2))), document.text)
    try:
        parse_json(filled, comments=comments)
    except JsonError:
        return False  # a real mistake besides the placeholders: SPK001 stays
    first = found[0]
    line = document.text.count("\n", 0, first.start(2)) + 1
    others = f" ({len(found)} placeholders in all)" if len(found) > 1 else ""
    rendered = _TEMPLATE_WORD.sub("", path.name, count=1)
    rendered = path.with_name(rendered if rendered and not rendered.startswith(".") else "rendered.json").as_posix()
    document.problems.append(Problem(
        "SPK003", 1, 1, f"JSON template not checked (only scanned for secrets): `{first.group(2)}` on line {line} "
        f"is a placeholder that a tool fills in{others}; lint the rendered file: "
        f"`<render command> | spikelint check --stdin-filename {rendered}`", key="json-template"))
    document.trees = []
    return True


def _parse_toml(document: Document) -> None:
    from spikelint.documents.tomldoc import parse_toml

    document.trees = [parse_toml(document.text)]


def _parse_notebook(document: Document) -> None:
    from spikelint.documents.jsondoc import parse_json
    from spikelint.documents.notebook import read_notebook

    root = parse_json(document.text)
    document.trees = [root]
    notebook = read_notebook(root)
    document.parsed = notebook
    document.problems.extend(Problem("SPK001", line, column, message) for message, line, column in notebook.malformed)


def _parse_python(document: Document) -> None:
    if len(document.text) > MAX_PYTHON_SYNTAX_TREE_CHARS:
        # generated or vendored code: its syntax tree costs ~250 bytes of memory per character; text checks only,
        # said where a syntax tree was what a rule needed (a save call the checkpoint rule would have read)
        if SAVE_CALL.search(document.text):
            size = len(document.text) / (1024 * 1024)
            document.problems.append(Problem(
                "SPK003", 1, 1, f"Python file of {size:.1f} MiB not parsed (over 1 MiB): its text was scanned for "
                "secrets, but the checkpoint rule (SPK403) did not read its save calls — move the training code "
                "that saves checkpoints into a module of its own", key="python-not-parsed"))
        return
    depth = max((len(match.group()) for match in re.finditer(r"[(\[{]+", document.text)), default=0)
    if depth > MAX_PYTHON_NESTING:
        raise ParseFailure(f"brackets nested {depth} deep exceed the parser's safety limit", 1, 1)
    try:
        document.parsed = ast.parse(document.text, filename=document.path)
    except SyntaxError as error:
        from spikelint.documents.python_grammar import newer_python_needed

        version = newer_python_needed(document.text, error)
        if version is None:
            raise ParseFailure(f"invalid Python: {error.msg}", error.lineno or 1, error.offset or 1) from None
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        where = f"line {error.lineno or 1}, column {error.offset or 1}"  # SPK003 is said at line 1 (rules.md)
        document.problems.append(Problem(
            "SPK003", 1, 1,
            f"valid Python {version} syntax ({where}) that Python {running}, which spikelint runs on, cannot parse: its text "
            f"was scanned for secrets, but the Python rules (SPK105, SPK403…) did not read it — run spikelint on "
            f"Python {version} or newer to check it", key=f"python-{version}"))
    except (RecursionError, MemoryError, ValueError) as error:
        raise ParseFailure(f"Python source exceeds the parser's limits: {type(error).__name__}", 1, 1) from None


def _parse_dockerfile(document: Document) -> None:
    from spikelint.documents.dockerfile import parse_dockerfile

    document.parsed = parse_dockerfile(document.text)
    for error in document.parsed.errors[:1]:  # (message, line, column)
        message, line, column = error
        raise ParseFailure(f"invalid Dockerfile: {message}", line, column)


def _parse_shell(document: Document) -> None:
    from spikelint.documents.shell import parse_shell

    script = parse_shell(document.text)
    document.parsed = script
    if script.errors:  # "line L, column C: why"; the parser itself never raises
        line, column = script.error_positions[0] if script.error_positions else (1, 1)
        raise ParseFailure(f"invalid shell script: {script.errors[0].split(': ', 1)[-1]}", line, column)


def _parse_text(document: Document) -> None:
    """Plain text is not parsed; a protocol-0 pickle is text too (a snippet, an example): its globals are read."""
    from spikelint.documents.bounded import may_hold_pickle

    if may_hold_pickle(document.path) and document.text.isascii():
        from spikelint.documents.pickled import scan_file

        document.parsed = scan_file(None, document.text.encode("ascii"))


PARSERS: dict[str, Callable[[Document], None]] = {
    FileKind.YAML: _parse_yaml,
    FileKind.JSON: _parse_json,
    FileKind.TOML: _parse_toml,
    FileKind.NOTEBOOK: _parse_notebook,
    FileKind.PYTHON: _parse_python,
    FileKind.DOCKERFILE: _parse_dockerfile,
    FileKind.SHELL: _parse_shell,
    FileKind.TEXT: _parse_text,
}


def parse_text(source: SourceFile, text: str) -> Document:
    """Parse already-decoded text (``--stdin-filename`` and tests use this directly)."""
    document = Document(source, text)
    if source.kind in COMMENTED_KINDS:
        document.suppressions = parse_suppressions(text.splitlines(),
                                                   trailing_comments=source.kind != FileKind.DOCKERFILE)
    if source.kind in (FileKind.YAML, FileKind.TEXT) and is_helm_template(source.path, text, source.kind):
        return _as_text(document, UnrenderedTemplate(chart_template=True))  # SPK003 once per chart (checks.meta.charts)
    if source.kind == FileKind.YAML and is_helm_unittest_suite(source.path, text):
        return _as_text(document, None)  # test input for a chart, not a manifest: skipped silently
    try:
        PARSERS.get(source.kind, _parse_text)(document)
    except RecursionError:
        document.problems.append(Problem("SPK001", 1, 1, "nesting exceeds the parser's safety limit"))
    except MemoryError:
        document.problems.append(Problem("SPK001", 1, 1, "file exceeds the parser's memory limit"))
    except ValueError as error:  # every parser's error type is a ValueError with line/column
        line = getattr(error, "line", 1) or 1
        if source.kind in TEMPLATED_KINDS and markup_caused(text, line, _parses_as(source)):
            return _as_text(Document(source, text, suppressions=document.suppressions),
                            UnrenderedTemplate(chart_template=False))
        document.problems.append(_position_problem(error, text))
    except ParseFailure as error:
        if source.kind == FileKind.SHELL and _parse_filled_in(document):
            return document
        if source.kind == FileKind.DOCKERFILE and _dockerfile_filled_in(document, error.line):
            return document
        document.problems.append(_position_problem(error, text))
    if source.kind == FileKind.NOTEBOOK and document.parsed is not None:
        from spikelint.documents.notebook import Notebook

        notebook: Notebook = document.parsed
        for cell in notebook.cells:
            lines = [line.value for line in cell.source]
            numbers = [line.line for line in cell.source]
            document.suppressions.extend(parse_suppressions(lines, numbers))
    return document


# a whole line that a program fills in before the build: ``{pip}`` (``str.format``), ``{{ steps }}``, ``{% if … %}``
FILLED_IN_KEY = "filled-in lines"
FILLED_IN_LINE = lazy_regex(r"^\s*(?:\{\w+\}|\{\{.*\}\}|\{%.*%\})\s*$")


def _dockerfile_filled_in(document: Document, line: int) -> bool:
    """A Dockerfile that stops parsing at a line a program fills in before the build (``{pip}``) is a
    template, not a broken file: the rest is read with those lines left empty (positions stay
    true, ``FROM`` is still checked) and SPK003 says which lines were not."""
    lines = document.text.split("\n")
    if not (0 < line <= len(lines) and FILLED_IN_LINE.match(lines[line - 1])):
        return False
    blanks = [number for number, text in enumerate(lines, 1) if FILLED_IN_LINE.match(text)]
    trial = Document(document.source, "\n".join("" if FILLED_IN_LINE.match(text) else text for text in lines))
    try:
        _parse_dockerfile(trial)
    except ParseFailure:
        return False
    document.parsed = trial.parsed
    shown = ", ".join(lines[number - 1].strip() for number in blanks[:3]) + (", …" if len(blanks) > 3 else "")
    document.problems.append(Problem("SPK003", blanks[0], 1,
                                     f"{len(blanks)} line(s) that a program fills in before the build ({shown}) "
                                     f"not checked; lint the filled-in Dockerfile to check them",
                                     key=FILLED_IN_KEY))
    return True


def _as_text(document: Document, parsed: UnrenderedTemplate | None) -> Document:
    """The document as plain text: only text-level rules (secrets) look at it, no workload is read."""
    return Document(replace(document.source, kind=FileKind.TEXT), document.text, parsed=parsed,
                    suppressions=document.suppressions)


# ``export HF_TOKEN=<YOUR_HF_TOKEN>``, ``CODE_DIR=<PATH_TO_NEMO>``, ``--model <model name>``: a recipe's
# fill-in blank (a few words), which the reader replaces before running; to a shell it is a redirect,
# so the script would not parse at all.
_FILL_IN_BLANK = lazy_regex(r"(?<![<\w$])<([A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9](?: [A-Za-z0-9_.-]*[A-Za-z0-9]){0,4})>(?![>\w])")


def _parse_filled_in(document: Document) -> bool:
    """Parse a shell script whose only syntax errors are fill-in blanks, as if each were filled in.

    The blank becomes a word of the same length, so every position stays true and the script's
    other rules still run; a script that does not parse even then keeps its SPK001."""
    if "<" not in document.text:
        return False
    filled = _FILL_IN_BLANK.sub(lambda match: "_" + match.group(1) + "_", document.text)
    if filled == document.text:
        return False
    trial = Document(document.source, filled, suppressions=document.suppressions)
    try:
        _parse_shell(trial)
    except (ValueError, ParseFailure, RecursionError, MemoryError):
        return False
    document.parsed = trial.parsed
    return True


def _parses_as(source: SourceFile) -> Callable[[str], bool]:
    """Whether a text parses as ``source``'s kind (to tell template markup from a real mistake)."""
    def parses(text: str) -> bool:
        try:
            PARSERS[source.kind](Document(source, text))
        except (ValueError, ParseFailure, RecursionError, MemoryError):
            return False
        return True

    return parses


def read_document(source: SourceFile, image_limits: ImageLimits | None = None) -> Document:
    """Read, decode and parse one file; problems are recorded on the document."""
    if source.kind == FileKind.IMAGE:  # streamed from disk, never read whole, within the limits
        from spikelint.documents.image import read_image_document

        try:
            if os.path.getsize(source.abspath) == 0:  # an empty placeholder archive holds no image to read
                return Document(source, "")
        except OSError:
            pass  # read_image_document says why it cannot be read
        return read_image_document(source, image_limits)
    from spikelint.documents.bounded import MAX_BINARY_SCAN
    from spikelint.documents.bounded import binary_document
    from spikelint.documents.bounded import is_scanned_binary

    try:
        with open(source.abspath, "rb") as handle:
            if is_scanned_binary(source.path):  # a pickle or checkpoint: its strings and globals, within a bound
                size = os.fstat(handle.fileno()).st_size
                return binary_document(source, handle.read(MAX_BINARY_SCAN), size, abspath=source.abspath)
            data = handle.read()
    except OSError as error:
        return Document(source, "", problems=[Problem("SPK001", 1, 1, f"cannot read file: {error.strerror or error}")])
    return parse_bytes(source, data)


def parse_bytes(source: SourceFile, data: bytes) -> Document:
    """Decode and parse a file's bytes (a file on disk, or standard input).

    Text no parser reads (UTF-16/32, binary content) is still scanned for secrets.
    """
    from spikelint.documents.bounded import MAX_BINARY_SCAN
    from spikelint.documents.bounded import binary_document
    from spikelint.documents.bounded import bom_text
    from spikelint.documents.bounded import is_scanned_binary

    decoded = bom_text(data) if data.startswith(BYTE_ORDER_MARKS) else None
    if decoded is not None:
        wide, encoding = decoded
        if source.kind in TEXT_KINDS_THAT_MUST_DECODE:
            return Document(source, wide, problems=[Problem(
                "SPK001", 1, 1, f"file is {encoding} encoded (byte-order mark); save it as UTF-8 (only its text was "
                f"scanned, for secrets)")])
        return parse_text(source, wide)
    if is_scanned_binary(source.path) or b"\0" in data[:8192]:
        reason = None
        if source.kind in TEXT_KINDS_THAT_MUST_DECODE:
            reason = f"binary content (NUL bytes) in a {source.kind} file: not parsed, only scanned for token shapes"
        return binary_document(source, data[:MAX_BINARY_SCAN], len(data), reason)
    text, problem = decode(data)
    if text is None:
        shown = data.decode("utf-8", "replace")  # for snippets and the secret scan
        if source.kind in TEXT_KINDS_THAT_MUST_DECODE:
            return Document(source, shown, problems=[problem] if problem else [])
        return Document(source, shown)
    return parse_text(source, text)
