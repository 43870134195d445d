"""Correctness comparison and timing statistics (pure functions; CPU tensors)."""

from __future__ import annotations

import math

import pytest
import torch

from mla_var3.kernel import bench
from mla_var3.kernel.bench import ClockSample, input_sets_for_cold_l2, nvml_sample, summarize
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


def test_summary_percentiles_interpolate() -> None:
    t = summarize([float(v) for v in range(10, 0, -1)], warmup=5, input_sets=2)
    assert (t.median_us, t.p10_us, t.p90_us, t.mean_us, t.n) == (pytest.approx(5.5), pytest.approx(1.9), pytest.approx(9.1), 5.5, 10)
    assert summarize([3.0], 0, 1).p90_us == 3.0
    with pytest.raises(ValueError, match="no timed launches"):
        summarize([], 0, 1)


def test_without_nvml_every_reading_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed
    bench._nvml_handle.cache_clear()
    try:
        assert nvml_sample("096f7439-510b-d6b7-3771-81876b5f826a") == ClockSample()
    finally:
        bench._nvml_handle.cache_clear()


def test_input_sets_cover_three_l2() -> None:
    l2 = 60 << 20
    assert input_sets_for_cold_l2(1 << 30, l2) == 1
    assert input_sets_for_cold_l2(10 << 20, l2) == 18
    assert input_sets_for_cold_l2(1, l2) == 64


def test_nvml_readings_come_from_the_gpu_with_our_uuid(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    fake = types.SimpleNamespace(
        NVMLError=RuntimeError, NVML_CLOCK_SM=0, NVML_CLOCK_MEM=1, NVML_TEMPERATURE_GPU=0,
        nvmlInit=lambda: None,
        nvmlDeviceGetHandleByUUID=lambda uuid: {"GPU-abc": "h"}[uuid],
        nvmlDeviceGetHandleByIndex=lambda i: "wrong",
        nvmlDeviceGetClockInfo=lambda h, kind: {("h", 0): 1410, ("h", 1): 3201}[(h, kind)],
        nvmlDeviceGetMaxClockInfo=lambda h, kind: 1980,
        nvmlDeviceGetPowerUsage=lambda h: 652_350,  # milliwatts
        nvmlDeviceGetTemperature=lambda h, kind: 51,
    )  # fmt: skip
    monkeypatch.setitem(sys.modules, "pynvml", types.ModuleType("pynvml"))
    sys.modules["pynvml"].__dict__.update(vars(fake))
    bench._nvml_handle.cache_clear()
    try:
        assert nvml_sample("abc") == ClockSample(sm_mhz=1410.0, mem_mhz=3201.0, max_sm_mhz=1980.0, power_w=652.35, temp_c=51.0)
    finally:
        bench._nvml_handle.cache_clear()
