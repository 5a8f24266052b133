"""Reading what ``verify-run`` checks: the run folder's JSON objects and JSON Lines records, and the input.

Each file is checked against its schema as it is read; JSON Lines files are streamed line by
line and each record is held only as its id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterator
from typing import NamedTuple

from spikelint.model import Located
from spikelint.model import Node
from spikelint.contract.config_schema import is_integer
from spikelint.contract.reading import JSON
from spikelint.contract.reading import ReadProblem
from spikelint.run.issues import Collector
from spikelint.run.issues import RunFiles
from spikelint.run.issues import SparseLines
from spikelint.run.issues import display

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"
SCHEMAS = {MANIFEST: "run-manifest.v1.schema.json", SUMMARY: "run-summary.v1.schema.json",
           RESULTS: "run-result.v1.schema.json", ERRORS: "run-error.v1.schema.json"}
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024


def id_text(value: Any) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:59] + "…")
    return json.dumps(value)


def valid_id(value: Any) -> bool:
    return (isinstance(value, str) and value != "") or is_integer(value)


def id_key(value: Any) -> str | int:
    """Ids compare as JSON values: ``1`` and ``"1"`` are different ids (and different dict keys)."""
    return value


_decode = json.JSONDecoder().decode


# --------------------------------------------------------------------------- JSON objects


@dataclass
class JsonFile:
    name: str
    shown: str
    text: str | None = None
    root: Node | None = None
    data: dict[str, Any] | None = None

    def place(self, *path: str) -> Located | None:
        """Where the key at ``path`` is written (for findings about its value)."""
        if self.root is None or not path:
            return None
        owner = self.root.get(*path[:-1])
        return owner.key_at(path[-1]) if owner is not None else None


MISSING_HINTS = {
    MANIFEST: "a run folder starts with the manifest that `spikelint precheck --init` writes",
    SUMMARY: "a finished run writes summary.json with status and received/succeeded/rejected/pending",
}


def load_object(folder: Path, name: str, cwd: Path, collector: Collector, files: RunFiles) -> JsonFile:
    """Read, parse and schema-check one JSON object file of the run folder."""
    from spikelint.contract.reading import parse_one
    from spikelint.contract.reading import plain_mapping
    from spikelint.contract.reading import read_text

    path = folder / name
    loaded = JsonFile(name, display(path, cwd))
    try:
        _, text = read_text(path, MAX_JSON_BYTES)
    except ReadProblem as problem:
        hint = f": {MISSING_HINTS[name]}" if problem.message == "does not exist" and name in MISSING_HINTS else ""
        collector.add(loaded.shown, problem.line or 1, problem.column or 1, f"{name} {problem.message}{hint}")
        return loaded
    files.files_read += 1
    loaded.text = text
    files.sources[loaded.shown] = text.splitlines()
    try:
        root = parse_one(text, JSON)
    except ReadProblem as problem:
        collector.add(loaded.shown, problem.line or 1, problem.column or 1, f"{name} is not valid JSON: "
                      f"{problem.message.removeprefix('invalid JSON: ')}")
        return loaded
    if root is None:
        collector.add(loaded.shown, 1, 1, f"{name} is empty: it must be a JSON object")
        return loaded
    if root.kind != "map":
        from spikelint.contract.reading import kind_of

        collector.add(loaded.shown, root.line, root.column, f"{name} must be a JSON object, got {kind_of(root)}")
        return loaded
    try:
        loaded.data = plain_mapping(root)
    except ReadProblem as problem:
        collector.add(loaded.shown, problem.line or 1, problem.column or 1, f"{name} {problem.message}")
        return loaded
    loaded.root = root
    _schema_issues(loaded, collector)
    return loaded


def _schema_issues(loaded: JsonFile, collector: Collector) -> None:
    from spikelint.contract.violations import locate
    from spikelint.contract.violations import violations
    from spikelint.schemas import load_schema

    assert loaded.root is not None
    found = violations(load_schema(SCHEMAS[loaded.name]), loaded.data, root=loaded.name,
                       subject=f"the {loaded.name} schema")
    for violation in found:
        place = locate(loaded.root, violation)
        collector.add(loaded.shown, place.line, place.column, f"{loaded.name}: {violation.message}",
                      end=(place.end_line, place.end_column))


# --------------------------------------------------------------------------- JSON Lines


class Line(NamedTuple):
    number: int
    text: str | None  # None when the line could not be decoded or was too long
    problem: str | None
    complete: bool  # ended with a newline


def read_lines(path: Path, digest: Any = None) -> Iterator[Line]:
    """Non-blank lines, streamed; over-long and undecodable lines come back as problems."""
    with open(path, "rb") as handle:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if digest is not None:
                digest.update(raw)
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = handle.readline(MAX_LINE_BYTES)
                    if digest is not None:
                        digest.update(raw)
                yield Line(number, None, f"line is longer than {MAX_LINE_BYTES:,} bytes", True)
                continue
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                yield Line(number, None, f"line is not valid UTF-8 (byte {error.start + 1})", raw.endswith(b"\n"))
                continue
            if text.strip():
                yield Line(number, text.rstrip("\r\n"), None, raw.endswith(b"\n"))


@dataclass
class Records:
    name: str
    shown: str
    present: bool = False
    count: int = 0  # non-blank lines (records, valid or not)
    ids: dict[str | int, int] = field(default_factory=dict)  # id -> first line


def _fast_valid_result(record: dict[str, Any]) -> bool:
    return valid_id(record.get("id")) and len(record) >= 2


def _fast_valid_error(record: dict[str, Any]) -> bool:
    stage = record.get("stage", "x")
    reason = record.get("reason")
    return valid_id(record.get("id")) and isinstance(reason, str) and reason != "" and isinstance(stage, str) \
        and stage != ""


# Records the shipped schemas accept for sure, without the (slow) general validator.
FAST_VALID: dict[str, Callable[[dict[str, Any]], bool]] = {RESULTS: _fast_valid_result, ERRORS: _fast_valid_error}


def read_records(folder: Path, name: str, cwd: Path, collector: Collector, files: RunFiles) -> Records:
    from spikelint.contract.reading import regular_file_problem

    path = folder / name
    records = Records(name, display(path, cwd))
    problem = regular_file_problem(path)
    if problem == "does not exist":
        return records
    if problem is not None:
        collector.add(records.shown, 1, 1, f"{name} {problem}")
        return records
    records.present = True
    files.files_read += 1
    last = 0
    try:
        for line in read_lines(path):
            last = line.number
            records.count += 1
            _check_record(line, records, collector)
    except OSError as error:
        collector.add(records.shown, last + 1, 1, f"{name} cannot be read: {error.strerror or error}")
    files.sources[records.shown] = SparseLines(collector.lines.get(records.shown, {}), last)
    return records


def _check_record(line: Line, records: Records, collector: Collector) -> None:
    shown, name = records.shown, records.name
    if line.text is None:
        collector.add(shown, line.number, 1, f"{name}: {line.problem}")
        return
    try:
        record = _decode(line.text)
    except RecursionError:
        collector.add(shown, line.number, 1, f"{name}: the record nests too deeply to read", source=line.text[:500])
        return
    except ValueError as error:
        truncated = "; the record looks cut off (no newline at the end of the file)" if not line.complete else ""
        column = getattr(error, "colno", 1)
        reason = getattr(error, "msg", str(error))
        collector.add(shown, line.number, column, f"{name}: line is not valid JSON ({reason}){truncated}",
                      source=line.text[:500])
        return
    if not isinstance(record, dict):
        from spikelint.secrets.shown_values import shown as show

        collector.add(shown, line.number, 1, f"{name}: each line must be a JSON object, got {show(record)}",
                      source=line.text[:500])
        return
    if not FAST_VALID[name](record):
        _record_schema_issues(line, record, records, collector)
    identity = record.get("id")
    if not valid_id(identity):
        return
    key = id_key(identity)
    first = records.ids.get(key)
    if first is not None:
        collector.add(shown, line.number, 1, f"{name}: duplicate id {id_text(identity)} (first at line {first}): "
                      f"each item is written once", key=f"duplicate {id_text(key)}", source=line.text[:500])
        return
    records.ids[key] = line.number


def _record_schema_issues(line: Line, record: dict[str, Any], records: Records, collector: Collector) -> None:
    from spikelint.documents.jsondoc import parse_json
    from spikelint.contract.violations import locate
    from spikelint.contract.violations import violations
    from spikelint.schemas import load_schema

    assert line.text is not None
    try:
        root: Node | None = parse_json(line.text)
    except ValueError:
        root = None
    kind = "result" if records.name == RESULTS else "error record"
    for violation in violations(load_schema(SCHEMAS[records.name]), record, root=f"the {kind}",
                                subject=f"the {kind} schema"):
        column = locate(root, violation).column if root is not None else 1
        collector.add(records.shown, line.number, column, f"{records.name}: {violation.message}",
                      source=line.text[:500])


# --------------------------------------------------------------------------- the input


@dataclass
class InputFile:
    path: Path
    shown: str
    sha256: str | None = None
    count: int = 0
    ids: dict[str | int, int] = field(default_factory=dict)
    has_ids: bool = False


def manifest_input(manifest: JsonFile) -> tuple[str | None, str | None, Located | None]:
    """The input path and SHA-256 the manifest records, and where the hash is written."""
    data = manifest.data or {}
    record = data.get("input")
    if isinstance(record, dict):
        path, digest = record.get("path"), record.get("sha256")
        return (path if isinstance(path, str) else None, digest if isinstance(digest, str) else None,
                manifest.place("input", "sha256") or manifest.place("input"))
    path, digest = data.get("input_path"), data.get("input_sha256")
    return (path if isinstance(path, str) else None, digest if isinstance(digest, str) else None,
            manifest.place("input_sha256"))


def locate_input(recorded: str | None, override: str | None, manifest: JsonFile, folder: Path,
                 cwd: Path) -> Path | None:
    """The input file as reachable from here: ``--input``, else the manifest's path (relative paths tried
    against the run folder, the config's folder and the current folder)."""
    from spikelint.contract.reading import regular_file_problem

    if override is not None:
        return Path(override)
    if not recorded:
        return None
    raw = Path(recorded)
    candidates = [raw] if raw.is_absolute() else [folder / raw]
    config = (manifest.data or {}).get("config")
    if not raw.is_absolute():
        if isinstance(config, dict) and isinstance(config.get("path"), str):
            candidates.append(Path(config["path"]).parent / raw)
        candidates.append(cwd / raw)
    for candidate in candidates:
        if regular_file_problem(candidate) is None:
            return candidate
    return None


