"""``spikelint smoke diff A B``: two checkpoints compared leaf by leaf, named as the smoke report names them.

A and B are two files of one format, two DCP folders, or two folders of checkpoint files
(Hugging Face ``checkpoint-N/`` and the like, matched by relative file name). Exit 0 equal bit
for bit, 1 different (the differing leaves as ``file:key``, kind, largest |difference|), 2 for
input that cannot be compared (a missing path, mixed formats, a file the safe loaders refuse).
This module imports torch only after the options are parsed.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Sequence
from typing import TextIO

SCHEMA_VERSION = 1
EXIT_EQUAL, EXIT_DIFFERENT, EXIT_UNUSABLE = 0, 1, 2
SHOWN_IN_TEXT = 40
TORCH_MISSING = "spikelint smoke diff needs PyTorch, which is not installed: pip install \"torch>=2.1\" \"numpy>=1.24\" (spikelint's smoke extra)"


class DiffInputError(ValueError):
    """A and B cannot be compared (exit 2); the message names the path and the fix."""


@dataclass
class DiffResult:
    a: Path
    b: Path
    format: str
    leaves: int = 0
    compared: list[str] = field(default_factory=list)
    differences: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spikelint smoke diff",
        description="Compare two checkpoints leaf by leaf, bit for bit: torch.save files (weights_only=True), "
                    "safetensors, JSON, Hugging Face checkpoint-N/ folders, torch.distributed.checkpoint folders. "
                    "Exit 0 equal, 1 different, 2 input that cannot be compared.")
    parser.add_argument("a", metavar="A", help="a checkpoint file or folder (the reference)")
    parser.add_argument("b", metavar="B", help="a checkpoint of the same format (the one compared with A)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="report on standard output")
    return parser


def path_format(path: Path) -> str:
    from spikelint.smoke.compare.loaders import file_format
    from spikelint.smoke.compare.loaders import is_dcp_folder

    if path.is_dir():
        return "dcp" if is_dcp_folder(path) else "folder"
    return file_format(path)


def diff_paths(a: Path, b: Path) -> DiffResult:
    """Compare A with B; raises ``DiffInputError`` for what cannot be compared."""
    from spikelint.smoke.compare.loaders import FORMAT_NAMES
    from spikelint.smoke.compare.loaders import Comparison
    from spikelint.smoke.compare.loaders import Unit
    from spikelint.smoke.compare.loaders import checkpoint_files
    from spikelint.smoke.compare.loaders import compare_pair
    from spikelint.smoke.compare.loaders import units

    for path in (a, b):
        if not path.exists():
            raise DiffInputError(f"{path}: no such file or folder; give two checkpoint files or two checkpoint folders")
        if not (path.is_file() or path.is_dir()):
            raise DiffInputError(f"{path}: not a regular file or folder")
    kind_a, kind_b = path_format(a), path_format(b)
    if kind_a != kind_b:
        raise DiffInputError(f"{a} is {FORMAT_NAMES[kind_a]} but {b} is {FORMAT_NAMES[kind_b]}; "
                             "compare two checkpoints of the same format")
    result = DiffResult(a, b, kind_a)
    comparison = Comparison()
    if kind_a != "folder":  # one file or one DCP folder on each side, named by A's name
        compare_pair(Unit(a.name, Path(a.name), kind_a), a, b, comparison)
    else:
        files_a, files_b = checkpoint_files(a), checkpoint_files(b)
        if not files_a and not files_b:
            raise DiffInputError(f"{a} and {b} hold no checkpoint files")
        units_a = {unit.name: unit for unit in units(a, files_a)}
        units_b = {unit.name: unit for unit in units(b, files_b)}
        for name, unit in units_a.items():
            other = units_b.get(name)
            if other is None:
                result.differences.append(entry(name, "", "missing_in_b", None, f"only in A ({FORMAT_NAMES[unit.format]})"))
            elif other.format != unit.format:
                raise DiffInputError(f"{a / unit.path} is {FORMAT_NAMES[unit.format]} but {b / other.path} is "
                                     f"{FORMAT_NAMES[other.format]}; compare checkpoints of the same format")
            else:
                compare_pair(unit, a / unit.path, b / unit.path, comparison)
        for name, unit in units_b.items():
            if name not in units_a:
                result.differences.append(entry(name, "", "extra_in_b", None, f"only in B ({FORMAT_NAMES[unit.format]})"))
    if comparison.problems or comparison.not_compared:
        raise DiffInputError("; ".join(comparison.problems + comparison.not_compared))
    result.leaves = comparison.leaves
    result.compared = comparison.compared
    result.notes = comparison.notes
    found = [entry(file, d.key, d.kind, d.max_abs_diff, d.detail) for file, d in comparison.differences]
    result.differences = found + result.differences
    return result


_KINDS = {"missing_in_resumed": "missing_in_b", "extra_in_resumed": "extra_in_b"}


def entry(file: str, leaf: str, kind: str, max_abs_diff: float | None, detail: str) -> dict[str, Any]:
    """One difference with the smoke report's ``file:key`` naming; A stands where the report says reference."""
    detail = re.sub(r"^reference (has )?", lambda m: "A has " if m.group(1) else "A ", detail)
    detail = re.sub(r"(^|, )resumed (has )?", lambda m: f"{m.group(1)}B {'has ' if m.group(2) else ''}", detail)
    return {"key": f"{file}:{leaf}" if leaf else file, "file": file, "leaf": leaf, "kind": _KINDS.get(kind, kind),
            "max_abs_diff": max_abs_diff, "detail": detail}


