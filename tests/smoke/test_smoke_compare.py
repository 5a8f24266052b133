from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from spikelint.smoke.compare.leaves import compare_states  # noqa: E402
from spikelint.smoke.compare.leaves import digests  # noqa: E402
from spikelint.smoke.compare.leaves import flatten  # noqa: E402
from spikelint.smoke.compare.leaves import leaf_digest  # noqa: E402
from spikelint.smoke.compare.leaves import leaf_from_json  # noqa: E402
from spikelint.smoke.compare.leaves import leaf_to_json  # noqa: E402
from spikelint.smoke.compare.leaves import max_abs_difference  # noqa: E402


def test_flatten_walks_containers_in_insertion_order() -> None:
    state = {"model": {"w": 1, "b": [2, 3]}, "empty": {}, "opt": {"state": {0: {"step": 4}}}}
    assert [key for key, _ in flatten(state)] == ["model.w", "model.b.0", "model.b.1", "empty", "opt.state.0.step"]


def test_bf16_leaves_are_hashed_by_their_raw_bytes() -> None:
    one = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
    bits = one.view(torch.int16).clone()
    bits[1] += 1  # the next bf16 value after 2.0: 2 + 2**-6
    nudged = bits.view(torch.bfloat16)
    assert leaf_digest(one) == leaf_digest(one.clone())
    assert leaf_digest(one).sha256 != leaf_digest(nudged).sha256
    count, differences = compare_states({"w": one}, {"w": nudged})
    assert count == 1 and differences[0].kind == "value"
    assert differences[0].max_abs_diff == pytest.approx(2**-6)


def test_dtype_and_shape_are_part_of_equality() -> None:
    same_bytes = torch.zeros(4, dtype=torch.float32)
    _, differences = compare_states({"a": same_bytes, "b": same_bytes}, {"a": same_bytes.double(), "b": same_bytes.view(2, 2)})
    assert [(d.key, d.kind) for d in differences] == [("a", "dtype"), ("b", "shape")]


def test_missing_and_extra_keys_are_reported_not_only_values() -> None:
    count, differences = compare_states({"model": {"w": torch.ones(1)}, "opt": 1}, {"model": {"w": torch.ones(1)}, "sched": 2})
    assert count == 2
    assert [(d.key, d.kind) for d in differences] == [("opt", "missing_in_resumed"), ("sched", "extra_in_resumed")]


def test_python_floats_compare_exactly_and_report_the_largest_difference() -> None:
    _, differences = compare_states({"lr": 0.1, "loss": [1.0, 2.0]}, {"lr": 0.1, "loss": [1.0, 2.5]})
    assert [d.key for d in differences] == ["loss.1"]
    assert differences[0].max_abs_diff == 0.5
    _, tiny = compare_states({"lr": 0.1}, {"lr": math.nextafter(0.1, 1.0)})
    assert tiny and tiny[0].kind == "value"


def test_largest_difference_ignores_matching_nans_and_never_returns_nan() -> None:
    left = torch.tensor([float("nan"), 1.0, 5.0])
    right = torch.tensor([float("nan"), 1.0, 2.0])
    assert max_abs_difference(left, right) == 3.0
    assert max_abs_difference(torch.tensor([float("nan")]), torch.tensor([1.0])) is None
    assert max_abs_difference("text", "other") is None


def test_zero_dim_bool_and_int_tensors_and_objects_have_digests() -> None:
    leaves = digests({"t": torch.tensor(3), "b": torch.tensor([True, False]), "f": lambda: 0, "n": None, "s": "x"})
    assert leaves["t"].shape == () and leaves["b"].dtype == "torch.bool"
    assert leaves["f"].kind == "object" and leaves["n"].kind == "none"
    assert leaf_from_json(leaf_to_json(leaves["b"])) == leaves["b"]
