"""The checks of ``verify-run``: a run folder's files against their schemas and each other.

Files are streamed line by line (JSON Lines outputs and inputs can be large); each record is
held only as its id.  Every problem is an :class:`Issue` at the file and line that shows it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterator
from typing import NamedTuple
from typing import Sequence

from spikelint.model import Located
from spikelint.model import Node
from spikelint.contract.config_schema import is_integer
from spikelint.contract.reading import JSON
from spikelint.contract.reading import ReadProblem

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"
SCHEMAS = {MANIFEST: "run-manifest.v1.schema.json", SUMMARY: "run-summary.v1.schema.json",
           RESULTS: "run-result.v1.schema.json", ERRORS: "run-error.v1.schema.json"}
COUNTERS = ("received", "succeeded", "rejected", "pending")
COUNTER_OF = {RESULTS: "succeeded", ERRORS: "rejected"}
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_ISSUES_PER_FILE = 1000
SHOWN_IDS = 5
RULE = "SPK601"


class Issue(NamedTuple):
    path: str
    line: int
    column: int
    message: str
    key: str = ""
    end_line: int | None = None
    end_column: int | None = None
    rule: str = RULE


class SparseLines(Sequence[str]):
    """A file's lines as far as messages need them: the lines that carry findings, others blank."""

    def __init__(self, lines: dict[int, str], length: int) -> None:
        self._lines = lines
        self._length = max(length, max(lines, default=0))

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._lines.get(index + 1, "")

    def present(self) -> list[str]:
        """The lines actually kept (the others are blank)."""
        return list(self._lines.values())

    def mapped(self, function: Callable[[str], str]) -> SparseLines:
        """The same sparse lines with ``function`` applied to each kept line."""
        return SparseLines({number: function(line) for number, line in self._lines.items()}, self._length)


@dataclass
class RunFiles:
    """What was read, for the report: display paths, the manifest's text, source lines."""

    folder: Path
    manifest_path: str
    manifest_text: str | None = None
    files_read: int = 0
    sources: dict[str, Sequence[str]] = field(default_factory=dict)


