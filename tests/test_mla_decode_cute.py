"""Our CuTe DSL MLA decode variants (``cute_python/mla/decode``): compile for sm_90a on the CPU with
SASS and resource checks, SMEM budget, split counts, shape errors; on an H200 every variant against
the fp32 reference at odd lengths, every page size, variable lengths, s_q = 2 and NaN-poisoned
unused cache rows, O and LSE checked."""

from __future__ import annotations

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.registry import get_plan
from mla_var3.kernel.workloads.mla import MLA_CHECK_SHAPES, mla_shape

SM90A = Arch.parse("sm_90a")
VARIANTS = ("mla_decode_v0", "mla_decode_v1", "mla_decode_v2", "mla_decode_v3")
WARP_SPECIALIZED = {"mla_decode_v2", "mla_decode_v3"}
SPLITTING = {"mla_decode_v1", "mla_decode_v2", "mla_decode_v3"}
SHAPE = mla_shape(b=4, t=1000, page=64)  # 8 query tiles: the split variants split (and combine)


def _compile(name: str, shape: dict[str, int], dtype: str = "bfloat16"):
    """The binary, from the run's compile cache (the registry test and the CLI test read the same entries)."""
    from mla_var3.kernel.compile_cache import compile_cached

    plan = get_plan(name)(dtype)
    return compile_cached(plan, plan.default_config(), shape, SM90A, need_function=False).compiled


def _analysis(cubin: bytes) -> tuple[dict[str, int], list]:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    return opcode_histogram(instruction_histogram(cubin, "sm_90a")), resource_usage(cubin)


@pytest.fixture(scope="module", params=VARIANTS)
def compiled(request: pytest.FixtureRequest) -> tuple[str, object]:
    return request.param, _compile(request.param, SHAPE)


def test_sass_has_the_hopper_pipeline_and_no_spills(compiled: tuple[str, object]) -> None:
    name, result = compiled
    ops, kernels = _analysis(result.cubin)
    assert ops.get("HGMMA", 0) >= 36 + 4, "WGMMA: 36 k-steps of Q K^T over d = 576 and 4 of P V"
    assert ops.get("UTMALDG", 0) >= 2, "TMA loads of Q and of the paged KV blocks"
    assert ops.get("SYNCS", 0) >= 1, "mbarrier waits"
    assert "LDL" not in ops and "STL" not in ops, "register spills"
    if name in WARP_SPECIALIZED:
        assert ops.get("USETMAXREG", 0) == 2, "one setmaxnreg per warp role"
    else:
        assert "USETMAXREG" not in ops
    names = [k.kernel for k in kernels]
    assert any("combine_kernel" in n for n in names) == (name in SPLITTING)
    assert all(k.local_bytes == 0 for k in kernels)


def test_wgmma_is_not_serialized(compiled: tuple[str, object]) -> None:
    """ptxas falls back to waiting after every WGMMA (``WARPGROUP.DEPBAR`` per ``HGMMA``) when it
    cannot keep accumulators in flight -- v3's first attempt, which left a WGMMA in flight across
    the loop back-edge, ran 2x slower. A pipelined kernel waits a handful of times."""
    from mla_var3.analysis.sass import disassemble

    lines = disassemble(compiled[1].cubin).splitlines()
    assert sum("WARPGROUP.DEPBAR" in line for line in lines) <= 4 < sum("HGMMA" in line for line in lines)


def test_smem_fits_and_v2_fills_it(compiled: tuple[str, object]) -> None:
    from mla_var3.kernel.cute_python.mla.decode.common import DSL_STATIC_SMEM, smem_capacity

    name, result = compiled
    assert result.dynamic_smem_bytes + DSL_STATIC_SMEM <= 227 * 1024
    if name in WARP_SPECIALIZED:  # Q + 2 KV stages + P + 1 KiB of barriers/row factors
        assert result.dynamic_smem_bytes == 72 * 1024 * 3 + 8 * 1024 + 1024 <= smem_capacity()


@pytest.mark.parametrize(("name", "page", "dtype"), [("mla_decode_v2", 16, "float16"), ("mla_decode_v0", 128, "bfloat16")])
def test_other_pages_and_fp16_compile_without_spills(name: str, page: int, dtype: str) -> None:
    ops, _ = _analysis(_compile(name, mla_shape(b=4, t=1000, page=page), dtype).cubin)
    assert ops.get("HGMMA", 0) >= 40 and ops.get("UTMALDG", 0) >= 2
    assert "LDL" not in ops and "STL" not in ops


