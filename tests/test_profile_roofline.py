"""Roofline numbers on hand cases, and a deterministic SVG."""

from __future__ import annotations

import pytest

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.roofline import (
    Ceiling,
    ceilings_from_dict,
    render_roofline_svg,
    roofline,
)

CEILINGS = [Ceiling("matmul", "compute", 8e14), Ceiling("copy", "memory", 4e12)]


def test_compute_bound_kernel() -> None:
    # 2 TFLOP and 1 GB in 10 ms: 200 TFLOP/s, 100 GB/s, 2000 FLOP/B; the ridge is 800e12 / 4e12 = 200.
    r = roofline(2e12, 1e9, 1e-2, CEILINGS, label="gemm")
    assert (r.flops_per_s, r.bytes_per_s, r.arithmetic_intensity) == (2e14, 1e11, 2000)
    assert r.pct_of == {"matmul": pytest.approx(25.0), "copy": pytest.approx(2.5)}
    assert (r.ridge_intensity, r.bound) == (200, "compute")
    assert r.attainable_flops_per_s == 8e14 and r.pct_of_roof == pytest.approx(25.0)


def test_memory_bound_kernel() -> None:
    # 1 GFLOP and 10 GB in 5 ms: 2 TB/s (50 % of copy); roof at 0.1 FLOP/B is 0.4 TFLOP/s.
    r = roofline(1e9, 1e10, 5e-3, CEILINGS)
    assert r.bound == "memory" and r.pct_of["copy"] == pytest.approx(50.0)
    assert r.attainable_flops_per_s == pytest.approx(4e11)
    assert r.pct_of_roof == pytest.approx(50.0)


def test_incomplete_inputs_leave_fields_empty() -> None:
    no_bytes = roofline(1e9, 0, 1e-3, CEILINGS)
    assert no_bytes.arithmetic_intensity is None and no_bytes.bound is None and no_bytes.ridge_intensity == 200
    compute_only = roofline(1e9, 1e6, 1e-3, CEILINGS[:1])
    assert compute_only.ridge_intensity is None and compute_only.bound is None
    assert compute_only.pct_of == {"matmul": pytest.approx(1e12 / 8e14 * 100)}
    with pytest.raises(ProfileError, match="time must be positive"):
        roofline(1.0, 1.0, 0.0, CEILINGS)
    with pytest.raises(ProfileError, match="kind must be"):
        Ceiling("copy", "bandwidth", 1.0)


def test_record_ceilings_and_record_field_names() -> None:
    record = {"copy_bytes_per_s": 4e12, "matmul_flops_per_s": 8e14, "copy_method": "torch copy_, 1 GiB"}
    ceilings = ceilings_from_dict(record)
    assert sorted(ceilings, key=lambda c: c.name) == sorted(CEILINGS, key=lambda c: c.name)
    d = roofline(2e12, 1e9, 1e-2, ceilings).to_dict()
    assert d["pct_of_matmul_ceiling"] == pytest.approx(25.0) and d["pct_of_copy_ceiling"] == pytest.approx(2.5)


def test_svg_is_deterministic_and_labelled() -> None:
    points = [roofline(2e12, 1e9, 1e-2, CEILINGS, label="hopper_gemm_ws"), roofline(1e9, 1e10, 5e-3, CEILINGS, label="add")]
    svg = render_roofline_svg(points, CEILINGS)
    assert svg == render_roofline_svg(points, CEILINGS)
    assert "<svg" in svg and "hopper_gemm_ws" in svg and "add" in svg
    assert "matmul 800 TFLOP/s" in svg and "copy 4000 GB/s" in svg
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    with pytest.raises(ProfileError, match="compute and one memory"):
        render_roofline_svg(points, CEILINGS[:1])