class Collector:
    """Issues in file order, at most :data:`MAX_ISSUES_PER_FILE` listed per file."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.per_file: dict[str, int] = {}
        self.hidden: dict[str, int] = {}
        self.lines: dict[str, dict[int, str]] = {}
        self.lengths: dict[str, int] = {}

    def add(self, path: str, line: int, column: int, message: str, *, key: str = "", source: str | None = None,
            end: tuple[int | None, int | None] = (None, None)) -> None:
        listed = self.per_file.get(path, 0)
        if listed >= MAX_ISSUES_PER_FILE:
            self.hidden[path] = self.hidden.get(path, 0) + 1
            return
        self.per_file[path] = listed + 1
        self.issues.append(Issue(path, max(line, 1), max(column, 1), message, key or message, end[0], end[1]))
        if source is not None:
            self.lines.setdefault(path, {})[line] = source

    def at(self, path: str, place: Located | Node | None, message: str, key: str = "") -> None:
        if place is None:
            self.add(path, 1, 1, message, key=key)
        else:
            self.add(path, place.line, place.column, message, key=key, end=(place.end_line, place.end_column))

    def finish(self) -> list[Issue]:
        for path, count in self.hidden.items():
            self.issues.append(Issue(path, 1, 1, f"{count} more problem{'s' if count != 1 else ''} in this file "
                                     f"not listed (only the first {MAX_ISSUES_PER_FILE} are)"))
        return self.issues


def display(path: Path, cwd: Path) -> str:
    from spikelint.files import display_path

    absolute = Path(os.path.abspath(path))
    return display_path(absolute, Path(os.path.abspath(cwd)))


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


# --------------------------------------------------------------------------- cross-file checks


def counters(summary: JsonFile) -> dict[str, int]:
    data = summary.data or {}
    return {name: data[name] for name in COUNTERS if is_integer(data.get(name)) and data[name] >= 0}


def check_ids_in_both(results: Records, errors: Records, collector: Collector) -> None:
    for key, line in errors.ids.items():
        if key in results.ids:
            collector.add(errors.shown, line, 1, f"id {id_text(key)} is in both {RESULTS} (line "
                          f"{results.ids[key]}) and {ERRORS}: an item either succeeds or is rejected",
                          key=f"both {id_text(key)}")


def check_counts(summary: JsonFile, counts: dict[str, int], outputs: list[Records], collector: Collector) -> None:
    if all(name in counts for name in COUNTERS):
        total = counts["succeeded"] + counts["rejected"] + counts["pending"]
        if counts["received"] != total:
            collector.at(summary.shown, summary.place("received"),
                         f"received is {counts['received']} but succeeded + rejected + pending is "
                         f"{counts['succeeded']} + {counts['rejected']} + {counts['pending']} = {total}")
    for records in outputs:
        counter = COUNTER_OF[records.name]
        if counter not in counts:
            continue
        if records.present and counts[counter] != records.count:
            collector.at(summary.shown, summary.place(counter),
                         f"{counter} is {counts[counter]} but {records.name} has {records.count} "
                         f"record{'s' if records.count != 1 else ''}")
        elif not records.present and counts[counter] > 0:
            collector.at(summary.shown, summary.place(counter),
                         f"{counter} is {counts[counter]} but {records.name} is missing")


def check_missing_outputs(summary: JsonFile, counts: dict[str, int], outputs: list[Records], collector: Collector) -> None:
    """A missing results/errors file is a finding unless the summary says it would be empty."""
    listed = _listed_files(summary)
    for records in outputs:
        if records.present:
            continue
        counter = COUNTER_OF[records.name]
        if counter in counts and counts[counter] > 0:
            continue  # check_counts names it next to the counter
        if summary.data is None or counter not in counts or records.name in listed:
            collector.add(records.shown, 1, 1, f"{records.name} does not exist: the run's "
                          f"{'results' if records.name == RESULTS else 'rejections'} cannot be verified")


def _listed_files(summary: JsonFile) -> set[str]:
    files = (summary.data or {}).get("files")
    values = files.values() if isinstance(files, dict) else files if isinstance(files, list) else []
    return {Path(value).name for value in values if isinstance(value, str)}


def check_listed_files(summary: JsonFile, folder: Path, collector: Collector) -> None:
    files = (summary.data or {}).get("files")
    values = list(files.values()) if isinstance(files, dict) else files if isinstance(files, list) else []
    for value in values:  # names of run-folder files; paths elsewhere (the input) are not checked here
        if isinstance(value, str) and value and "/" not in value and "\\" not in value \
                and not os.path.lexists(folder / value):
            collector.at(summary.shown, summary.place("files"),
                         f"files names {value!r}, which is not in the run folder", key=f"files {value}")


def check_input_accounting(source: InputFile, results: Records, errors: Records, summary: JsonFile,
                           counts: dict[str, int], collector: Collector) -> None:
    if not source.has_ids:
        return  # not JSON Lines with ids: only the hash can be compared
    if "received" in counts and counts["received"] != source.count:
        collector.at(summary.shown, summary.place("received"),
                     f"received is {counts['received']} but the input {source.shown} has {source.count} "
                     f"record{'s' if source.count != 1 else ''}", key="received vs input")
    for records in (results, errors):
        for key, line in records.ids.items():
            if key not in source.ids:
                collector.add(records.shown, line, 1, f"id {id_text(key)} is not an id of the input "
                              f"{source.shown}", key=f"unknown {id_text(key)}")
    unaccounted = [key for key in source.ids if key not in results.ids and key not in errors.ids]
    pending = counts.get("pending", 0)
    if not unaccounted:
        return
    if pending == 0:
        for key in unaccounted:
            collector.add(source.shown, source.ids[key], 1, f"input id {id_text(key)} is in neither "
                          f"{RESULTS} nor {ERRORS} (and the summary has no pending items)", key=f"unaccounted {id_text(key)}")
    elif pending != len(unaccounted):
        examples = ", ".join(id_text(key) for key in unaccounted[:SHOWN_IDS])
        more = ", …" if len(unaccounted) > SHOWN_IDS else ""
        collector.at(summary.shown, summary.place("pending"),
                     f"pending is {pending} but {len(unaccounted)} input ids are in neither {RESULTS} nor "
                     f"{ERRORS} ({examples}{more})")


def check_input_hash(source: InputFile, recorded: str | None, anchor: Located | None, manifest: JsonFile,
                     collector: Collector) -> None:
    if recorded is None or source.sha256 is None:
        return
    if recorded.strip().lower() != source.sha256:
        collector.at(manifest.shown, anchor,
                     f"the input changed under the run: {source.shown} has SHA-256 {source.sha256[:12]}…, "
                     f"{MANIFEST} records {recorded.strip()[:12]}…", key="input sha256")


def check_status(summary: JsonFile, counts: dict[str, int], problems: int, collector: Collector) -> None:
    status = (summary.data or {}).get("status")
    if not isinstance(status, str):
        return
    place = summary.place("status")
    pending = counts.get("pending")
    if status == "completed":
        if pending:
            collector.at(summary.shown, place, f"status is 'completed' but pending is {pending}")
        elif problems:
            collector.at(summary.shown, place, f"status is 'completed' but the run folder is inconsistent "
                         f"({problems} problem{'s' if problems != 1 else ''} reported with this one)")
    elif status in ("partial", "failed"):
        detail = f" with {pending} pending item{'s' if pending != 1 else ''}" if pending else ""
        collector.at(summary.shown, place, f"the run is not complete: status is {status!r}{detail}")


def _fill_lines(path: Path, shown: str, collector: Collector) -> None:
    """The text of the input's lines that carry findings (read again only when there are some)."""
    stored = collector.lines.setdefault(shown, {})
    wanted = {issue.line for issue in collector.issues if issue.path == shown} - set(stored)
    if not wanted:
        return
    try:
        for line in read_lines(path):
            if line.number in wanted and line.text is not None:
                stored[line.number] = line.text[:500]
            if line.number >= max(wanted):
                return
    except OSError:
        return


