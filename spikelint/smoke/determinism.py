"""Deterministic settings shared by every training process of a smoke run.

A different thread count changes CPU results bit for bit, so every process runs with the
same ``torch.set_num_threads``; ``CUBLAS_WORKSPACE_CONFIG`` must be in the environment before
CUDA starts, which is why the parent sets it before it forks anything.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Any
from typing import Iterator
from typing import Mapping
from typing import MutableMapping

CUBLAS_WORKSPACE_CONFIG = ":4096:8"
VALID_CUBLAS_WORKSPACES = (":4096:8", ":16:8")
NUM_THREADS = 1


def training_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Variables every training process needs (children inherit them through fork)."""
    workspace = environ.get("CUBLAS_WORKSPACE_CONFIG")
    return {
        "CUBLAS_WORKSPACE_CONFIG": workspace if workspace in VALID_CUBLAS_WORKSPACES else CUBLAS_WORKSPACE_CONFIG,
        # torch.cuda.is_available() then asks NVML instead of initialising CUDA in the parent,
        # which would make every forked child fail to use the GPU.
        "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
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


def warm_up_deterministic_mode(torch: Any) -> float:
    """Pay the one-off import that deterministic mode triggers once, in the parent, before forking.

    The parent's own setting is restored so that an in-process caller is left as it was.
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


def apply_deterministic_settings(torch: Any, num_threads: int = NUM_THREADS) -> dict[str, Any]:
    """Called in every training process; returns what was set, for the log."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(num_threads)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    _set_ieee_fp32(torch)
    torch.set_float32_matmul_precision("highest")
    return {
        "deterministic_algorithms": True,
        "num_threads": num_threads,
        "cudnn_deterministic": True,
        "cudnn_benchmark": False,
        "tf32": False,
        "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
    }
