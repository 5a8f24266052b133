"""Deterministic settings shared by every training process of a smoke run.

A different thread count changes CPU results bit for bit, so every process runs with the
same ``torch.set_num_threads``; ``CUBLAS_WORKSPACE_CONFIG`` must be in the environment before
CUDA starts, which is why the parent sets it before it forks anything.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from contextlib import contextmanager
from typing import Any
from typing import Callable
from typing import Iterator
from typing import Mapping
from typing import MutableMapping

CUBLAS_WORKSPACE_CONFIG = ":4096:8"
VALID_CUBLAS_WORKSPACES = (":4096:8", ":16:8")
NUM_THREADS = 1
# torch's text, raised (RuntimeError) or warned (warn_only=True), for an op without a deterministic kernel.
_NO_DETERMINISTIC_KERNEL = re.compile(r"([A-Za-z_][\w.:]*) does not have a deterministic implementation")


def training_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Variables every training process needs (children inherit them through fork)."""
    workspace = environ.get("CUBLAS_WORKSPACE_CONFIG")
    return {
        "CUBLAS_WORKSPACE_CONFIG": workspace if workspace in VALID_CUBLAS_WORKSPACES else CUBLAS_WORKSPACE_CONFIG,
        # torch.cuda.is_available() then asks NVML instead of initialising CUDA in the parent,
        # which would make every forked child fail to use the GPU.
        "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
        # What torch.use_deterministic_algorithms(True) sets in torch.compile's config, read when that
        # config is imported: the processes then need not import it (1-2 s each) to be deterministic.
        "TORCHINDUCTOR_DETERMINISTIC": "1",
    }


@contextmanager
def scoped_environment(environ: MutableMapping[str, str], values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` for the duration of the smoke run and put back what was there before."""
    previous = {name: environ.get(name) for name in values}
    environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                environ.pop(name, None)
            else:
                environ[name] = value


def enable_deterministic_algorithms(torch: Any, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms(True, warn_only=...)`` without its import of torch.compile's config.

    The public call imports ``torch._inductor.config`` only to set its ``deterministic`` flag;
    ``TORCHINDUCTOR_DETERMINISTIC=1`` in the environment sets the same flag whenever that config
    is imported, and a config imported already is set here directly.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # another torch: the public call, whatever it costs
        torch.use_deterministic_algorithms(True, warn_only=warn_only)
        return
    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        setattr(config, "deterministic", True)
    setter(True, warn_only=warn_only)


def nondeterministic_op(text: str) -> str | None:
    """The op named in torch's "... does not have a deterministic implementation" error or warning."""
    match = _NO_DETERMINISTIC_KERNEL.search(text)
    return match.group(1) if match else None


def nondeterministic_op_error(op: str, where: str, device: str) -> str:
    """The setup error for an op that deterministic mode refused, with both ways out."""
    return (
        f"the job calls {op}, which has no deterministic implementation on {device}: "
        f"torch.use_deterministic_algorithms(True) made it raise in {where}, so no run can be compared bit for bit. "
        f"Either rerun with --warn-only (the op runs anyway, is named in the summary's warnings, and the comparison "
        f"decides: a job that does not repeat itself is reported as such), or replace {op} with an op that has a "
        "deterministic implementation (the ops without one are listed under torch.use_deterministic_algorithms in "
        "the PyTorch documentation)"
    )


def nondeterministic_ops_warning(ops: Mapping[str, str]) -> str | None:
    """The summary's warning under --warn-only: each op that ran and where it was first seen."""
    if not ops:
        return None
    listed = "; ".join(f"{op} (first in {where})" for op, where in ops.items())
    return (
        f"--warn-only: ops without a deterministic implementation ran: {listed}; the verdict rests on the comparison "
        "of these runs, and another device or library version may not repeat them bit for bit"
    )


def watch_nondeterministic_ops(report: Callable[[str], None]) -> None:
    """In warn-only mode, call ``report(op)`` once per op that torch warns has no deterministic kernel.

    torch warns through Python's warnings (a ``UserWarning`` per call); the ``default`` filter for
    that text keeps the warning shown even where warnings are ignored, and the hook passes every
    warning on to the previous ``showwarning``. Worker processes forked later (DataLoader workers)
    inherit the hook but do not report: only this process holds the parent's pipe.
    """
    seen: set[str] = set()
    owner = os.getpid()
    previous = warnings.showwarning

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        op = nondeterministic_op(str(message))
        if op is not None and op not in seen and os.getpid() == owner:
            seen.add(op)
            report(op)
        previous(message, category, filename, lineno, file, line)

    warnings.filterwarnings("default", message=r".*does not have a deterministic implementation", category=UserWarning)
    warnings.showwarning = show


def warm_up_deterministic_mode(torch: Any) -> float:
    """Pay, once in the parent before forking, the imports deterministic mode and the optimizers trigger.

    ``torch.use_deterministic_algorithms`` imports torch.compile's config and with it
    ``torch._dynamo``, which every optimizer imports on first use too: 1-2 s that forked
    children then share. The parent's own setting is restored for an in-process caller.
    """
    started = time.monotonic()
    previous = torch.are_deterministic_algorithms_enabled()
    previous_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    torch.use_deterministic_algorithms(previous, warn_only=previous_warn_only)
    return time.monotonic() - started


def _set_ieee_fp32(torch: Any) -> None:
    """TF32 off. Newer torch has ``fp32_precision``; mixing it with ``allow_tf32`` raises, so use one."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
        torch.backends.cudnn.rnn.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


def apply_deterministic_settings(torch: Any, num_threads: int = NUM_THREADS, warn_only: bool = False) -> dict[str, Any]:
    """Called in every training process; returns what was set, for the log."""
    enable_deterministic_algorithms(torch, warn_only)
    torch.set_num_threads(num_threads)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    _set_ieee_fp32(torch)
    torch.set_float32_matmul_precision("highest")
    return {
        "deterministic_algorithms": True,
        "deterministic_warn_only": warn_only,
        "num_threads": num_threads,
        "cudnn_deterministic": True,
        "cudnn_benchmark": False,
        "tf32": False,
        "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
    }
