"""Record the live state of an uninterrupted run, then hold a resumed run to it step for step.

The framework callbacks only decide *when* a point is taken and *what* the live state is made
of; this module does the rest, with the smoke test's probe and digests:

- a run that does not resume **records**: at each point (the state before step ``s + 1``
  trains, after ``s`` optimizer steps, and the end of training) the SHA-256 digest of every leaf
  goes to ``RECORD_DIR/reference/``;
- a run resumed from a checkpoint **checks**: its first point is the state right after the
  framework restored the checkpoint, compared with the reference at the same step (the
  *restore check*); every later point is compared as well. A piece that differs at a later
  point fails the run, and the pieces that already differed right after the restore are named
  as *not restored by the checkpoint*. A piece that differs right after the restore but equals
  the reference at the next point (the stale ``.grad`` of the last backward) was overwritten:
  a note, not a failure;
- ``mode="calibrate"`` is a second uninterrupted run: the leaves that differ from the
  reference (clocks, paths, counters of the host) are written to ``volatile.json`` and left
  out of every later check; a model or optimizer that differs there means the training is not
  deterministic, and nothing could be compared bit for bit.

The verdict goes to ``RECORD_DIR/verdict.json`` (``verified`` / ``state_differs``) and, by
default, a differing state raises :class:`ResumeMismatch` at the first step where it shows,
which stops ``trainer.fit`` / ``trainer.train`` as any exception in a callback does.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from pathlib import Path
from typing import Any
from typing import Iterable
from typing import Mapping

import torch

from spikelint.smoke.compare.leaves import Leaf
from spikelint.smoke.compare.leaves import compare_digests
from spikelint.smoke.compare.leaves import digests
from spikelint.smoke.compare.leaves import leaf_from_json
from spikelint.smoke.compare.leaves import leaf_to_json
from spikelint.smoke.harness.probe import DATA_POSITION
from spikelint.smoke.harness.probe import GRADIENTS
from spikelint.smoke.harness.probe import LATENT_PIECES
from spikelint.smoke.harness.probe import MODEL
from spikelint.smoke.harness.probe import OPTIMIZER
from spikelint.smoke.harness.probe import RNG
from spikelint.smoke.harness.probe import TENSORS
from spikelint.smoke.harness.probe import _Walker
from spikelint.smoke.harness.probe import piece_of
from spikelint.smoke.harness.rngstate import capture_rng

VERIFIED = "verified"
STATE_DIFFERS = "state_differs"
CALIBRATED = "calibrated"
END = "end"
MODES = ("auto", "record", "check", "calibrate")
REFERENCE = "reference"
VOLATILE_FILE = "volatile.json"
VERDICT_FILE = "verdict.json"
FORMAT = "spikelint-resume-record/1"


class ResumeCheckError(RuntimeError):
    """The check cannot run: no reference recorded, a resume point the reference never saw."""


class ResumeMismatch(RuntimeError):
    """The resumed run's live state differs from the uninterrupted run's; ``verdict`` is the JSON written."""

    def __init__(self, message: str, verdict: dict[str, Any]) -> None:
        super().__init__(message)
        self.verdict = verdict


def point_name(step: int) -> str:
    """The point before step ``step + 1`` trains (after ``step`` optimizer steps)."""
    return f"step-{step:06d}"


def describe(piece_key: str) -> str:
    """``"tensors:pl_module/ema"`` -> ``"tensors (pl_module.ema)"``, as the smoke report names pieces."""
    piece, _, name = piece_key.partition(":")
    if piece == RNG and name in ("python", "numpy", "torch", "cuda"):
        return f"{RNG} ({name} global)"
    where = name.replace("/", ".")
    if piece == GRADIENTS:
        return f"{piece} ({where} parameters' .grad)"
    if piece == DATA_POSITION and name == "batch":
        return f"{piece} (the batch the step trains on)"
    return f"{piece} ({where})"


# --- the live state ---------------------------------------------------------------------------

_PLAIN_MODULE_NAMES = frozenset(vars(torch.nn.Module()))


def _framework_module(module: torch.nn.Module) -> bool:
    return (type(module).__module__ or "").split(".")[0] == "torch"


class LiveState:
    """Named roots walked into ``{"piece:path": value}``, the process-wide RNGs first.

    ``base_names`` are the attributes a framework's own base class puts on every model
    (``_trainer``, ``config``): what a model holds beyond them and beyond its ``state_dict()``
    — a hand-written EMA, a counter, a non-persistent buffer — is state the checkpoint may miss.
    """

    def __init__(self, include_cuda: bool | None = None) -> None:
        if include_cuda is None:
            include_cuda = bool(torch.cuda.is_available() and torch.cuda.is_initialized())
        self._walker = _Walker()
        for name, value in capture_rng(include_cuda).items():
            self._walker.add(RNG, name, value)

    def exclude(self, *objects: Any) -> None:
        """Objects never walked into, wherever they are met (the trainer a callback keeps a reference to)."""
        self._walker.seen.update(id(item) for item in objects if item is not None)

    def add(self, name: str, value: Any) -> None:
        """Walk ``value`` as the smoke probe walks a job's attribute."""
        if value is not None:
            self._walker.walk(value, name, 1)

    def add_piece(self, piece: str, name: str, value: Any) -> None:
        """One piece as it is (a batch, a framework's progress counters)."""
        self._walker.add(piece, name, value)

    def add_model(self, name: str, model: torch.nn.Module, base_names: Iterable[str] = ()) -> None:
        """The model's ``state_dict()`` and ``.grad``, then what it and its own submodules hold beyond them."""
        self._walker.walk(model, name, 1)
        ignored = _PLAIN_MODULE_NAMES | set(base_names)
        for path, module in model.named_modules():
            where = name if not path else f"{name}/{path.replace('.', '/')}"
            for buffer in sorted(getattr(module, "_non_persistent_buffers_set", ())):
                value = module._buffers.get(buffer)
                if value is not None:
                    self._walker.add(TENSORS, f"{where}/{buffer}", value)
            if path and _framework_module(module):
                continue
            for attribute, value in sorted(vars(module).items()):
                if attribute in ignored or (path and attribute in _PLAIN_MODULE_NAMES):
                    continue
                self._walker.walk(value, f"{where}/{attribute.replace('.', '_')}", 2)

    def result(self) -> dict[str, Any]:
        return self._walker.state


