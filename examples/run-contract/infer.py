"""A stand-in batch job for the run-contract example (no model, no GPU needed).

It follows the contract a real job should follow: it reads the parameters precheck validated
from the run's manifest (not from the config, which may have changed since), accounts for every
input item as a result or an error, and writes summary.json last and atomically, so a summary
on disk always describes complete files.

    python infer.py --run-dir runs/r1
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any
from typing import Iterator


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json_atomic(path: Path, data: Any) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def batches(path: Path, size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as source:
        for line in source:
            if line.strip():
                batch.append(json.loads(line))
            if len(batch) == size:
                yield batch
                batch = []
    if batch:
        yield batch


def answer(item: dict[str, Any]) -> str:
    """The 'model': anything deterministic will do for the example."""
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty prompt")
    return text.strip().upper()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True)
    run_dir = Path(parser.parse_args().run_dir)
    parameters = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["parameters"]
    source = Path(parameters["input"])
    if not source.is_absolute():
        source = run_dir / source
    counts = {"received": 0, "succeeded": 0, "rejected": 0}
    started = utc_now()
    with open(run_dir / "results.jsonl", "w", encoding="utf-8") as results, \
            open(run_dir / "errors.jsonl", "w", encoding="utf-8") as errors:
        for batch in batches(source, parameters["batch_size"]):
            for item in batch:
                counts["received"] += 1
                try:
                    record = {"id": item["id"], "output": answer(item)}
                except ValueError as error:
                    errors.write(json.dumps({"id": item["id"], "reason": str(error), "stage": "validate"}) + "\n")
                    counts["rejected"] += 1
                    continue
                results.write(json.dumps(record) + "\n")
                counts["succeeded"] += 1
            results.flush()
            errors.flush()
    write_json_atomic(run_dir / "summary.json", {
        "status": "completed", **counts, "pending": 0, "started": started, "finished": utc_now(),
        "files": ["results.jsonl", "errors.jsonl"],
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