# --------------------------------------------------------------------------- the whole folder


def verify_folder(folder: Path, input_override: str | None, cwd: Path) -> tuple[RunFiles, list[Issue], list[str]]:
    """Every consistency check of run-contract.md on ``folder``; returns what was read, issues, notes."""
    collector = Collector()
    files = RunFiles(folder, display(folder / MANIFEST, cwd))
    notes: list[str] = []
    manifest = load_object(folder, MANIFEST, cwd, collector, files)
    files.manifest_text = manifest.text
    summary = load_object(folder, SUMMARY, cwd, collector, files)
    results = read_records(folder, RESULTS, cwd, collector, files)
    errors = read_records(folder, ERRORS, cwd, collector, files)
    counts = counters(summary)
    check_ids_in_both(results, errors, collector)
    check_counts(summary, counts, [results, errors], collector)
    check_missing_outputs(summary, counts, [results, errors], collector)
    check_listed_files(summary, folder, collector)
    recorded_path, recorded_sha, sha_anchor = manifest_input(manifest)
    input_path = locate_input(recorded_path, input_override, manifest, folder, cwd)
    source = read_input(input_path, cwd, collector, files) if input_path is not None else None
    if source is not None:
        check_input_hash(source, recorded_sha, sha_anchor, manifest, collector)
        check_input_accounting(source, results, errors, summary, counts, collector)
        _fill_lines(source.path, source.shown, collector)
        files.sources.setdefault(source.shown, SparseLines(collector.lines.get(source.shown, {}), source.count))
    elif input_override is not None:
        collector.add(display(Path(input_override), cwd), 1, 1, f"--input {input_override}: not a readable file")
    elif recorded_path:
        notes.append(f"the input {recorded_path} is not reachable from here: the input hash and id checks were "
                     f"skipped (pass --input FILE)")
    check_status(summary, counts, len(collector.issues), collector)
    return files, collector.finish(), notes
