"""Our SM90 FMHA forward (``cute_python/attention/fmha``, plans ``fmha_hopper_v0..v3``).

On the CPU: every variant compiles for sm_90a with the SASS that proves its structure (SS and
RS HGMMA, TMA loads and stores, mbarriers, setmaxnreg, named-barrier turns, the warp vote, no
spills, WGMMAs not serialized), the SMEM budget, the causal walk (every visible KV block
computed exactly once, nothing above the diagonal, the mask exactly where it is needed) as
plain Python over small grids, and the register identity that lets P feed the PV WGMMA without
a copy. On an H200 (``gpu``): every variant against the fp32 reference, O and LSE, at odd
lengths, causal and not, fp16 and bf16, and v3 bit-identical to v2.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.registry import get_plan

SM90A = Arch.parse("sm_90a")
VARIANTS = ("fmha_hopper_v0", "fmha_hopper_v1", "fmha_hopper_v2", "fmha_hopper_v3")
WARP_SPECIALIZED = {"fmha_hopper_v1", "fmha_hopper_v2", "fmha_hopper_v3"}
PING_PONG = {"fmha_hopper_v2", "fmha_hopper_v3"}
ISSUE_SHAPE = {"b": 2, "s": 8192, "t": 8192, "h": 16, "hk": 16, "d": 128}


def _compile(name: str, causal: int, tile_n: int = 128, dtype: str = "bfloat16") -> Compiled:
    """The plan's binary from the compile cache (the registry test and the next run read the same entry)."""
    from mla_var3.kernel.compile_cache import compile_cached

    plan = get_plan(name)(dtype)
    return compile_cached(plan, {"tile_n": tile_n}, {**ISSUE_SHAPE, "causal": causal}, SM90A, need_function=False).compiled


def _sass(cubin: bytes) -> tuple[dict[str, int], str]:
    from mla_var3.analysis.sass import disassemble, instruction_histogram, opcode_histogram

    return opcode_histogram(instruction_histogram(cubin, "sm_90a")), disassemble(cubin)


def hgmma_forms(sass: str) -> Counter[str]:
    """HGMMAs by where A comes from: ``SS`` (``HGMMA ... Rd, gdesc[..]``: both operands in SMEM) or
    ``RS`` (``HGMMA ... Rd, Ra, gdesc[..]``: A from registers)."""
    forms: Counter[str] = Counter()
    for match in re.finditer(r"HGMMA\.\S+\s+R\d+,\s*(\S+)", sass):
        forms["SS" if match.group(1).startswith("gdesc") else "RS"] += 1
    return forms


@pytest.fixture(scope="module", params=[(v, 1) for v in VARIANTS] + [("fmha_hopper_v2", 0)], ids=str)
def compiled(request: pytest.FixtureRequest) -> tuple[str, int, object]:
    name, causal = request.param
    return name, causal, _compile(name, causal)


def test_sass_proves_the_structure(compiled: tuple[str, int, object]) -> None:
    from mla_var3.analysis.resources import resource_usage

    name, _, result = compiled
    ops, sass = _sass(result.cubin)
    forms = hgmma_forms(sass)
    # QK^T: d/16 = 8 SS k-steps; PV: tile_n/16 = 8 RS k-steps; v0/v1 compile the walk twice
    # (masked, unmasked), v2/v3 once plus the peeled first QK^T and last PV.
    assert forms["SS"] >= 16 and forms["RS"] >= 16, forms
    assert ops.get("UTMALDG", 0) >= 6, "TMA loads of Q, K and V (two boxes of 64 columns each)"
    assert ops.get("UTMASTG", 0) >= 2, "TMA store of O"
    assert ops.get("SYNCS", 0) >= 4, "mbarrier init and waits"
    assert "LDL" not in ops and "STL" not in ops, "register spills"
    assert all(k.local_bytes == 0 for k in resource_usage(result.cubin))
    assert ops.get("USETMAXREG", 0) == (2 if name in WARP_SPECIALIZED else 0), "one setmaxnreg per warp role"
    assert (ops.get("BAR", 0) > 0) and (("BAR.ARV" in sass) == (name in PING_PONG)), "turn barriers"
    assert ("VOTE.ANY" in sass) == (name == "fmha_hopper_v3"), "the rescale vote"


