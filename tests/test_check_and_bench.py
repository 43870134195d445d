"""Correctness comparison and timing statistics (pure functions; CPU tensors)."""

from __future__ import annotations

import math

import pytest
import torch

from mla_var3.kernel.bench import input_sets_for_cold_l2, percentile
from mla_var3.kernel.check import compare, poison


def test_poison_then_untouched_output_fails() -> None:
    ref = {"c": torch.randn(1000, dtype=torch.float64)}
    out = {"c": torch.empty(1000, dtype=torch.bfloat16)}
    poison(out)
    result = compare(out, ref, 1e-2)
    assert not result.passed
    assert result.outputs[0].nonfinite == 1000


def test_one_unwritten_element_fails() -> None:
    ref = torch.randn(4096, dtype=torch.float64)
    out = ref.to(torch.bfloat16)
    out[1234] = float("nan")
    result = compare({"c": out}, {"c": ref}, 1e-2)
    assert not result.passed and result.outputs[0].nonfinite == 1


def test_bf16_rounding_passes_within_tolerance() -> None:
    ref = torch.randn(4096, dtype=torch.float64)
    result = compare({"c": ref.to(torch.bfloat16)}, {"c": ref}, 1e-2)
    assert result.passed
    assert 1e-4 < result.outputs[0].rel_l2 < 1e-2


def test_wrong_values_fail() -> None:
    ref = torch.randn(4096, dtype=torch.float64)
    result = compare({"c": (ref * 1.1).float()}, {"c": ref}, 1e-2)
    assert not result.passed
    assert math.isclose(result.outputs[0].rel_l2, 0.1, rel_tol=1e-3)


def test_shape_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="shape"):
        compare({"c": torch.zeros(3)}, {"c": torch.zeros(4)}, 1e-2)


def test_percentile_interpolates() -> None:
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 50) == pytest.approx(5.5)
    assert percentile(values, 10) == pytest.approx(1.9)
    assert percentile([3.0], 90) == 3.0


def test_input_sets_cover_three_l2() -> None:
    l2 = 60 << 20
    assert input_sets_for_cold_l2(1 << 30, l2) == 1
    assert input_sets_for_cold_l2(10 << 20, l2) == 18
    assert input_sets_for_cold_l2(1, l2) == 64
