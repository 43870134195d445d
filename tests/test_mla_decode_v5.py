"""``mla_decode_v5`` (v4 + longest-first dispatch + a combine over column quarters): on the CPU it
compiles for sm_90a without spills, keeps v4's attention SASS (the same WGMMA, TMA and barrier
counts: only the sequence lookup changed), its combine has several splits' loads in flight, the
dispatch order is the lengths sorted longest first, and -- the reason v5 exists -- a greedy model of
the group's variable-length shape puts longest-first dispatch near a perfect balance where batch
order is far from it. On an H200 it matches the fp32 reference where v4 is checked, plus unsorted
variable lengths.

A wrong barrier count would hang the GPU rather than fail: run the ``gpu`` tests under ``timeout``.
"""

from __future__ import annotations

import heapq

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.registry import get_plan
from mla_var3.kernel.workloads.mla import mla_shape, sequence_lengths

SM90A = Arch.parse("sm_90a")
NAME = "mla_decode_v5"
SPLIT = mla_shape(b=4, t=1000, page=64)  # 8 query tiles: 16 splits and the combine
VARLEN_GROUP_SHAPE = mla_shape(b=128, t=8192, h=128, varlen=1)  # 256 CTAs, no split


@pytest.fixture(scope="module")
def compiled_split():
    from mla_var3.kernel.compile_cache import compile_cached

    plan = get_plan(NAME)("bfloat16")
    return compile_cached(plan, plan.default_config(), SPLIT, SM90A, need_function=False).compiled


def _kernels(cubin: bytes) -> dict[str, list[str]]:
    from mla_var3.analysis.sass import disassemble

    text = disassemble(cubin)
    start = text.index("attention_kernel")
    combine = text.find("combine_quarters_kernel")
    assert combine >= 0, "the combine over column quarters is missing"
    first, second = sorted((start, combine))
    parts = {text[first : first + 40]: text[first:second], text[second : second + 40]: text[second:]}
    return {("combine" if "combine" in k else "attention"): v.splitlines() for k, v in parts.items()}


def test_compiles_without_spills(compiled_split) -> None:
    from mla_var3.analysis.resources import resource_usage

    kernels = {
        ("combine" if "combine" in k.kernel else "attention"): k for k in resource_usage(compiled_split.cubin)
    }
    assert set(kernels) == {"attention", "combine"}
    for k in kernels.values():
        assert k.local_bytes == 0 and k.stack_bytes == 0
    assert kernels["attention"].registers <= 255


def test_attention_sass_is_v4s(compiled_split) -> None:
    """The seesaw is untouched: v4's WGMMA shapes and counts, its 45 TMA boxes (Q 9, pair 0 18, refills
    18), its wait depths."""
    import re

    lines = _kernels(compiled_split.cubin)["attention"]
    shapes = [m.group(1) for line in lines if (m := re.search(r"HGMMA\.(\d+x\d+x\d+)", line))]
    assert shapes.count("64x64x16") == 2 * (36 + 36) and shapes.count("64x256x16") == 2 * (4 + 4)
    assert sum("UTMALDG" in line for line in lines) == 45
    depths = sorted(
        int(m.group(1), 16)
        for line in lines
        if (m := re.search(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x\w+)", line))
    )
    assert depths == [0, 0, 0, 0, 0, 0, 1, 4]


def test_combine_has_several_splits_in_flight(compiled_split) -> None:
    """The unrolled split loop: ``SPLIT_UNROLL`` 16-byte partial loads per trip, all but the last issued
    before the first FMA (ptxas interleaves the last one; v4's combine loads one split, then branches)."""
    from mla_var3.kernel.cute_python.mla.decode.v5.kernel import SPLIT_UNROLL

    lines = _kernels(compiled_split.cubin)["combine"]
    ops = [
        ("load" if "LDG.E.128" in line else "fma") for line in lines if "LDG.E.128" in line or "FFMA" in line
    ]
    assert ops.count("load") >= SPLIT_UNROLL
    run = 0
    for op in ops:
        if op != "load":
            break
        run += 1
    assert run >= SPLIT_UNROLL - 1, f"only {run} partial loads before the first FFMA"
    assert any("ACQBULK" in line for line in lines), "no griddepcontrol.wait: the PDL combine would race"


def test_dispatch_order_is_longest_first() -> None:
    import torch

    from mla_var3.kernel.cute_python.mla.decode.v5.plan import lengths_and_order

    seqlens = torch.tensor([5, 9, 1, 9, 3], dtype=torch.int32)
    assert lengths_and_order(seqlens).tolist() == [5, 9, 1, 9, 3, 1, 3, 0, 4, 2]
    fixed = torch.full((6,), 8192, dtype=torch.int32)
    assert lengths_and_order(fixed)[6:].tolist() == list(range(6))  # fixed lengths: batch order


def _makespan(costs: list[int], sms: int = 132, per_cta: int = 2) -> int:
    """Greedy dispatch in list order to the first free SM (the hardware's CTA order), in KV blocks,
    with ``per_cta`` blocks' worth of fixed cost per CTA."""
    free = [0] * sms
    for cost in costs:
        heapq.heapreplace(free, free[0] + cost + per_cta)
    return max(free)


def test_longest_first_balances_the_varlen_group_shape() -> None:
    lengths = sequence_lengths(VARLEN_GROUP_SHAPE)
    tiles = 2  # h_q 128 = two query tiles of 64 per sequence
    blocks = [-(-n // 64) for n in lengths for _ in range(tiles)]
    ideal = (sum(blocks) + 2 * len(blocks)) / 132
    batch_order = _makespan(blocks) / ideal
    longest_first = _makespan(sorted(blocks, reverse=True)) / ideal
    assert batch_order > 1.5 and longest_first < 1.1, (batch_order, longest_first)


def test_registered_for_sm90a() -> None:
    plan = get_plan(NAME)
    assert plan.archs == ("sm_90a",) and plan.layer == "mla" and plan.dtypes == ("bfloat16", "float16")


GPU_SHAPES = (
    mla_shape(b=1, t=64, h=128),  # one block: v4's virtual second block
    mla_shape(b=2, t=192, h=128, page=16),
    mla_shape(b=1, t=8192, h=128),  # the latency group's b = 1: 66 splits through the quarter combine
    mla_shape(b=8, t=8192, h=128),
    mla_shape(b=4, t=1000, h=128, page=128),  # half the splits empty: weights of exp2(-inf)
    mla_shape(b=3, s=2, t=63, h=128, page=16, varlen=1),
    mla_shape(b=16, t=3000, h=128, varlen=1),  # unsorted lengths, the order table reorders CTAs
    mla_shape(b=2, s=2, t=4097, h=16, page=128),
    mla_shape(b=128, t=512, h=128, varlen=1),  # the varlen group grid at a short length
)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_matches_reference_on_gpu(dtype: str) -> None:
    from test_mla_decode_cute import check_on_gpu

    check_on_gpu(NAME, dtype, GPU_SHAPES)