def to_json(result: DiffResult | None, exit_code: int, message: str, a: str, b: str) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": "spikelint smoke diff",
        "a": a,
        "b": b,
        "format": result.format if result else None,
        "equal": None if result is None else not result.differences,
        "exit_code": exit_code,
        "message": message,
        "leaves_compared": result.leaves if result else 0,
        "compared": result.compared if result else [],
        "differences": result.differences if result else [],
        "notes": result.notes if result else [],
    }


def summary_line(result: DiffResult) -> str:
    pieces = f"{len(result.compared)} file(s)" if result.format == "folder" else result.a.name
    if not result.differences:
        return f"EQUAL: {result.leaves} leaves of {pieces} equal bit for bit"
    one_side = ("missing_in_b", "extra_in_b")
    files = sum(1 for d in result.differences if not d["leaf"] and d["kind"] in one_side)
    only_a = sum(1 for d in result.differences if d["leaf"] and d["kind"] == "missing_in_b")
    only_b = sum(1 for d in result.differences if d["leaf"] and d["kind"] == "extra_in_b")
    changed = len(result.differences) - files - only_a - only_b
    # result.leaves counts A's leaves: a leaf only B has is not one of them, so it is counted apart
    parts = [f"{changed} of {result.leaves} leaves differ"] if changed else []
    if only_a:
        parts.append(f"{only_a} leaves only in A")
    if only_b:
        parts.append(f"{only_b} leaves only in B")
    if files:
        parts.append(f"{files} file(s) only on one side")
    return f"DIFFERENT: {', '.join(parts)} (first: {result.differences[0]['key']})"


def render_text(result: DiffResult) -> str:
    lines = [f"spikelint smoke diff: {summary_line(result)}", f"  A: {result.a}", f"  B: {result.b}"]
    for difference in result.differences[:SHOWN_IN_TEXT]:
        largest = difference["max_abs_diff"]
        delta = f"  max |diff| {largest:.3g}" if largest is not None else ""
        lines.append(f"  {difference['key']}  {difference['kind']}{delta}  ({difference['detail']})")
    if len(result.differences) > SHOWN_IN_TEXT:
        lines.append(f"  … {len(result.differences) - SHOWN_IN_TEXT} more (--format json lists all)")
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    try:
        args = build_parser().parse_args(list(argv))
    except SystemExit as exit_request:  # --help, or a usage error (2)
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_UNUSABLE

    def unusable(message: str) -> int:
        print(f"spikelint smoke diff: error: {message}", file=stderr)
        if args.format == "json":
            stdout.write(json.dumps(to_json(None, EXIT_UNUSABLE, message, args.a, args.b), indent=2) + "\n")
        return EXIT_UNUSABLE

    try:
        import torch  # noqa: F401  (the optional extra; imported only now)
    except ImportError:
        return unusable(TORCH_MISSING)
    try:
        result = diff_paths(Path(args.a), Path(args.b))
    except DiffInputError as error:
        return unusable(str(error))
    except OSError as error:
        return unusable(f"{getattr(error, 'filename', None) or args.a}: {error.strerror or error}")
    code = EXIT_DIFFERENT if result.differences else EXIT_EQUAL
    if args.format == "json":
        stdout.write(json.dumps(to_json(result, code, summary_line(result), args.a, args.b), indent=2) + "\n")
    else:
        stdout.write(render_text(result))
    return code