def test_wgmma_is_not_serialized(compiled: tuple[str, int, object]) -> None:
    """ptxas waits after every WGMMA (a ``WARPGROUP.DEPBAR`` per ``HGMMA``) when it cannot keep them
    in flight -- v2 did, until its masked steps stopped compiling a third copy of the softmax."""
    _, sass = _sass(compiled[2].cubin)
    assert sass.count("WARPGROUP.DEPBAR") <= 4 < sass.count("HGMMA")


def test_smem_budget(compiled: tuple[str, int, object]) -> None:
    from mla_var3.kernel.cute_python.attention.fmha.common import DSL_STATIC_SMEM, smem_budget, smem_capacity

    name, _, result = compiled
    stages = 3 if name in WARP_SPECIALIZED else 1
    assert result.dynamic_smem_bytes == smem_budget(128, stages).total <= smem_capacity()
    assert result.dynamic_smem_bytes + DSL_STATIC_SMEM <= 227 * 1024


def test_stage_counts_follow_the_capacity() -> None:
    from mla_var3.kernel.cute_python.attention.fmha.common import max_stages, smem_budget, smem_capacity

    assert (max_stages(128), max_stages(176)) == (3, 2)
    assert (
        smem_budget(128, 3).total == (32 + 6 * 32 + 1) * 1024 <= smem_capacity() < smem_budget(128, 4).total
    )
    assert smem_budget(176, 2).total == (32 + 4 * 44 + 1) * 1024


@pytest.mark.parametrize(("name", "dtype"), [("fmha_hopper_v1", "float16")])
def test_tile_176_and_fp16_compile_without_spills(name: str, dtype: str) -> None:
    ops, sass = _sass(_compile(name, 1, tile_n=176, dtype=dtype).cubin)
    assert "HGMMA.64x176x16.F32" in sass and "LDL" not in ops and "STL" not in ops


def test_ping_pong_variants_refuse_tile_176() -> None:
    from mla_var3.kernel.cute_python.attention.fmha.v2.kernel import FmhaHopperV2

    with pytest.raises(ValueError, match=r"tile_n in \(128,\)"):
        FmhaHopperV2(causal=False, tile_n=176)
    assert get_plan("fmha_hopper_v2")()._autotune_configs() == [{"tile_n": 128}]


# --- the causal walk, as plain Python ---------------------------------------------------------------
LENGTHS = (1, 2, 64, 127, 128, 129, 200, 255, 256, 257, 333, 520)


