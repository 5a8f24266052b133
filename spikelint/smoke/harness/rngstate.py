"""Process-wide RNG states in a form that ``torch.load(weights_only=True)`` accepts.

NumPy's legacy state is an ndarray, which the weights-only unpickler refuses, and Python's
state is a 625-int tuple; both are stored as int64 tensors so that a checkpoint never needs
``weights_only=False``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def capture_rng(include_cuda: bool) -> dict[str, Any]:
    """Python, NumPy, torch CPU and (on a CUDA run) every CUDA device's generator state."""
    version, internal, gauss = random.getstate()
    name, keys, position, has_gauss, cached_gaussian = np.random.get_state(legacy=True)
    state: dict[str, Any] = {
        "python": {"version": int(version), "state": torch.tensor(internal, dtype=torch.int64), "gauss": gauss},
        "numpy": {
            "name": str(name),
            "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64).copy()),
            "pos": int(position),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached_gaussian),
        },
        "torch": torch.get_rng_state(),
    }
    if include_cuda:
        state["cuda"] = list(torch.cuda.get_rng_state_all())
    return state


def restore_rng(state: dict[str, Any]) -> None:
    """The inverse of ``capture_rng`` (CUDA only when the state has it)."""
    python = state["python"]
    random.setstate((int(python["version"]), tuple(int(v) for v in python["state"].tolist()), python["gauss"]))
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["name"],
            numpy_state["keys"].numpy().astype(np.uint32),
            int(numpy_state["pos"]),
            int(numpy_state["has_gauss"]),
            float(numpy_state["cached_gaussian"]),
        )
    )
    torch.set_rng_state(state["torch"].cpu())
    if "cuda" in state:
        torch.cuda.set_rng_state_all([tensor.cpu() for tensor in state["cuda"]])


def seed_everything(seed: int, include_cuda: bool) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device once CUDA starts
    if include_cuda:
        torch.cuda.manual_seed_all(seed)
