"""elementwise_add: its reference against a naive loop, its shape limits, its flop/byte counts."""

from __future__ import annotations

import pytest
import torch

from mla_var3.kernel.cute_python.elementwise.add.vectorized.plan import ElementwiseAddPlan
from mla_var3.kernel.errors import UnsupportedShapeError


def test_reference_matches_a_naive_loop() -> None:
    plan = ElementwiseAddPlan("bfloat16")
    a, b = torch.randn(37).bfloat16(), torch.randn(37).bfloat16()
    ref = plan.reference_fn({"a": a, "b": b})["c"]
    naive = torch.tensor([float(x) + float(y) for x, y in zip(a, b, strict=True)], dtype=torch.float64)
    assert ref.dtype == torch.float64 and torch.equal(ref, naive)


@pytest.mark.parametrize(("n", "message"), [(0, "--n >= 1"), (1 << 31, "< 2\\*\\*31")])
def test_shape_limits(n: int, message: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=message):
        ElementwiseAddPlan().validate_shape({"n": n})


def test_roofline_counts_read_two_write_one() -> None:
    assert ElementwiseAddPlan("float32")._algorithmic_flops_bytes({"n": 1000}) == (1000, 12000)
    assert ElementwiseAddPlan("bfloat16")._algorithmic_flops_bytes({"n": 1000}) == (1000, 6000)
