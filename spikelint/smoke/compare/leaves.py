"""Bit-for-bit comparison of training state: SHA-256 of every leaf's raw bytes, dtype and shape.

Never ``allclose`` and never key names only: a resumed run either reproduces every byte of
the uninterrupted one or it does not. Raw bytes (``view(uint8)``) make bf16 and other
dtypes without a NumPy equivalent safe; Python floats are hashed through ``float.hex``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import math
import re
import types
from typing import Any
from typing import Iterator
from typing import Mapping
from typing import NamedTuple

import numpy as np
import torch


class Leaf(NamedTuple):
    """What is compared for one leaf: its kind, dtype, shape and SHA-256."""

    kind: str
    dtype: str
    shape: tuple[int, ...]
    sha256: str


class Difference(NamedTuple):
    key: str
    kind: str  # value | dtype | shape | type | missing_in_resumed | extra_in_resumed
    max_abs_diff: float | None
    detail: str


MAX_OBJECT_DEPTH = 12


def _object_fields(value: Any) -> dict[str, Any] | None:
    """The fields of a dataclass or plain object (``__dict__``, ``__slots__``), ``None`` for anything else.

    A record the weights-only loader was allowed to rebuild (``torch.serialization.add_safe_globals``)
    is compared field by field: its type name alone says nothing about its value.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name, None) for field in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return {"name": value.name, "value": value.value}
    fields = getattr(value, "__dict__", None)
    found: dict[str, Any] = dict(fields) if isinstance(fields, dict) else {}
    for slot in getattr(type(value), "__slots__", ()) or ():
        if isinstance(slot, str) and hasattr(value, slot) and not slot.startswith("__"):
            found[slot] = getattr(value, slot)
    if not found and fields is None:
        return None
    return found


def _is_opaque(value: Any) -> bool:
    """Functions, classes, modules: only their identity (a name) is comparable across processes."""
    return isinstance(value, _OPAQUE_TYPES)


_OPAQUE_TYPES = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial, type, types.ModuleType
)


def flatten(value: Any, prefix: str = "", _seen: frozenset[int] = frozenset()) -> Iterator[tuple[str, Any]]:
    """(dotted key, leaf) pairs in insertion order; containers and records are walked, the rest are leaves.

    A container met again below itself (a cycle) is a leaf ``<cycle>`` instead of a recursion.
    """
    if isinstance(value, (Mapping, list, tuple)) or _object_fields_candidate(value):
        if id(value) in _seen or len(_seen) >= MAX_OBJECT_DEPTH:
            yield prefix, CycleMarker(type(value).__qualname__)
            return
        seen = _seen | {id(value)}
        if isinstance(value, Mapping):
            items: list[tuple[Any, Any]] = list(value.items())
        elif isinstance(value, (list, tuple)):
            items = list(enumerate(value))
        else:
            fields = _object_fields(value)
            if fields is None:
                yield prefix, value
                return
            items = [("__type__", f"{type(value).__module__}.{type(value).__qualname__}"), *fields.items()]
        if not items:
            yield prefix, type(value)() if isinstance(value, (Mapping, list, tuple)) else {}
        for key, item in items:
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key), seen)
    else:
        yield prefix, value


class CycleMarker(NamedTuple):
    """Stands for a container that contains itself (compared by its type name)."""

    type_name: str


_LEAF_TYPES = (str, bytes, bool, int, float, complex, type(None), np.ndarray, np.generic)


def _object_fields_candidate(value: Any) -> bool:
    if isinstance(value, _LEAF_TYPES) or isinstance(value, (torch.Tensor, CycleMarker)):
        return False
    if isinstance(value, (torch.dtype, torch.device, torch.Size)) or _is_opaque(value):
        return False
    return dataclasses.is_dataclass(value) or isinstance(value, enum.Enum) or hasattr(value, "__dict__") or bool(
        getattr(type(value), "__slots__", None)
    )


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    plain = tensor.detach().cpu()
    if plain.is_sparse:
        plain = plain.to_dense()
    plain = plain.resolve_conj().resolve_neg().contiguous().reshape(-1)
    return plain.view(torch.uint8).numpy().tobytes()


def _hash(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


# ``<composer.algorithms.GradientClipping object at 0x7f512a40e910>``: Composer saves such a repr of each
# algorithm; two uninterrupted runs differ there and nowhere else
OBJECT_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,16}\b")


