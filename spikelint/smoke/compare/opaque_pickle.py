"""Reading a ``torch.save`` file that holds a framework's own objects, without running their code.

Composer's ``State``/``Timestamp``, NumPy RNG arrays, ``timedelta`` and other records are refused by
``torch.load(weights_only=True)``; loading them with plain pickle would run whatever the file names.
This unpickler rebuilds only what ``weights_only`` allows (tensors, containers, dtypes), NumPy arrays
and ``datetime`` values; every other class or function becomes an *opaque* value that keeps the
arguments and state the pickle gives it, and is compared by them, never by calling its code.
Wall-clock values (``datetime``, ``timedelta``) differ between any two runs: they are left out and named.
"""

from __future__ import annotations

import datetime
import functools
import pickle
import warnings
from pathlib import Path
from typing import Any


class OpaqueObject:
    """An object of a class spikelint does not import: the arguments and state its pickle carries."""

    def __new__(cls, *args: Any, **kwargs: Any) -> OpaqueObject:
        instance = object.__new__(cls)
        instance.__dict__["args"] = list(args)
        if kwargs:
            instance.__dict__["kwargs"] = dict(kwargs)
        return instance

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing runs: ``__new__`` kept the arguments."""

    def __setstate__(self, state: Any) -> None:
        self.__dict__["state"] = state

    def __call__(self, *args: Any, **kwargs: Any) -> OpaqueObject:
        """An opaque value called by the pickle (``getattr(x, "append")("…")``): a record of the call."""
        result: OpaqueObject = opaque_class(type(self).__module__, f"{type(self).__qualname__}()")(*args, **kwargs)
        result.__dict__["of"] = self
        return result

    def __setitem__(self, key: Any, value: Any) -> None:  # a dict subclass's items (SETITEMS)
        self.__dict__.setdefault("items", {})[key] = value

    def append(self, value: Any) -> None:  # a list subclass's items (APPENDS)
        self.__dict__.setdefault("items", []).append(value)

    def extend(self, values: Any) -> None:
        self.__dict__.setdefault("items", []).extend(values)


@functools.lru_cache(maxsize=None)
def opaque_class(module: str, name: str) -> type:
    """One class per name the pickle asks for, named as the original so that differences read well."""
    return type(name.rsplit(".", 1)[-1], (OpaqueObject,), {"__module__": module, "__qualname__": name})


@functools.lru_cache(maxsize=1)
def allowed_globals() -> dict[str, Any]:
    """What may be rebuilt for real: torch's ``weights_only`` allowlist, NumPy arrays, ``datetime`` values."""
    import numpy as np
    import torch

    allowed: dict[str, Any] = {}
    try:
        from torch import _weights_only_unpickler

        allowed.update(_weights_only_unpickler._get_allowed_globals())
    except (ImportError, AttributeError):  # the private list moved: the rebuild functions and containers
        allowed.update({f"torch._utils.{name}": getattr(torch._utils, name) for name in dir(torch._utils)
                        if name.startswith("_rebuild_")})
    core = getattr(np, "_core", None) or np.core
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[f"{module}._reconstruct"] = core.multiarray._reconstruct
        allowed[f"{module}.scalar"] = core.multiarray.scalar
    allowed.update({"numpy.ndarray": np.ndarray, "numpy.dtype": np.dtype})
    for dtype in (np.dtype(np.uint32), np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.float32)):
        allowed[f"numpy.dtypes.{type(dtype).__name__}"] = type(dtype)
    allowed.update({f"datetime.{name}": getattr(datetime, name) for name in ("timedelta", "datetime", "date", "timezone")})
    return allowed


class RestrictedUnpickler(pickle.Unpickler):
    """Rebuilds only allowed globals; anything else is an opaque class of the same name."""

    def find_class(self, module: str, name: str) -> Any:
        found = allowed_globals().get(f"{module}.{name}")
        if found is not None:
            return found
        self.opaque_names.add(f"{module}.{name}")
        return opaque_class(module, name)

    @property
    def opaque_names(self) -> set[str]:
        names: set[str] | None = self.__dict__.get("_opaque_names")
        if names is None:
            names = self.__dict__["_opaque_names"] = set()
        return names


class _PickleModule:
    """What ``torch.load(pickle_module=…)`` uses: an ``Unpickler`` and ``load``; the names it made opaque."""

    __name__ = "spikelint.smoke.compare.opaque_pickle"  # torch.load reads the module's name

    def __init__(self) -> None:
        self.opaque: set[str] = set()
        module = self

        class Unpickler(RestrictedUnpickler):
            def find_class(self, mod_name: str, name: str) -> Any:
                found = super().find_class(mod_name, name)
                module.opaque |= self.opaque_names
                return found

        self.Unpickler = Unpickler

    def load(self, handle: Any, **options: Any) -> Any:
        return self.Unpickler(handle, **options).load()


WALL_CLOCK = "<wall-clock time: not compared>"


def without_wall_clock(state: Any, left_out: list[str], prefix: str = "") -> Any:
    """The state with ``datetime``/``timedelta`` leaves replaced by a marker, their keys in ``left_out``."""
    if isinstance(state, (datetime.timedelta, datetime.datetime, datetime.date)):
        left_out.append(prefix or "(the whole file)")
        return WALL_CLOCK
    if isinstance(state, dict):
        return {key: without_wall_clock(value, left_out, f"{prefix}.{key}" if prefix else str(key))
                for key, value in state.items()}
    if isinstance(state, (list, tuple)) and not hasattr(state, "_fields"):
        return type(state)(without_wall_clock(value, left_out, f"{prefix}.{index}" if prefix else str(index))
                           for index, value in enumerate(state))
    if isinstance(state, OpaqueObject):
        for key, value in list(state.__dict__.items()):
            state.__dict__[key] = without_wall_clock(value, left_out, f"{prefix}.{key}" if prefix else key)
    return state


def load_opaque(path: Path) -> tuple[Any, set[str], list[str]]:
    """(state, the class names kept opaque, the wall-clock keys left out) of a ``torch.save`` file."""
    import torch

    module = _PickleModule()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = torch.load(path, map_location="cpu", pickle_module=module, weights_only=False)
    left_out: list[str] = []
    return without_wall_clock(state, left_out), module.opaque, left_out
