"""The profile parsers on real H200 captures (tests/fixtures/profile/h200), not hand-written ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from mla_var3.profile.ncu import SM90_METRICS, parse_ncu_csv
from mla_var3.profile.sanitizer import judge

H200 = Path(__file__).parent / "fixtures" / "profile" / "h200"


def test_real_ncu_capture_parses_every_field() -> None:
    (result,) = parse_ncu_csv((H200 / "ncu_raw_hopper_gemm_h200.csv").read_text())
    assert result.kernel_name.startswith("kernel_cutlass_kernel_mla_var3kernelcute_pythongemmhopper")
    assert result.compute_capability == "9.0"
    assert result.registers_per_thread == 168 and result.smem_dynamic_bytes == 230400
    assert result.duration_ns is not None and 5_000 < result.duration_ns < 100_000  # a 1024^3 GEMM
    for pct in (result.sm_throughput_pct, result.tc_pct, result.dram_throughput_pct, result.achieved_occupancy_pct):
        assert pct is not None and 0 < pct <= 100
    assert result.sm_clock_hz is not None and 0.5e9 < result.sm_clock_hz < 2.1e9
    assert result.top_stalls and all(value >= 0 for _, value in result.top_stalls)
    missing = [m for m in SM90_METRICS if m not in result.raw]
    assert not missing, f"metrics ncu did not report on the H200: {missing}"


@pytest.mark.parametrize(
    ("tool", "capture"),
    [("racecheck", "racecheck_hopper_h200.txt"), ("synccheck", "synccheck_hopper_h200.txt"),
     ("memcheck", "memcheck_elementwise_h200.txt")],
)  # fmt: skip
def test_real_sanitizer_captures_are_clean(tool: str, capture: str) -> None:
    result = judge(tool, (H200 / capture).read_text(), 0)
    assert result.passed and result.errors == 0 and result.reported_errors == 0, result.reasons
