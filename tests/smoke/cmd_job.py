"""A training script without torch for the ``--cmd`` tests: one weight, SGD with momentum, JSON checkpoints.

A run costs milliseconds instead of the seconds of ``import torch``, so the semantics of
every variant are tested with it; ``spikelint.smoke.example_train`` proves them on torch.
``--accumulate K`` takes an optimizer step every K micro-steps; ``--bug`` breaks one thing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

BUGS = ("forget-accumulation", "no-fallback", "load-torn", "ignore-sigterm", "no-sigterm-handler", "save-in-handler",
        "counter-since-start")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--save-every", type=int, required=True)
    parser.add_argument("--ckpt-dir", required=True)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--step-time", type=float, default=0.02)
    parser.add_argument("--bug", choices=BUGS)
    parser.add_argument("--resume-wait", type=float, default=0.0,
                        help="seconds a resume spends silent before anything (slow data loading); then it writes "
                             "alive.txt beside its checkpoints")
    args = parser.parse_args(argv)
    if args.resume and args.resume_wait:
        time.sleep(args.resume_wait)
        (Path(args.ckpt_dir) / "alive.txt").write_text(f"parent {os.getppid()}\n", encoding="utf-8")
    stop = {"requested": False}
    if args.bug == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif args.bug == "save-in-handler":  # saves at once, wherever the step is, and exits

        def save_and_exit(signum: int, frame: Any) -> None:
            save(f"step-{state['step']}.json")
            sys.exit(143)

        signal.signal(signal.SIGTERM, save_and_exit)
    elif args.bug != "no-sigterm-handler":
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))
    rng = random.Random(7)
    state: dict[str, Any] = {"w": 0.0, "momentum": 0.0, "accumulated": 0.0, "step": 0}
    folder = Path(args.ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    done_here = {"steps": 0}  # steps this process ran

    def save(name: str) -> None:
        version, internal, gauss = rng.getstate()
        saved = dict(state, rng=[version, list(internal), gauss])
        if args.bug == "forget-accumulation":
            del saved["accumulated"]
        if args.bug == "counter-since-start":  # the data position is a progress counter, counted since this process began
            saved["rng"] = None
            saved["loops"] = {"fit_loop": {"batch_progress": {"total": {"completed": done_here["steps"]}}}}
        temporary = folder / f".{name}.tmp"
        temporary.write_text(json.dumps(saved), encoding="utf-8")
        os.replace(temporary, folder / name)

    if args.resume:
        found = sorted(((int(m.group(1)), p) for p in folder.glob("step-*.json") if (m := re.match(r"step-(\d+)", p.name))),
                       reverse=True)
        for step, path in found:
            try:
                saved = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as error:
                if args.bug == "no-fallback":
                    raise
                if args.bug == "load-torn":  # trusts the file name, keeps what it has
                    state["step"] = step
                    break
                print(f"refused {path.name}: {error}", flush=True)
                continue
            saved_rng = saved.pop("rng")
            loops = saved.pop("loops", None)
            if saved_rng is None:  # fast-forward the data by the progress counter
                for _ in range(loops["fit_loop"]["batch_progress"]["total"]["completed"]):
                    rng.gauss(0.0, 1.0)
            else:
                version, internal, gauss = saved_rng
                rng.setstate((version, tuple(internal), gauss))
            state.update(saved)
            break
    while state["step"] < args.max_steps:
        time.sleep(args.step_time / 4)  # the step's first quarter: data
        x = rng.gauss(0.0, 1.0)
        error = state["w"] * x - 3.0 * x
        state["accumulated"] += 2.0 * error * x
        if (state["step"] + 1) % args.accumulate == 0:
            state["momentum"] = 0.9 * state["momentum"] + state["accumulated"] / args.accumulate
            state["w"] -= 0.05 * state["momentum"]
            state["accumulated"] = 0.0
        time.sleep(args.step_time * 3 / 4)  # the rest: the step is done only when its counter moves
        state["step"] += 1
        done_here["steps"] += 1
        print(f"step={state['step']} loss={error * error!r}", flush=True)
        if state["step"] % args.save_every == 0:
            save(f"step-{state['step']}.json")
        if stop["requested"]:
            save(f"step-{state['step']}.json")
            return 143
    save("last.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