# --- records ------------------------------------------------------------------------------------


def _write_json(path: Path, data: Any) -> None:
    """Atomically: a reader never sees half a record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class ResumeRecorder:
    """Records or checks points; knows nothing of the framework that calls it."""

    def __init__(
        self,
        record_dir: str | os.PathLike[str],
        *,
        mode: str = "auto",
        every: int = 1,
        ignore: Iterable[str] = (),
        raise_on_mismatch: bool = True,
        framework: str = "",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if every < 1:
            raise ValueError(f"every must be 1 or more, not {every}")
        self.record_dir = Path(record_dir)
        self.requested_mode = mode
        self.every = every
        self.ignore = tuple(ignore)
        self.raise_on_mismatch = raise_on_mismatch
        self.framework = framework
        self.mode: str | None = None
        self.resumed_from: int | None = None
        self.saved_steps: set[int] = set()
        self._points: list[str] = []
        self._volatile: set[str] = set()
        self._restore: tuple[str, list[str], dict[str, str]] | None = None
        self._compared: list[str] = []
        self._found_volatile: set[str] = set()
        self._last_keys: list[str] = []
        self._leaves_per_point = 0
        self._notes: list[str] = []
        self.verdict: dict[str, Any] | None = None

    # -- the run

    def begin(self, resumed_from: int | None) -> str:
        """Decide the mode: ``resumed_from`` is the restored step, ``None`` for a fresh run."""
        mode = self.requested_mode
        if mode == "auto":
            mode = "check" if resumed_from is not None else "record"
        if mode in ("check", "calibrate") and not (self._reference_dir / "meta.json").is_file():
            raise ResumeCheckError(
                f"no uninterrupted run was recorded in {self.record_dir}: run the training once from the start "
                "with this callback attached, then resume from one of its checkpoints"
            )
        if mode == "check" and resumed_from is None:
            raise ResumeCheckError("mode='check' needs a run resumed from a checkpoint (this run starts from step 0)")
        if mode == "calibrate" and resumed_from is not None:
            raise ResumeCheckError("mode='calibrate' is a second uninterrupted run; this run resumed from a checkpoint")
        self.mode, self.resumed_from = mode, resumed_from
        self.verdict, self._restore = None, None
        self._compared, self._notes, self._found_volatile, self._leaves_per_point = [], [], set(), 0
        if mode == "record":
            shutil.rmtree(self._reference_dir, ignore_errors=True)
            for stale in (VERDICT_FILE, VOLATILE_FILE):
                (self.record_dir / stale).unlink(missing_ok=True)
            self._points = []
            self._write_meta()
        else:
            volatile_file = self.record_dir / VOLATILE_FILE
            self._volatile = set(_read_json(volatile_file)["leaves"]) if volatile_file.is_file() else set()
            (self.record_dir / VERDICT_FILE).unlink(missing_ok=True)
        return mode

    def note(self, text: str) -> None:
        """A line for the verdict's notes (what this run could not compare)."""
        self._note_once(text)

    def wants(self, step: int) -> bool:
        """Whether a point at ``step`` is taken: every ``every`` steps, each checkpoint's step, the restore."""
        if self.mode == "record":
            return step % self.every == 0 or step in self.saved_steps
        if self.mode in ("check", "calibrate"):
            return (self._reference_dir / f"{point_name(step)}.json").is_file() or (
                self.mode == "check" and not self._compared
            )
        return False

    def observe(self, point: str, state: Mapping[str, Any]) -> None:
        """Record or compare one point; raises :class:`ResumeMismatch` when the check fails here."""
        leaves = digests(dict(state))
        if self.mode == "record":
            _write_json(self._reference_dir / f"{point}.json", {k: leaf_to_json(v) for k, v in leaves.items()})
            if point not in self._points:
                self._points.append(point)
                self._write_meta()
            return
        if self.mode not in ("check", "calibrate") or self.verdict is not None:
            return
        reference_file = self._reference_dir / f"{point}.json"
        if not reference_file.is_file():
            if self.mode == "check" and not self._compared:
                raise ResumeCheckError(
                    f"the uninterrupted run recorded no state at {point} in {self._reference_dir}, where this run "
                    f"resumed: record every step (every=1) or keep the callback attached while checkpoints are saved"
                )
            self._notes.append(f"{point}: not recorded by the uninterrupted run, not compared")
            return
        reference = {k: leaf_from_json(v) for k, v in _read_json(reference_file).items()}
        differing = self._differing(reference, leaves)
        if self.mode == "calibrate":
            self._calibrate(point, differing)
            return
        self._check(point, differing)

    def end(self, state: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The last point, then the verdict of a check or calibration run (``None`` for a recording)."""
        if state is not None:
            self.observe(END, state)
        if self.mode == "calibrate" and self.verdict is None:
            _write_json(self.record_dir / VOLATILE_FILE, {"leaves": sorted(self._volatile | self._found_volatile)})
            return self._finish(CALIBRATED, (
                f"two uninterrupted runs compared at {len(self._compared)} points; "
                f"{len(self._found_volatile)} leaves differ and are left out of later checks"
            ), volatile=sorted(self._found_volatile))
        if self.mode != "check" or self.verdict is not None:
            return self.verdict
        if self._restore is None:
            raise ResumeCheckError("the resumed run reached no point to compare (it trained no step)")
        point, pieces, first = self._restore
        failing = [piece for piece in pieces if piece.split(":", 1)[0] not in (GRADIENTS, *LATENT_PIECES)]
        if failing and len(self._compared) == 1:
            return self._fail(point, failing, [], first)
        return self._finish(VERIFIED, (
            f"resumed from step {self.resumed_from}; the live state equals the uninterrupted run's bit for bit "
            f"at {len(self._compared)} points, {self._leaves_per_point} leaves each "
            f"({self._compared[0]} right after the restore to {self._compared[-1]})"
        ))

    # -- comparison

    def _ignored(self, key: str) -> bool:
        return key in self._volatile or any(fnmatch.fnmatchcase(key, pattern) for pattern in self.ignore)

    def _differing(self, reference: Mapping[str, Leaf], resumed: Mapping[str, Leaf]) -> dict[str, str]:
        """The first differing leaf of each piece, volatile and ignored leaves left out."""
        kept_reference = {key: leaf for key, leaf in reference.items() if not self._ignored(key)}
        kept_resumed = {key: leaf for key, leaf in resumed.items() if not self._ignored(key)}
        self._leaves_per_point = max(self._leaves_per_point, len(kept_reference))
        first: dict[str, str] = {}
        self._last_keys = []
        for difference in compare_digests(kept_reference, kept_resumed):
            self._last_keys.append(difference.key)
            first.setdefault(piece_of(difference.key), f"{difference.key} ({difference.kind})")
        return first

    def _calibrate(self, point: str, differing: dict[str, str]) -> None:
        self._compared.append(point)
        training = [piece for piece in differing if piece.split(":", 1)[0] in (MODEL, OPTIMIZER)]
        if training:
            message = (
                f"two uninterrupted runs differ at {point} in {', '.join(describe(piece) for piece in training)} "
                f"(first leaf {differing[training[0]]}): the training is not deterministic, so no resume can be "
                "compared bit for bit; seed every generator and enable deterministic algorithms"
            )
            verdict = self._finish("nondeterministic", message, differences=self._differences(differing))
            if self.raise_on_mismatch:
                raise ResumeMismatch(f"spikelint resume check: {message}", verdict)
            return
        self._found_volatile.update(self._last_keys)

    def _check(self, point: str, differing: dict[str, str]) -> None:
        self._compared.append(point)
        if self._restore is None:
            self._restore = (point, list(differing), differing)
            return
        failing = [piece for piece in differing if piece.split(":", 1)[0] not in LATENT_PIECES]
        if failing:
            self._fail(point, failing, list(self._restore[1]), differing)
            return
        latent = [piece for piece in differing if piece not in failing]
        if latent:
            self._note_once("values beside the training state differ (not a failure): "
                            + ", ".join(describe(piece) for piece in latent))

    def _fail(self, point: str, failing: list[str], at_restore: list[str], first: dict[str, str]) -> dict[str, Any]:
        restore_point, restore_pieces, restore_first = self._restore or (point, [], {})
        # Gradients are recomputed by every step: they differ after it as a consequence, never by a forgotten key.
        not_restored = [piece for piece in failing if (piece in restore_pieces or point == restore_point)
                        and piece.split(":", 1)[0] != GRADIENTS]
        later = [piece for piece in failing if piece not in not_restored]
        overwritten = [p for p in at_restore if p not in failing and p.split(":", 1)[0] not in (GRADIENTS, *LATENT_PIECES)]
        parts = [f"resumed from step {self.resumed_from}, but the live state differs from the uninterrupted run's"]
        if not_restored:
            parts.append(
                "not restored by the checkpoint: " + ", ".join(describe(piece) for piece in not_restored)
                + f" (differs right after the restore of step {self.resumed_from})"
            )
        if later:
            parts.append(f"differs from {point} on: " + ", ".join(describe(piece) for piece in later))
        if overwritten:
            parts.append("differed right after the restore, then equal: " + ", ".join(describe(p) for p in overwritten))
        leading = (not_restored or later)[0]
        parts.append(f"first differing leaf {restore_first.get(leading) or first[leading]}")
        message = "; ".join(parts)
        verdict = self._finish(
            STATE_DIFFERS, message, failed_at=point,
            not_restored=[{"piece": p.split(":", 1)[0], "where": describe(p), "first_differing_leaf":
                           restore_first.get(p) or first[p]} for p in not_restored],
            differs_later=[{"piece": p.split(":", 1)[0], "where": describe(p), "first_differing_leaf": first[p]}
                           for p in later],
        )
        if self.raise_on_mismatch:
            raise ResumeMismatch(f"spikelint resume check: {message}", verdict)
        return verdict

    def _differences(self, differing: dict[str, str]) -> list[dict[str, str]]:
        return [{"piece": p.split(":", 1)[0], "where": describe(p), "first_differing_leaf": leaf}
                for p, leaf in differing.items()]

    def _note_once(self, note: str) -> None:
        if note not in self._notes:
            self._notes.append(note)

    def _finish(self, verdict: str, message: str, **extra: Any) -> dict[str, Any]:
        if self._restore is not None and verdict == VERIFIED:
            overwritten = [p for p in self._restore[1] if p.split(":", 1)[0] not in LATENT_PIECES]
            if overwritten:
                self._note_once("right after the restore these differed, then the resumed steps overwrote them: "
                                + ", ".join(describe(piece) for piece in overwritten))
        self.verdict = {
            "verdict": verdict,
            "message": message,
            "framework": self.framework,
            "mode": self.mode,
            "resumed_from_step": self.resumed_from,
            "compared_points": list(self._compared),
            "leaves_per_point": self._leaves_per_point,
            "left_out": sorted(self._volatile)[:50],
            "ignored_patterns": list(self.ignore),
            "notes": list(self._notes),
            **extra,
        }
        _write_json(self.record_dir / VERDICT_FILE, self.verdict)
        return self.verdict

    # -- files

    @property
    def _reference_dir(self) -> Path:
        return self.record_dir / REFERENCE

    def _write_meta(self) -> None:
        from spikelint import __version__

        _write_json(self._reference_dir / "meta.json", {
            "format": FORMAT, "spikelint": __version__, "framework": self.framework, "every": self.every,
            "points": self._points, "torch": torch.__version__,
        })
