"""``mla_decode_v4`` (FlashMLA's seesaw schedule in the CuTe DSL): on the CPU it compiles for sm_90a
without spills, and its SASS has what the design depends on -- the exact WGMMA counts and wait
depths (no wait ptxas added, none between the pieces of ``Q K^T``), one TMA box per 64-column
piece, per-piece mbarrier waits, PDL only with a combine; split shares are even and the grid one
wave; the piece refills cover every piece of each stage once per pair. On an H200 it matches the
fp32 reference at odd block counts (the virtual block), every page size, splits, s_q = 2 and
variable lengths.

A wrong barrier count would hang the GPU rather than fail: run the ``gpu`` tests under ``timeout``.
"""

from __future__ import annotations

import re

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.registry import get_plan
from mla_var3.kernel.workloads.mla import MLA_CHECK_SHAPES, mla_shape

SM90A = Arch.parse("sm_90a")
NAME = "mla_decode_v4"
SPLIT = mla_shape(b=4, t=1000, page=64)  # 8 query tiles: 16 splits and the PDL combine
NO_SPLIT = mla_shape(b=128, t=8192, page=64)  # the compute-bound group shape: 256 tiles, one split
PIECE_BOXES = 9 + 2 * 9 + 2 * 9  # Q (9 boxes of 64 columns), pair 0's two stages, one pair's refills


def _compile(shape: dict[str, int], dtype: str = "bfloat16"):
    from mla_var3.kernel.compile_cache import compile_cached

    plan = get_plan(NAME)(dtype)
    return compile_cached(plan, plan.default_config(), shape, SM90A, need_function=False).compiled


def _attention_sass(cubin: bytes) -> list[str]:
    """The attention kernel's SASS lines (the cubin also holds the combine kernel)."""
    from mla_var3.analysis.sass import disassemble

    text = disassemble(cubin)
    start = text.index("attention_kernel")
    end = text.find("combine_pdl_kernel", start)
    return text[start : end if end > 0 else len(text)].splitlines()


@pytest.fixture(scope="module", params=["split", "no_split"])
def compiled(request: pytest.FixtureRequest) -> tuple[str, object]:
    return request.param, _compile(SPLIT if request.param == "split" else NO_SPLIT)


def test_compiles_without_spills(compiled: tuple[str, object]) -> None:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    name, result = compiled
    ops = opcode_histogram(instruction_histogram(result.cubin, "sm_90a"))
    assert "LDL" not in ops and "STL" not in ops, "register spills (counted in the SASS, not only LOCAL)"
    kernels = {("combine" if "combine" in k.kernel else "attention"): k for k in resource_usage(result.cubin)}
    assert set(kernels) == ({"attention", "combine"} if name == "split" else {"attention"})
    for k in kernels.values():
        assert k.local_bytes == 0 and k.stack_bytes == 0
    # 256 threads, one CTA per SM: the whole register file, 255 per thread, no setmaxnreg.
    assert kernels["attention"].registers <= 255
    assert "USETMAXREG" not in ops