def test_kv_stages_are_counted_against_the_dsl_capacity() -> None:
    from mla_var3.kernel.cute_python.mla.decode.common import max_kv_stages, smem_budget, smem_capacity

    assert max_kv_stages() == 2
    assert smem_budget(2).total <= smem_capacity() < smem_budget(3).total


def test_too_many_stages_is_rejected() -> None:
    from mla_var3.kernel.cute_python.mla.decode.v2.kernel import MlaDecodeV2

    with pytest.raises(ValueError, match="use at most 2"):
        MlaDecodeV2(page=64, split_kv=False, kv_stages=3)


def test_split_count_fills_the_gpu_once() -> None:
    from mla_var3.kernel.cute_python.mla.decode.plan_common import default_splits

    assert default_splits(batch=128, query_tiles=2, kv_blocks=128, sm_count=132) == 1
    assert default_splits(batch=4, query_tiles=2, kv_blocks=128, sm_count=132) == 16  # 128 CTAs: one wave
    assert default_splits(batch=8, query_tiles=2, kv_blocks=128, sm_count=132) == 8  # not 9: 144 > 132
    assert default_splits(batch=1, query_tiles=2, kv_blocks=3, sm_count=132) == 3
    plan = get_plan("mla_decode_v1")()
    assert plan.splits(mla_shape(b=4, t=8192)) == 16
    assert plan.static_shape(mla_shape(b=4, t=8192)) == {"page": 64, "split": 1}
    assert plan.static_shape(mla_shape(b=128, t=8192)) == {"page": 64, "split": 0}
    assert get_plan("mla_decode_v0")().static_shape(mla_shape(b=4, t=8192, page=16)) == {"page": 16}


def test_v_view_reads_the_latent_columns_of_the_kv_tile() -> None:
    """V[d, n] of stage s is KV[n, d] of stage s: same SMEM offset (the swizzle acts on offsets)."""
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.mla.decode.common import make_smem_layouts, v_view_layout

    coords = [(n, d, s) for n in (0, 1, 7, 8, 63) for d in (0, 1, 63, 64, 255, 256, 511) for s in (0, 1)]
    kv_offsets: list[int] = []
    v_offsets: list[int] = []

    @cute.jit
    def probe() -> None:
        _, kv_layout, _ = make_smem_layouts(cutlass.BFloat16, 2)
        v_layout = v_view_layout(kv_layout.outer, 2)
        for n, d, s in coords:
            kv_offsets.append(kv_layout.outer((n, d, s)))
            v_offsets.append(v_layout((d, n, s)))

    probe()
    assert v_offsets == kv_offsets and len(set(kv_offsets)) == len(coords)


@pytest.mark.parametrize("page", [48, 8])
def test_unsupported_page_sizes_are_rejected(page: int) -> None:
    with pytest.raises(UnsupportedShapeError, match=f"--page in .* got {page}"):
        get_plan("mla_decode_v2")().check_shape(mla_shape(page=page))


def test_variants_are_registered_for_sm90a() -> None:
    for name in VARIANTS:
        plan = get_plan(name)
        assert plan.archs == ("sm_90a",) and plan.layer == "mla" and plan.dtypes == ("bfloat16", "float16")


GPU_SHAPES = (
    *MLA_CHECK_SHAPES,
    mla_shape(b=1, t=64, h=128),
    mla_shape(b=3, s=2, t=63, h=128, page=16, varlen=1),
    mla_shape(b=2, t=200, h=128, page=128, varlen=1),
    mla_shape(b=2, s=2, t=4097, h=16, page=128),
)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", VARIANTS)
def test_matches_reference_on_gpu(name: str, dtype: str) -> None:
    check_on_gpu(name, dtype, GPU_SHAPES)


def check_on_gpu(name: str, dtype: str, shapes: tuple) -> None:
    """Every output element of ``name`` at each of ``shapes`` against its fp32 reference (NaN-poisoned outputs)."""
    import torch

    from mla_var3.kernel.check import compare, poison
    from mla_var3.kernel.compile_cache import compile_cached

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = get_plan(name)(dtype)
    kernel = plan.plan(plan.default_config())
    for shape in shapes:
        compiled = compile_cached(plan, plan.default_config(), shape, SM90A).compiled  # one binary per static shape
        inputs = plan.prepare_inputs(shape)
        outputs = plan.allocate_outputs(inputs, shape)
        poison(outputs)
        kernel.launch(compiled, inputs, outputs)
        torch.cuda.synchronize()
        ref = plan.reference_fn(inputs)
        check = compare({k: outputs[k] for k in ref}, ref, plan.tolerance())
        assert check.passed, f"{name} {dtype} {shape}: {check.summary()}"