def read_input(path: Path, cwd: Path, collector: Collector, files: RunFiles) -> InputFile | None:
    """Hash the input and collect its ids when it is JSON Lines with ``id`` fields (one pass)."""
    from spikelint.contract.reading import regular_file_problem

    if regular_file_problem(path) is not None:
        return None
    loaded = InputFile(path, display(path, cwd))
    digest = hashlib.sha256()
    first = True
    try:
        for line in read_lines(path, digest):
            loaded.count += 1
            record = _json_or_none(line.text)
            if first:
                loaded.has_ids = isinstance(record, dict) and "id" in record
                first = False
            if not loaded.has_ids or not isinstance(record, dict) or not valid_id(record.get("id")):
                continue
            key = id_key(record["id"])
            if key in loaded.ids:
                collector.add(loaded.shown, line.number, 1, f"duplicate input id {id_text(record['id'])} (first at "
                              f"line {loaded.ids[key]}): an id cannot be accounted for exactly once",
                              key=f"duplicate {id_text(key)}", source=(line.text or "")[:500])
                continue
            loaded.ids[key] = line.number
    except OSError:
        return None
    files.files_read += 1
    loaded.sha256 = digest.hexdigest()
    return loaded


def _json_or_none(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return _decode(text)
    except (ValueError, RecursionError):
        return None