def test_wgmma_counts_and_wait_depths(compiled: tuple[str, object]) -> None:
    """Per warpgroup: 36 k-steps of ``Q K^T`` before the loop and 36 + 4 (local P) + 4 (remote P) in
    it; the only waits are the ones the schedule places (WG0: 0 after the prologue, 0 after
    ``P0 V0L``, 4 before stage 1's refill, 0 at the end; WG1: 0, then 1, 0, 0) -- ptxas added none,
    so nothing is serialized and no WGMMA is in flight across the loop's back edge."""
    lines = _attention_sass(compiled[1].cubin)
    shapes = [m.group(1) for line in lines if (m := re.search(r"HGMMA\.(\d+x\d+x\d+)", line))]
    assert shapes.count("64x64x16") == 2 * (36 + 36)
    assert shapes.count("64x256x16") == 2 * (4 + 4)
    depths = sorted(
        int(m.group(1), 16)
        for line in lines
        if (m := re.search(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x\w+)", line))
    )
    assert depths == [0, 0, 0, 0, 0, 0, 1, 4]


def test_each_piece_is_awaited_right_before_its_k_steps(compiled: tuple[str, object]) -> None:
    """Per-piece barriers in the SASS: each of the 4 ``Q K^T`` sites (2 per warpgroup) waits 9
    times, each wait directly followed by its piece's first 64x64 k-step (no wait for the whole
    stage first, as v2 does)."""
    lines = [
        "wait" if "SYNCS.PHASECHK" in line else "qk"
        for line in _attention_sass(compiled[1].cubin)
        if "SYNCS.PHASECHK" in line or "HGMMA.64x64x16" in line
    ]
    assert sum(a == "wait" and b == "qk" for a, b in zip(lines, lines[1:], strict=False)) == 4 * 9


def test_one_tma_box_per_piece(compiled: tuple[str, object]) -> None:
    lines = _attention_sass(compiled[1].cubin)
    assert sum("UTMALDG" in line for line in lines) == PIECE_BOXES


def test_pdl_only_with_a_combine(compiled: tuple[str, object]) -> None:
    from mla_var3.analysis.sass import disassemble

    name, result = compiled
    text = disassemble(result.cubin)
    assert ("PREEXIT" in text) == ("ACQBULK" in text) == (name == "split")


def test_page_16_and_fp16_compile_without_spills() -> None:
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    result = _compile(mla_shape(b=4, t=1000, page=16), "float16")
    ops = opcode_histogram(instruction_histogram(result.cubin, "sm_90a"))
    assert "LDL" not in ops and "STL" not in ops
    assert ops["UTMALDG"] == 9 + 4 * (PIECE_BOXES - 9)  # a 64-row piece spans 4 pages of 16


def test_smem_is_q_and_two_stages() -> None:
    from mla_var3.kernel.cute_python.mla.decode.common import DSL_STATIC_SMEM, smem_capacity
    from mla_var3.kernel.cute_python.mla.decode.v4.kernel import smem_bytes

    assert smem_bytes() == 3 * 72 * 1024 + 3 * 1024 <= smem_capacity()
    assert _compile(NO_SPLIT).dynamic_smem_bytes + DSL_STATIC_SMEM <= 227 * 1024


def test_split_shares_are_even_and_the_grid_one_wave() -> None:
    """v1's rule (rounded down since session 3) keeps one wave; v4's even shares (pairs) may leave
    the last splits empty, never a block unassigned."""
    plan = get_plan(NAME)()
    assert plan.splits(mla_shape(b=8, t=8192)) == 8  # 128 CTAs; rounding up gave 9 (144, two waves)
    for b in (1, 4, 8, 128):
        assert b * 2 * plan.splits(mla_shape(b=b, t=8192)) <= 132 or plan.splits(mla_shape(b=b, t=8192)) == 1
    assert plan.static_shape(mla_shape(b=8, t=8192)) == {"page": 64, "split": 1}
    assert plan.static_shape(NO_SPLIT) == {"page": 64, "split": 0}
    for kv_blocks, splits in ((128, 8), (16, 16), (15, 4), (1, 3), (7, 1)):
        per_split = -(-kv_blocks // (2 * splits)) * 2  # MlaDecodeV4._kv_range
        shares = [(s * per_split, min(s * per_split + per_split, kv_blocks)) for s in range(splits)]
        assert sum(max(0, end - first) for first, end in shares) == kv_blocks
        assert all((end - first) % 2 == 0 or end == kv_blocks for first, end in shares if end > first)


def test_refills_cover_each_piece_once_per_pair() -> None:
    """The hang analysis of the module docstring, on its constants: every piece of each stage is
    loaded exactly once per pair (one arrival per phase on barriers of count 1), each warpgroup's
    ``Q K^T`` waits every piece of its stage once, and WG0's wait depth before refilling stage 1
    equals the k-step groups it issued after ``P1 V1L``."""
    from mla_var3.kernel.cute_python.mla.decode.v4 import kernel as k

    assert sorted(k.WG0_REFILL_STAGE0 + k.WG1_REFILL_STAGE0) == list(range(k.PIECES))
    assert sorted(k.WG0_REFILL_STAGE1 + k.WG1_REFILL_STAGE1) == list(range(k.PIECES))
    assert sorted(k.WG1_QK_ORDER) == list(range(k.PIECES)) == list(k.ALL_PIECES)
    assert k.P_PIECE in k.WG1_REFILL_STAGE0 and k.P_PIECE in k.WG0_REFILL_STAGE1  # P's reader refills it
    assert k.PIECES * k.PIECE == 576 and k.K_STEPS * 16 == k.PIECE


def test_registered_for_sm90a() -> None:
    plan = get_plan(NAME)
    assert plan.archs == ("sm_90a",) and plan.layer == "mla" and plan.dtypes == ("bfloat16", "float16")


GPU_SHAPES = (
    *MLA_CHECK_SHAPES,
    mla_shape(b=1, t=64, h=128),  # one block: a virtual second block in the only pair
    mla_shape(b=1, t=128, h=128),  # exactly one pair
    mla_shape(b=2, t=192, h=128, page=16),  # three blocks: a full pair, then a virtual block
    mla_shape(b=8, t=8192, h=128),  # the one-wave split rule: 8 splits of 16 blocks, PDL combine
    mla_shape(b=4, t=1000, h=128, page=128),  # 16 blocks, 16 splits: even shares of 2, half the splits empty
    mla_shape(b=3, s=2, t=63, h=128, page=16, varlen=1),
    mla_shape(b=2, s=2, t=4097, h=16, page=128),
    mla_shape(b=128, t=512, h=128),  # the group's grid (256 CTAs, no split) at a short length
)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_matches_reference_on_gpu(dtype: str) -> None:
    from test_mla_decode_cute import check_on_gpu

    check_on_gpu(NAME, dtype, GPU_SHAPES)


@pytest.mark.gpu
def test_repeated_launches_agree_on_gpu() -> None:
    """Ten back-to-back launches (the PDL combine overlapping the next attention grid's start, the
    barriers' phases restarting in every CTA) give bit-identical outputs."""
    import torch

    from mla_var3.kernel.compile_cache import compile_cached

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = get_plan(NAME)("bfloat16")
    kernel = plan.plan(plan.default_config())
    shape = mla_shape(b=8, t=2000, h=128)
    compiled = compile_cached(plan, plan.default_config(), shape, SM90A).compiled
    inputs = plan.prepare_inputs(shape)
    outputs = plan.allocate_outputs(inputs, shape)
    kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    first = outputs["o"].clone()
    for _ in range(10):
        kernel.launch(compiled, inputs, outputs)
    torch.cuda.synchronize()
    assert torch.equal(outputs["o"], first)
