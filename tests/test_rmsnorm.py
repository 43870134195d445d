"""Our RMSNorm (rmsnorm_v0..v2) and its peers: the workload, the tiled copy's layout algebra on the CPU,
the SASS of each step for sm_90a (128-bit copies, butterfly shuffles, the cluster exchange where N asks
for it, no spills), and, on the H200, every plan against the float64 reference at odd shapes."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from mla_var3.kernel.cute_python.reduction.rmsnorm.common import EPS
from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.plan import RmsNormV0Plan
from mla_var3.kernel.cute_python.reduction.rmsnorm.v1.plan import RmsNormV1Plan
from mla_var3.kernel.cute_python.reduction.rmsnorm.v2.plan import RmsNormV2Plan
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.external.reduction.quack.rmsnorm.plan import QuackRmsNormPlan
from mla_var3.kernel.torch_ref.reduction.rmsnorm.functional.plan import TorchRmsNormPlan

OURS = (RmsNormV0Plan, RmsNormV1Plan, RmsNormV2Plan)


def test_reference_is_the_formula_in_float64() -> None:
    plan = RmsNormV0Plan()
    x, w = torch.randn(3, 37).bfloat16(), torch.randn(37)
    y = plan.reference_fn({"x": x, "w": w})["y"]
    row = [float(v) for v in x[1]]
    scale = 1.0 / (sum(v * v for v in row) / 37 + EPS) ** 0.5
    assert y.dtype == torch.float64
    assert torch.allclose(
        y[1], torch.tensor([v * scale * float(wi) for v, wi in zip(row, w, strict=True)], dtype=torch.float64)
    )


def test_torch_baseline_matches_the_reference_on_cpu() -> None:
    plan = TorchRmsNormPlan()
    inputs = {"x": torch.randn(5, 1000).bfloat16(), "w": torch.randn(1000)}
    outputs = {"y": torch.empty(5, 1000, dtype=torch.bfloat16)}
    plan.plan({}).fn(inputs, outputs)
    ref = plan.reference_fn(inputs)["y"]
    assert float((outputs["y"].double() - ref).norm() / ref.norm()) <= plan.tolerance()


def test_bytes_count_x_and_y_in_bf16_and_w_once_in_fp32() -> None:
    assert RmsNormV0Plan()._algorithmic_flops_bytes({"m": 10, "n": 100}) == (4000, 10 * 100 * 4 + 400)


def test_register_variants_stop_at_16k_and_name_the_cluster_variant() -> None:
    with pytest.raises(UnsupportedShapeError, match="use rmsnorm_v2"):
        RmsNormV1Plan().check_shape({"m": 1, "n": 32768})
    RmsNormV2Plan().check_shape({"m": 1, "n": 65536})


def test_the_cluster_starts_above_8192_columns_per_cta() -> None:
    from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import cluster_size

    assert [cluster_size(n, 8192) for n in (1000, 4096, 8192, 8193, 16384, 65536, 131072)] == [
        1,
        1,
        1,
        2,
        2,
        8,
        8,
    ]


def test_quack_peer_is_skipped_with_one_line_when_absent() -> None:
    reason = QuackRmsNormPlan.unavailable_reason()
    assert reason is None or ("\n" not in reason and "quack-kernels" in reason)


def test_x_and_the_fp32_weight_partition_onto_the_same_columns() -> None:
    """The two tiled copies of a tile (bf16 x: one 128-bit copy per 8 columns; fp32 w: two), run as
    layout algebra on the CPU: thread t of row r owns the same columns in both, vector c of every
    threads_per_row * 8 columns, and the fragments list them in the same order."""
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import RowTiling, tiled_copy_for

    tiling = RowTiling(n=128, vec=8, threads_per_row=4, rows_per_cta=8)
    owned: dict[str, dict[int, list[tuple[int, int]]]] = {"x": {}, "w": {}}

    @cute.jit
    def partition() -> None:
        coords = cute.make_identity_tensor(tiling.tiler)
        for name, dtype in (("x", cutlass.BFloat16), ("w", cutlass.Float32)):
            tiled = tiled_copy_for(dtype, tiling)
            for t in cutlass.range_constexpr(tiling.threads):
                mine = tiled.get_slice(t).partition_S(coords)
                owned[name][t] = [tuple(mine[i]) for i in range(cute.size(mine))]

    cute.compile(partition)
    assert owned["x"] == owned["w"]
    for t, elements in owned["x"].items():
        row, lane = divmod(t, tiling.threads_per_row)
        cols = [lane * 8 + k * 32 + v for k in range(tiling.vectors_per_thread) for v in range(8)]
        assert elements == [(row, c) for c in cols]


def _sass(plan_cls: type, shape: dict[str, int], arch: str = "sm_90a") -> tuple[Counter[str], int]:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import disassemble, parse_sass
    from mla_var3.kernel.compile_cache import compile_cached

    plan = plan_cls()
    compiled = compile_cached(plan, plan.default_config(), shape, arch, need_function=False).compiled
    ops: Counter[str] = Counter()
    for mnemonics in parse_sass(disassemble(compiled.cubin)).values():
        ops.update(mnemonics)
    return ops, max(r.local_bytes for r in resource_usage(compiled.cubin))


@pytest.mark.parametrize("plan_cls", OURS, ids=lambda p: p.name)
def test_sass_vectors_shuffles_and_no_spills(plan_cls: type) -> None:
    ops, local = _sass(plan_cls, {"m": 32768, "n": 4096})
    # x: 4 vectors per thread, w: 8 fp32 copies (two per vector), v1 adds the next block's 4.
    assert ops["LDG.E.128"] == (16 if plan_cls is RmsNormV1Plan else 12)
    assert ops["STG.E.128"] == 4
    assert ops["SHFL.BFLY"] >= 5 and local == 0
    assert not any(op.startswith(("LDL", "STL", "STAS", "UCGABAR")) for op in ops)


def test_v2_reduces_long_rows_across_a_cluster_through_dsmem() -> None:
    ops, local = _sass(RmsNormV2Plan, {"m": 7, "n": 65536})
    assert ops["STAS"] == 1  # lane r of each warp sends its partial to CTA r
    assert ops["SYNCS.ARRIVE.TRANS64"] == 1 and ops["SYNCS.PHASECHK.TRANS64.TRYWAIT"] >= 1
    assert ops["UCGABAR_ARV"] == 1 and ops["UCGABAR_WAIT"] == 1  # one cluster barrier: init before stores
    assert local == 0


def test_rows_no_vector_divides_copy_one_element_at_a_time() -> None:
    ops, _ = _sass(RmsNormV0Plan, {"m": 1, "n": 4097})
    assert ops["LDG.E.U16"] == ops["STG.E.U16"] > 0 and ops["LDG.E.128"] == 0


def test_v0_compiles_for_sm_80() -> None:
    ops, local = _sass(RmsNormV0Plan, {"m": 1, "n": 4096}, "sm_80")
    assert ops["LDG.E.128"] == 12 and local == 0


@pytest.mark.gpu
@pytest.mark.parametrize("plan_cls", [*OURS, TorchRmsNormPlan, QuackRmsNormPlan], ids=lambda p: p.name)
@pytest.mark.parametrize(
    "shape",
    [{"m": 199, "n": 1000}, {"m": 1, "n": 4097}, {"m": 199, "n": 4096}, {"m": 3, "n": 16384}],
    ids=str,
)
def test_matches_reference_on_gpu(plan_cls: type, shape: dict[str, int]) -> None:
    from mla_var3.kernel.arch import Arch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    if plan_cls.unavailable_reason():
        pytest.skip(plan_cls.unavailable_reason())
    plan = plan_cls()
    kernel = plan.plan(plan.default_config())
    if plan_cls is QuackRmsNormPlan and shape["n"] % 8:
        # Measured on the H200 (2026-12-01): quack's compile fails IR verification at n = 4097 (a
        # 16-bit cp.async). Its plan does not reject such n with a clear message yet; it will at the
        # next re-verify of rmsnorm_bf16 (a change to the plan stales that group's records).
        with pytest.raises(Exception):  # noqa: B017 -- the DSL raises an internal error type
            kernel.compile(shape, Arch.parse("sm_90a"))
        return
    # sm_90a, not the plan's last arch: v0/v1 also compile for sm_80, whose SASS an H200 cannot load.
    compiled = kernel.compile(shape, Arch.parse("sm_90a"))
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    outputs["y"].fill_(float("nan"))
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    out, ref = outputs["y"].double(), plan.reference_fn(inputs)["y"]
    assert torch.isfinite(out).all(), "some of y was not written"
    assert float((out - ref).norm() / ref.norm()) <= plan.tolerance()


@pytest.mark.gpu
def test_v2_cluster_path_matches_reference_on_gpu() -> None:
    test_matches_reference_on_gpu(RmsNormV2Plan, {"m": 7, "n": 65536})
