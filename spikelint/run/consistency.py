"""The checks of ``verify-run``: a run folder's files against their schemas and each other.

Files are streamed line by line (JSON Lines outputs and inputs can be large; reading them is
:mod:`spikelint.run.folder_files`); each record is held only as its id.  Every problem is an
:class:`~spikelint.run.issues.Issue` at the file and line that shows it.
"""

from __future__ import annotations

import os
from pathlib import Path

from spikelint.model import Located
from spikelint.contract.config_schema import is_integer
from spikelint.run.issues import Collector
from spikelint.run.issues import Issue
from spikelint.run.issues import RunFiles
from spikelint.run.issues import SparseLines
from spikelint.run.issues import display
from spikelint.run.folder_files import ERRORS
from spikelint.run.folder_files import MANIFEST
from spikelint.run.folder_files import RESULTS
from spikelint.run.folder_files import SUMMARY
from spikelint.run.folder_files import InputFile
from spikelint.run.folder_files import JsonFile
from spikelint.run.folder_files import Records
from spikelint.run.folder_files import id_text
from spikelint.run.folder_files import load_object
from spikelint.run.folder_files import locate_input
from spikelint.run.folder_files import manifest_input
from spikelint.run.folder_files import read_input
from spikelint.run.folder_files import read_lines
from spikelint.run.folder_files import read_records

COUNTERS = ("received", "succeeded", "rejected", "pending")
COUNTER_OF = {RESULTS: "succeeded", ERRORS: "rejected"}
SHOWN_IDS = 5


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
