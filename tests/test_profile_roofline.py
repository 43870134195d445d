"""Roofline numbers on hand cases, the dtype's own ceiling, non-overlapping labels, and a deterministic SVG."""

from __future__ import annotations

import pytest

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.roofline import (
    DATASHEETS,
    Ceiling,
    RooflineRun,
    draw_roofline,
    place_labels,
    roofline,
    roofline_for_dtype,
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


def test_a_kernel_meets_the_matmul_ceiling_of_its_own_dtype() -> None:
    measured = [Ceiling("copy", "memory", 4e12), Ceiling("matmul_bfloat16", "compute", 8e14), Ceiling("matmul_float8_e4m3fn", "compute", 1.6e15)]
    d = roofline_for_dtype(2e12, 1e9, 1e-2, measured, "bfloat16").to_dict()
    assert d["pct_of_matmul_ceiling"] == pytest.approx(25.0) and d["pct_of_copy_ceiling"] == pytest.approx(2.5)
    fp32 = roofline_for_dtype(2e12, 1e9, 1e-2, measured, "float32")  # no fp32 matmul measured: the fastest one
    assert fp32.pct_of["matmul"] == pytest.approx(12.5)


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_labels_of_points_at_the_same_place_never_overlap() -> None:
    boxes = place_labels([(100.0, 50.0)] * 4 + [(100.0, 58.0)], [(80.0, 12.0)] * 5)
    assert all(not _overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    near_edge = place_labels([(180.0, 50.0), (180.0, 50.0)], [(80.0, 12.0)] * 2, right=200.0)
    assert all(box[2] <= 180.0 for box in near_edge) and not _overlap(*near_edge)  # flipped left of the point
    points = tuple(roofline(2e12, 1e9, t, CEILINGS, label=f"kernel {i} at 8192^3") for i, t in enumerate((1e-2, 1e-2, 1.01e-2)))
    figure = draw_roofline([RooflineRun("run 1", tuple(CEILINGS), points)])
    drawn = figure.label_boxes
    assert len(drawn) == 3 and all(not _overlap(a, b) for i, a in enumerate(drawn) for b in drawn[i + 1 :])


def test_svg_is_deterministic_and_labelled() -> None:
    points = (roofline(2e12, 1e9, 1e-2, CEILINGS, label="hopper_gemm_ws"), roofline(1e9, 1e10, 5e-3, CEILINGS, label="add"))
    runs = [RooflineRun("run 1", tuple(CEILINGS), points[:1]), RooflineRun("run 2", (Ceiling("copy", "memory", 3.9e12),), points[1:])]
    sheet = DATASHEETS["NVIDIA H200"]
    svg = draw_roofline(runs, sheet.ceilings, reference_label="H200 datasheet").svg
    assert svg == draw_roofline(runs, sheet.ceilings, reference_label="H200 datasheet").svg
    assert "<svg" in svg and "hopper_gemm_ws" in svg and "add" in svg
    assert "run 1: matmul 800 TFLOP/s" in svg and "run 1: copy 4.00 TB/s" in svg and "run 2: copy 3.90 TB/s" in svg
    assert "H200 datasheet: HBM3e 4.80 TB/s" in svg and "H200 datasheet: dense bf16/fp16 989 TFLOP/s" in svg
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    with pytest.raises(ProfileError, match="compute and one memory"):
        draw_roofline([RooflineRun("r", tuple(CEILINGS[:1]), points)])


def test_a_pure_copy_has_the_memory_ceiling_as_its_roof() -> None:
    # No FLOPs, 8 GB in 4 ms: 2 TB/s, half the copy ceiling; on the H200 this case raised
    # ZeroDivisionError (attainable = min(peak, 0 * peak_memory) = 0) for every copy snippet's run record.
    r = roofline(0, 8e9, 4e-3, CEILINGS)
    assert r.arithmetic_intensity == 0 and r.bound == "memory"
    assert r.pct_of_roof == pytest.approx(50.0) and r.attainable_flops_per_s is None
