"""Deterministic settings shared by every training process of a smoke run.

A different thread count changes CPU results bit for bit, so every process runs with the
same ``torch.set_num_threads``; ``CUBLAS_WORKSPACE_CONFIG`` must be in the environment before
CUDA starts, which is why the parent sets it before it forks anything.
"""

from __future__ import annotations

import os
import sys
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


def enable_deterministic_algorithms(torch: Any) -> None:
    """``torch.use_deterministic_algorithms(True)`` without its import of torch.compile's config.

    The public call imports ``torch._inductor.config`` only to set its ``deterministic`` flag;
    ``TORCHINDUCTOR_DETERMINISTIC=1`` in the environment sets the same flag whenever that config
    is imported, and a config imported already is set here directly.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # another torch: the public call, whatever it costs
        torch.use_deterministic_algorithms(True)
        return
    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        setattr(config, "deterministic", True)
    setter(True, warn_only=False)


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


def apply_deterministic_settings(torch: Any, num_threads: int = NUM_THREADS) -> dict[str, Any]:
    """Called in every training process; returns what was set, for the log."""
    enable_deterministic_algorithms(torch)
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
