"""``hopper_gemm_ws``: compile-only SASS and resource checks for sm_90a (CPU), shape and dtype
errors, the reference, and -- on an H200 -- correctness against the fp32 reference."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.gemm.common import GEMM_CHECK_SHAPES
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan
from mla_var3.kernel.errors import UnsupportedDtypeError, UnsupportedShapeError

SM90A = Arch.parse("sm_90a")
RAGGED = {"m": 1000, "n": 1048, "k": 520}
SQUARE = {"m": 4096, "n": 4096, "k": 4096}


def _compile(shape: dict[str, int], config: dict | None = None, dtype: str = "bfloat16"):
    plan = HopperGemmWSPlan(dtype)
    return plan.plan(config or plan.default_config()).compile(shape, SM90A)


def _opcodes(cubin: bytes) -> dict[str, int]:
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    return opcode_histogram(instruction_histogram(cubin, "sm_90a"))


@pytest.fixture(scope="module")
def default_cubin(hopper_ws_default_cubin: bytes) -> bytes:
    return hopper_ws_default_cubin


def test_default_config_sass_has_the_hopper_pipeline(default_cubin: bytes) -> None:
    ops = _opcodes(default_cubin)
    assert ops.get("HGMMA", 0) >= 4, "WGMMA (64x256x16 per warpgroup, 4 per K tile) missing"
    assert ops.get("UTMALDG", 0) >= 2, "TMA loads of A and B missing"
    assert ops.get("UTMASTG", 0) >= 1, "TMA store of C missing"
    assert ops.get("SYNCS", 0) >= 1, "mbarrier pipeline missing"
    assert ops.get("USETMAXREG", 0) == 2, "one setmaxnreg per warp role expected"
    assert ops.get("STSM", 0) >= 1, "stmatrix epilogue missing"
    assert "LDL" not in ops and "STL" not in ops, "register spills"


def test_default_config_resources(default_cubin: bytes) -> None:
    from mla_var3.analysis.resources import resource_usage

    (kernel,) = resource_usage(default_cubin)
    # 384 threads at one CTA per SM cap the entry at 168 registers; setmaxnreg moves them.
    assert kernel.registers <= 168
    assert kernel.local_bytes == 0
    plan = HopperGemmWSPlan()
    smem = plan.plan(plan.default_config()).dynamic_smem_bytes(SQUARE)
    assert smem == 230400  # 4 x 48 KiB A/B stages + 32 KiB C ring + 1 KiB barriers
    assert smem + kernel.static_smem_bytes <= 227 * 1024


def test_one_binary_serves_every_shape(default_cubin: bytes) -> None:
    # M, N, K are dynamic: a square shape compiles to the same cubin as a ragged one.
    assert _compile(SQUARE).cubin == default_cubin


@pytest.mark.parametrize(("config_index", "dtype"), [(1, "bfloat16"), (2, "bfloat16"), (3, "float16")])
def test_every_config_compiles_to_wgmma(config_index: int, dtype: str, hopper_ws_cubin: Callable[[int, str], bytes]) -> None:
    ops = _opcodes(hopper_ws_cubin(config_index, dtype))
    assert ops.get("HGMMA", 0) >= 4 and ops.get("UTMALDG", 0) >= 2
    assert "LDL" not in ops and "STL" not in ops


@pytest.mark.parametrize(("dim", "value"), [("k", 1001), ("n", 1004)])
def test_misaligned_rows_are_rejected(dim: str, value: int) -> None:
    shape = {"m": 1000, "n": 1048, "k": 520, dim: value}
    with pytest.raises(UnsupportedShapeError, match=rf"--{dim} \(={value}.*multiple of 8.*pad {dim} to"):
        HopperGemmWSPlan().validate_shape(shape)


def test_ragged_but_aligned_shapes_are_accepted() -> None:
    plan = HopperGemmWSPlan("float16")
    for shape in (*GEMM_CHECK_SHAPES, {"m": 1, "n": 8, "k": 8}):
        plan.validate_shape(shape)


def test_unsupported_dtype_is_rejected() -> None:
    with pytest.raises(UnsupportedDtypeError, match="float32"):
        HopperGemmWSPlan("float32")


def test_too_many_stages_is_rejected() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import HopperGemmWS

    with pytest.raises(ValueError, match="at most 4 stages"):
        HopperGemmWS(tile_mn=(128, 256), cluster_mn=(2, 1), stages=5)


def test_stage_count_defaults_to_what_fits() -> None:
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import max_stages

    assert max_stages((128, 256, 64), epi_stages=4) == 4
    assert max_stages((128, 128, 64), epi_stages=4) == 6


def test_reference_matches_a_naive_loop() -> None:
    import torch

    plan = HopperGemmWSPlan("bfloat16")
    a = torch.randn(5, 16).to(torch.bfloat16)
    b = torch.randn(3, 16).to(torch.bfloat16)
    ref = plan.reference_fn({"a": a, "b": b})["c"]
    naive = torch.empty(5, 3, dtype=torch.float64)
    for i in range(5):
        for j in range(3):
            naive[i, j] = sum(float(a[i, p]) * float(b[j, p]) for p in range(16))
    assert ref.dtype == torch.float32
    torch.testing.assert_close(ref.double(), naive, rtol=1e-6, atol=1e-6)


def test_roofline_counts() -> None:
    flops, nbytes = HopperGemmWSPlan()._algorithmic_flops_bytes({"m": 1000, "n": 1048, "k": 520})
    assert flops == 2 * 1000 * 1048 * 520
    assert nbytes == (1000 * 520 + 1048 * 520 + 1000 * 1048) * 2


def test_registered() -> None:
    from mla_var3.kernel.registry import get_plan

    plan = get_plan("hopper_gemm_ws")
    assert plan is HopperGemmWSPlan and plan.archs == ("sm_90a",) and plan.layer == "gemm"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [*GEMM_CHECK_SHAPES, {"m": 1, "n": 8, "k": 8}], ids=str)
def test_matches_reference_on_gpu(dtype: str, shape: dict[str, int]) -> None:
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = HopperGemmWSPlan(dtype)
    kernel = plan.plan(plan.default_config())
    compiled = kernel.compile(shape, SM90A)
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    outputs["c"].fill_(float("nan"))
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    out, ref = outputs["c"].float(), plan.reference_fn(inputs)["c"]
    assert torch.isfinite(out).all(), "some of C was not written"
    assert float((out - ref).norm() / ref.norm()) <= plan.tolerance()


# --- the persistent tile order ------------------------------------------------------------------


def _tile_order(clusters_m: int, clusters_n: int, raster_group_m: int) -> list[tuple[int, int]]:
    """The kernel's own ``_cluster_tile`` run as plain Python on every work unit of a grid."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import HopperGemmWS

    gemm = HopperGemmWS(raster_group_m=raster_group_m)
    cluster_tile = HopperGemmWS._cluster_tile.__wrapped__  # the undecorated method: ints in, ints out
    return [cluster_tile(gemm, work, (clusters_m, clusters_n)) for work in range(clusters_m * clusters_n)]


def test_tile_order_computes_every_tile_exactly_once() -> None:
    for raster_group_m in range(1, 10):
        for clusters_m in range(1, 13):
            for clusters_n in range(1, 7):
                order = _tile_order(clusters_m, clusters_n, raster_group_m)
                grid = [(m, n) for m in range(clusters_m) for n in range(clusters_n)]
                assert sorted(order) == grid, (clusters_m, clusters_n, raster_group_m)


def test_tile_order_walks_bands_column_by_column() -> None:
    # 10 rows in bands of 8: the last band is 2 rows tall. Without the min() on its height the
    # units of rows 8-9 would walk 8-row columns and never reach columns 1-3 of rows 8-9.
    order = _tile_order(10, 4, 8)
    assert order[:9] == [(m, 0) for m in range(8)] + [(0, 1)]
    assert order[32:] == [(8, 0), (9, 0), (8, 1), (9, 1), (8, 2), (9, 2), (8, 3), (9, 3)]