def _walk(s: int, t: int, tile_n: int, causal: bool) -> tuple[np.ndarray, list[tuple[int, int, bool]]]:
    """What the kernels compute: per query block, the KV blocks of its walk (last first) and whether
    each step masks; returns the count of times each (query, key) pair's score is kept, and the steps."""
    from mla_var3.kernel.cute_python.attention.fmha.common import CTA_M, kv_schedule, visible_keys

    kept = np.zeros((s, t), dtype=np.int64)
    steps = []
    for m in range(-(-s // CTA_M)):
        rows = np.arange(m * CTA_M, (m + 1) * CTA_M)  # the rows the CTA computes, past s included
        n_blocks, masked = kv_schedule(m * CTA_M, t, tile_n, causal)
        for step in range(n_blocks):
            n = n_blocks - 1 - step
            keys = np.arange(n * tile_n, (n + 1) * tile_n)
            limit = np.array([visible_keys(int(r), t, causal) for r in rows])
            visible = keys[None, :] < limit[:, None]
            needs_mask = not visible.all()
            assert visible.any(), f"block ({m}, {n}) has nothing to compute: it lies above the diagonal"
            assert needs_mask == (step < masked), (
                f"block ({m}, {n}): mask {step < masked}, needed {needs_mask}"
            )
            valid = visible[rows < s][:, keys < t]
            kept[m * CTA_M : m * CTA_M + valid.shape[0], keys[keys < t]] += valid
            steps.append((m, n, step < masked))
    return kept, steps


@pytest.mark.parametrize("tile_n", [128, 176])
@pytest.mark.parametrize("causal", [False, True])
def test_walk_keeps_every_visible_score_once(tile_n: int, causal: bool) -> None:
    for s in LENGTHS:
        for t in LENGTHS:
            kept, steps = _walk(s, t, tile_n, causal)
            expected = np.tril(np.ones((s, t), dtype=np.int64)) if causal else np.ones((s, t), dtype=np.int64)
            assert (kept == expected).all(), (
                f"s={s} t={t}: a visible score computed other than once, or a hidden one kept"
            )
            assert len(set(steps)) == len(steps)


def test_causal_walk_skips_the_upper_triangle() -> None:
    """At the issue's length, tile 128: query block m walks blocks m..0 with one masked step (the
    diagonal); without the mask every block is walked and none is masked."""
    from mla_var3.kernel.cute_python.attention.fmha.common import kv_schedule

    for causal in (True, False):
        steps = []
        for m in range(64):
            n_blocks, masked = kv_schedule(m * 128, 8192, 128, causal)
            steps += [(m, n_blocks - 1 - step, step < masked) for step in range(n_blocks)]
        if causal:
            assert len(steps) == 64 * 65 // 2 and all(n <= m and masked == (n == m) for m, n, masked in steps)
        else:
            assert len(steps) == 64 * 64 and not any(masked for *_, masked in steps)


_FLAT = re.compile(r"\((-?\d+(?:,-?\d+)*)\):\(((?:0|\d+@\d+)(?:,(?:0|\d+@\d+))*)\)|(\d+):(0|\d+@\d+)")


def _coordinates(iterator: str, layout: str) -> list[tuple[int, ...]]:
    """The coordinates of a partition of an identity tensor, in element order, from its printed
    iterator (``(row, col)``) and its coalesced layout (``(2,2,22):(1@1,8@0,8@1)``: strides along a
    coordinate mode, ``k@mode``): element ``i`` is the iterator plus the layout at ``i``."""
    base = [int(x) for x in iterator.strip("()").split(",")]
    match = _FLAT.fullmatch(layout)
    assert match, f"not a flat static layout: {layout}"
    shape_text, stride_text = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    shape = [int(x) for x in shape_text.split(",")]
    strides = [(0, 0) if d == "0" else tuple(int(x) for x in d.split("@")) for d in stride_text.split(",")]
    points = []
    for i in range(int(np.prod(shape))):
        coord = list(base)
        for extent, (step, mode) in zip(shape, strides, strict=True):
            i, index = divmod(i, extent)
            coord[mode] += step * index
        points.append(tuple(coord))
    return points


@pytest.mark.filterwarnings("ignore:This static loop has 128 iterations")
@pytest.mark.parametrize("tile_n", [128, 176])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_p_operand_is_the_accumulator_in_place(
    tile_n: int, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every thread's QK^T accumulator values and its PV A-operand values are the same (row, key)
    pairs in the same order, so ``probs_to_operand`` is a cast, not a shuffle.

    Per thread, both partitions of an identity tensor have the same iterator and the same coalesced
    (static) layout, so element ``i`` of both is the same coordinate for every ``i``; the layouts,
    read in Python, cover the tile once, and they read as the DSL's own element reads do (two threads)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cutlass_dsl import CuTeDSL

    from mla_var3.kernel.cute_python.attention.fmha.common import TILE_M, make_tiled_mmas
    from mla_var3.kernel.tensors import cute_dtype

    partitions: list[tuple[str, str, str, str]] = []  # per thread: C iterator, C layout, A iterator, A layout
    read: dict[int, tuple[list, list]] = {}  # the DSL's element reads of two threads' partitions

    @cute.jit
    def probe() -> None:
        qk, pv = make_tiled_mmas(cute_dtype(dtype), tile_n)
        ident = cute.make_identity_tensor((TILE_M, tile_n))
        for tidx in cutlass.range_constexpr(128):
            c = qk.get_slice(tidx).partition_C(ident)
            a = pv.get_slice(tidx).partition_A(ident)
            partitions.append(
                (str(c.iterator), str(cute.coalesce(c.layout)), str(a.iterator), str(cute.coalesce(a.layout)))
            )
            if cutlass.const_expr(tidx in (0, 127)):
                read[tidx] = ([c[i] for i in range(cute.size(c))], [a[i] for i in range(cute.size(a))])

    monkeypatch.setattr(CuTeDSL._get_dsl().envar, "arch", "sm_90a")  # WGMMA atoms are sm_90a-only
    probe()
    for tidx, (c_iter, c_layout, a_iter, a_layout) in enumerate(partitions):
        assert (a_iter, a_layout) == (c_iter, c_layout), f"thread {tidx}: A {a_iter} o {a_layout}, C {c_iter} o {c_layout}"
    coords = [_coordinates(iterator, layout) for iterator, layout, _, _ in partitions]
    for tidx, (acc, operand) in read.items():
        assert [tuple(x) for x in acc] == coords[tidx] == [tuple(x) for x in operand], f"thread {tidx}"
    assert len({x for thread in coords for x in thread}) == TILE_M * tile_n == sum(map(len, coords))


def test_shape_rules() -> None:
    plan = get_plan("fmha_hopper_v1")()
    with pytest.raises(UnsupportedShapeError, match="needs --d 128"):
        plan.check_shape({**ISSUE_SHAPE, "d": 64, "causal": 0})
    assert plan.static_shape({**ISSUE_SHAPE, "causal": 1}) == {"d": 128, "causal": 1}


def test_variants_share_the_cutlass_workload() -> None:
    from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported.plan import CutlassHopperFmhaPlan

    reference = get_plan("cutlass_hopper_fmha")()
    for name in VARIANTS:
        plan = get_plan(name)()
        assert isinstance(plan, CutlassHopperFmhaPlan) and plan.upstream_example() is None
        assert (
            plan.archs == ("sm_90a",) and plan.layer == "attention" and plan.dtypes == ("bfloat16", "float16")
        )
        assert plan.default_shape() == reference.default_shape()
        for causal in (0, 1):
            shape = {**ISSUE_SHAPE, "causal": causal}
            assert plan._algorithmic_flops_bytes(shape) == reference._algorithmic_flops_bytes(shape)


# --- on the H200 ---------------------------------------------------------------------------------
GPU_SHAPES = (
    *(
        {"b": 2, "s": n, "t": n, "h": 4, "hk": 2, "d": 128, "causal": c}
        for n in (1, 127, 129)
        for c in (0, 1)
    ),
    {"b": 1, "s": 200, "t": 333, "h": 2, "hk": 2, "d": 128, "causal": 1},
    {"b": 1, "s": 333, "t": 200, "h": 2, "hk": 1, "d": 128, "causal": 1},
    {"b": 1, "s": 1000, "t": 1000, "h": 2, "hk": 2, "d": 128, "causal": 0},
    *({"b": 1, "s": 8192, "t": 8192, "h": 2, "hk": 2, "d": 128, "causal": c} for c in (0, 1)),
)


def _run(name: str, dtype: str, shape: dict[str, int], inputs: dict | None = None, tile_n: int = 128):
    import torch

    from mla_var3.kernel.check import poison
    from mla_var3.kernel.compile_cache import compile_cached

    plan = get_plan(name)(dtype)
    config = {"tile_n": tile_n}
    compiled = compile_cached(plan, config, shape, SM90A).compiled
    inputs = inputs if inputs is not None else plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    poison(outputs)
    plan.plan(config).launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    return plan, inputs, outputs


def _skip_unless_sm90() -> None:
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", VARIANTS)
def test_matches_reference_on_gpu(name: str, dtype: str) -> None:
    from mla_var3.kernel.check import compare

    _skip_unless_sm90()
    for shape in GPU_SHAPES:
        plan, inputs, outputs = _run(name, dtype, shape)
        ref = plan.reference_fn(inputs)
        check = compare({k: outputs[k] for k in ref}, ref, plan.tolerance())
        assert check.passed, f"{name} {dtype} {shape}: {check.summary()}"


@pytest.mark.gpu
def test_tile_176_matches_reference_on_gpu() -> None:
    from mla_var3.kernel.check import compare

    _skip_unless_sm90()
    for shape in GPU_SHAPES[:8]:
        plan, inputs, outputs = _run("fmha_hopper_v1", "bfloat16", shape, tile_n=176)
        ref = plan.reference_fn(inputs)
        check = compare({k: outputs[k] for k in ref}, ref, plan.tolerance())
        assert check.passed, f"tile 176 {shape}: {check.summary()}"


@pytest.mark.gpu
def test_v3_is_bit_identical_to_v2() -> None:
    """Skipped rescales would have multiplied by exactly 1."""
    import torch

    _skip_unless_sm90()
    for shape in (GPU_SHAPES[1], GPU_SHAPES[-1]):
        _, inputs, v2 = _run("fmha_hopper_v2", "bfloat16", shape)
        _, _, v3 = _run("fmha_hopper_v3", "bfloat16", shape, inputs=inputs)
        assert all(torch.equal(v2[k], v3[k]) for k in v2), shape
