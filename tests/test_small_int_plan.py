"""The anti-pattern plan: cuBLAS on CUTLASS's default small-integer data, recorded as such."""

from __future__ import annotations

import pytest

from mla_var3.kernel.plan import DATA_DISTRIBUTION
from mla_var3.kernel.registry import get_plan


def test_registered_with_its_own_data_distribution() -> None:
    plan = get_plan("cublas_gemm_small_int")
    assert plan.data_distribution != DATA_DISTRIBUTION and "{-2, -1, 0, 1}" in plan.data_distribution
    assert get_plan("cublas_gemm").__dict__.get("data_distribution") is None  # the baseline stays on randn


@pytest.mark.gpu
def test_inputs_are_small_integers() -> None:
    import torch

    inputs = get_plan("cublas_gemm_small_int")("bfloat16").prepare_inputs({"m": 64, "n": 32, "k": 128})
    values = torch.cat([inputs["a"].flatten(), inputs["b"].flatten()]).float().unique().tolist()
    assert set(values) == {-2.0, -1.0, 0.0, 1.0}
