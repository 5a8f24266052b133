"""A job whose step lines come two steps late and whose saves are not atomic, like torchrun workers with
millisecond steps seen through a pipe: a SIGKILL sent after the line of step 14 reaches it inside its save of
step 16. No torch: the state is a number, each checkpoint a folder written file by file (``state.json``, then
``COMPLETE``, as torch.distributed.checkpoint writes its ``.metadata`` last), and the resume trusts the newest folder."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

LATE = 2  # how many steps the lines trail the work


def newest(folder: Path) -> tuple[int, float]:
    steps = sorted(int(path.name.split("-")[1]) for path in folder.glob("step-*"))
    if not steps:
        return 0, 1.0
    saved = folder / f"step-{steps[-1]}"
    if not (saved / "COMPLETE").exists():  # a torn save: the resume crashes on it, as DCP's load does
        raise SystemExit(f"FileNotFoundError: {saved / 'COMPLETE'}")
    state = json.loads((saved / "state.json").read_text())
    return state["step"], state["weight"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--save-every", type=int, required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    folder = Path(args.output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    step, weight = newest(folder) if args.resume else (0, 1.0)
    lines: list[str] = []
    while step < args.max_steps:
        step += 1
        weight = weight * 0.97 + 0.01 * step
        time.sleep(0.05)
        lines.append(f"step={step} loss={weight * weight!r}")
        if len(lines) > LATE:
            print(lines.pop(0), flush=True)
        if step % args.save_every == 0:
            saved = folder / f"step-{step}"
            saved.mkdir()
            (saved / "state.json").write_text(json.dumps({"step": step, "weight": weight}))
            time.sleep(0.4)  # the rest of a large save
            (saved / "COMPLETE").write_text("{}")
    for line in lines:
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