def leaf_digest(value: Any) -> Leaf:
    """The digest of one leaf; the dtype and shape are part of what must match."""
    if isinstance(value, torch.Tensor):
        dtype, shape = str(value.dtype), tuple(value.shape)
        return Leaf("tensor", dtype, shape, _hash(dtype.encode(), repr(shape).encode(), tensor_bytes(value)))
    if isinstance(value, np.ndarray):
        dtype, shape = str(value.dtype), tuple(value.shape)
        raw = np.ascontiguousarray(value).tobytes()
        return Leaf("ndarray", dtype, shape, _hash(dtype.encode(), repr(shape).encode(), raw))
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return Leaf("bool", "bool", (), _hash(b"bool", str(bool(value)).encode()))
    if isinstance(value, (int, np.integer)):
        return Leaf("int", "int", (), _hash(b"int", str(int(value)).encode()))
    if isinstance(value, (float, np.floating)):
        return Leaf("float", "float", (), _hash(b"float", float(value).hex().encode()))
    if isinstance(value, str):
        value = OBJECT_ADDRESS.sub("at 0x…", value)  # a default repr's address differs in every process
        return Leaf("str", "str", (), _hash(b"str", value.encode("utf-8", "surrogatepass")))
    if isinstance(value, bytes):
        return Leaf("bytes", "bytes", (len(value),), _hash(b"bytes", value))
    if value is None:
        return Leaf("none", "none", (), _hash(b"none"))
    if isinstance(value, Mapping) or isinstance(value, (list, tuple)):  # an empty container
        name = type(value).__name__
        return Leaf("empty", name, (), _hash(b"empty", name.encode()))
    if isinstance(value, CycleMarker):
        return Leaf("cycle", value.type_name, (), _hash(b"cycle", value.type_name.encode()))
    if isinstance(value, (torch.dtype, torch.device, torch.Size)):
        return Leaf("str", "str", (), _hash(b"str", str(value).encode()))
    # Functions, lambdas and other objects without fields: only their name is comparable across processes.
    name = f"{type(value).__module__}.{type(value).__qualname__}"
    qualified = getattr(value, "__qualname__", None)
    if isinstance(qualified, str):
        name += f":{getattr(value, '__module__', '')}.{qualified}"
    return Leaf("object", name, (), _hash(b"object", name.encode()))


def digests(state: Any) -> dict[str, Leaf]:
    return {key: leaf_digest(value) for key, value in flatten(state)}


def _numeric(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
        if tensor.is_complex():
            return tensor.to(torch.complex128)
        return tensor.to(torch.float64)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return torch.from_numpy(value.astype(np.float64))
    if isinstance(value, (bool, int, float, np.number)) and not isinstance(value, complex):
        return torch.tensor(float(value), dtype=torch.float64)
    return None


def max_abs_difference(reference: Any, resumed: Any) -> float | None:
    """The largest absolute elementwise difference, ``None`` when not numeric or not comparable."""
    left, right = _numeric(reference), _numeric(resumed)
    if left is None or right is None or left.shape != right.shape:
        return None
    if left.numel() == 0:
        return 0.0
    difference = (left - right).abs()
    both_nan = torch.isnan(left) & torch.isnan(right)
    difference = torch.where(both_nan, torch.zeros_like(difference), difference)
    largest = float(difference.max().item())
    return largest if math.isfinite(largest) else None


def describe_leaf(leaf: Leaf) -> str:
    if leaf.kind in ("tensor", "ndarray"):
        return f"{leaf.dtype}{list(leaf.shape)} sha256:{leaf.sha256[:12]}"
    return f"{leaf.kind} sha256:{leaf.sha256[:12]}"


def compare_digests(
    reference: Mapping[str, Leaf],
    resumed: Mapping[str, Leaf],
    reference_values: Mapping[str, Any] | None = None,
    resumed_values: Mapping[str, Any] | None = None,
) -> list[Difference]:
    """Differences in the reference's key order, then keys only the resumed state has."""
    differences: list[Difference] = []
    for key, expected in reference.items():
        actual = resumed.get(key)
        if actual is None:
            differences.append(Difference(key, "missing_in_resumed", None, f"reference has {describe_leaf(expected)}"))
            continue
        if actual == expected:
            continue
        if actual.kind != expected.kind:
            kind = "type"
        elif actual.dtype != expected.dtype:
            kind = "dtype"
        elif actual.shape != expected.shape:
            kind = "shape"
        else:
            kind = "value"
        largest = None
        if reference_values is not None and resumed_values is not None and kind == "value":
            largest = max_abs_difference(reference_values[key], resumed_values[key])
        detail = f"reference {describe_leaf(expected)}, resumed {describe_leaf(actual)}"
        differences.append(Difference(key, kind, largest, detail))
    for key, actual in resumed.items():
        if key not in reference:
            differences.append(Difference(key, "extra_in_resumed", None, f"resumed has {describe_leaf(actual)}"))
    return differences


def compare_states(reference: Any, resumed: Any) -> tuple[int, list[Difference]]:
    """(number of leaves compared, differences) between two full states, with the largest |Δ|."""
    reference_values = dict(flatten(reference))
    resumed_values = dict(flatten(resumed))
    reference_digests = {key: leaf_digest(value) for key, value in reference_values.items()}
    resumed_digests = {key: leaf_digest(value) for key, value in resumed_values.items()}
    differences = compare_digests(reference_digests, resumed_digests, reference_values, resumed_values)
    return len(reference_digests), differences


def leaf_to_json(leaf: Leaf) -> list[Any]:
    return [leaf.kind, leaf.dtype, list(leaf.shape), leaf.sha256]


def leaf_from_json(data: list[Any]) -> Leaf:
    kind, dtype, shape, sha = data
    return Leaf(str(kind), str(dtype), tuple(int(v) for v in shape), str(sha))
