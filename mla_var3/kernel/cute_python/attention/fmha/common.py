"""Building blocks our SM90 FMHA forward variants share: sizes, the SMEM budget, the KV-block
schedule (with causal tile skipping), and the device steps (scores, online softmax, P as an
operand in registers, O, LSE).

Vocabulary of every variant: a CTA owns a **query block** of ``CTA_M = 128`` rows of one (batch,
head), as two 64-row **query tiles**, one per consumer warpgroup (one WGMMA M each), and walks
the keys of that head in **KV blocks** of ``tile_n`` rows (K ``(tile_n, d)``, V viewed
``(d, tile_n)``, d = 128). Per KV block a warpgroup computes ``S = Q K^T`` (64 x tile_n, fp32 in
registers), the online-softmax step, ``P`` converted in place into the A operand of the next
WGMMA (never stored to SMEM), and ``O += P V`` (64 x 128, fp32 in registers).

KV blocks are walked **last to first**, so the blocks that need an elementwise mask (the causal
diagonal, a partial last block) come first: a run of ``masked`` steps, then ``n_blocks - masked``
steps compiled without mask code. Blocks above the diagonal are never in the range at all
(:func:`kv_schedule`); it is plain integer arithmetic, so the CPU tests run it on Python ints
and the kernels trace the same function on ``Int32``.
"""

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, warpgroup
from cutlass.tensor_utils import LayoutEnum

from mla_var3.kernel.cute_python.mla.decode.common import acc_mn, quad_max, quad_sum

WARPGROUP_THREADS = 128
TILE_M = 64  # query rows per consumer warpgroup: one WGMMA M
CONSUMER_WGS = 2
CTA_M = CONSUMER_WGS * TILE_M  # query rows per CTA
HEAD_DIM = 128
LOG2_E = 1.4426950408889634
SMEM_ALIGN = 1024  # 128-byte swizzle atoms repeat every 1 KiB
MBARRIER_BYTES = 8
DSL_STATIC_SMEM = 1024  # every DSL kernel holds 1 KiB of static SMEM (cuobjdump: SHARED:1024)
TILE_NS = (128, 176)  # KV block sizes the variants take (WGMMA N: a multiple of 16 up to 256)


def smem_capacity() -> int:
    """Dynamic SMEM one sm_90 block may use: what the DSL reports, less its static 1 KiB."""
    from cutlass.memory import get_smem_capacity_in_bytes

    return get_smem_capacity_in_bytes("sm_90") - DSL_STATIC_SMEM


def _align(nbytes: int, to: int = SMEM_ALIGN) -> int:
    return (nbytes + to - 1) // to * to


# --8<-- [start:smem_budget]
@dataclass(frozen=True)
class FmhaSmemBudget:
    """Bytes of dynamic SMEM per CTA, by buffer: the two Q tiles (reused for O at the end),
    ``stages`` K blocks, ``stages`` V blocks, and the mbarriers."""

    q: int
    k: int
    v: int
    barriers: int

    @property
    def total(self) -> int:
        return self.q + self.k + self.v + self.barriers


def smem_budget(tile_n: int, stages: int, elem_bytes: int = 2, d: int = HEAD_DIM) -> FmhaSmemBudget:
    """Q ``2 x 64 x d`` + ``stages`` x (K ``tile_n x d`` + V ``d x tile_n``) + 2 Q, 2 x 2 x stages KV barriers.

    At d = 128, 16-bit: Q is 32 KiB and each K or V block ``tile_n / 4`` KiB, so tile_n = 128 fits
    3 stages (32 + 6 x 32 + 1 = 225 KiB) and tile_n = 176 fits 2 (32 + 4 x 44 + 1 = 209 KiB).
    """
    block = _align(tile_n * d * elem_bytes)
    return FmhaSmemBudget(
        q=_align(CTA_M * d * elem_bytes),
        k=block * stages,
        v=block * stages,
        barriers=_align((2 + 4 * stages) * MBARRIER_BYTES),
    )


def max_stages(tile_n: int, elem_bytes: int = 2) -> int:
    """The most K/V stages that fit beside the Q tiles in the SMEM the DSL reports for sm_90."""
    stages = 1
    while smem_budget(tile_n, stages + 1, elem_bytes).total <= smem_capacity():
        stages += 1
    return stages


# --8<-- [end:smem_budget]


# --8<-- [start:kv_schedule]
def kv_schedule(row0: Any, seqlen_k: Any, tile_n: int, causal: bool, minimum: Any = min) -> tuple[Any, Any]:
    """``(n_blocks, masked)`` for the query block whose first row is ``row0``.

    The CTA walks KV blocks ``n_blocks - 1`` down to 0; the first ``masked`` steps need an
    elementwise mask. Without causal masking every block is visible and only a partial last
    block is masked. With it (top-left aligned: query ``i`` sees keys ``0..i``) the last row of
    the block, ``row0 + CTA_M - 1``, bounds the walk, so blocks entirely above the diagonal are
    never loaded or computed; a block needs the mask once one of its keys lies past ``row0``.
    ``minimum`` is ``min`` on Python ints and ``cutlass.min`` on traced ``Int32``.
    """
    blocks_k = (seqlen_k + tile_n - 1) // tile_n
    first_partial = seqlen_k // tile_n  # blocks from here on hold keys past seqlen_k (none if it divides)
    if causal:
        n_blocks = minimum((row0 + CTA_M + tile_n - 1) // tile_n, blocks_k)
        first_masked = minimum((row0 + 1) // tile_n, first_partial)
    else:
        n_blocks = blocks_k
        first_masked = first_partial
    return n_blocks, n_blocks - minimum(first_masked, n_blocks)


# --8<-- [end:kv_schedule]


def visible_keys(row: int, seqlen_k: int, causal: bool) -> int:
    """Keys query ``row`` sees: all of them, or ``0..row`` under the causal mask (its column limit)."""
    return min(row + 1, seqlen_k) if causal else seqlen_k


# --- host side (inside @cute.jit) --------------------------------------------------------------
def make_tiled_mmas(dtype: type[cutlass.Numeric], tile_n: int) -> tuple[cute.TiledMma, cute.TiledMma]:
    """WGMMA for ``S = Q K^T`` (64 x tile_n, Q and K from SMEM, both K-major) and ``O += P V``
    (64 x 128, P from registers, V from SMEM with d contiguous: MN-major)."""
    qk = sm90_utils.make_trivial_tiled_mma(
        dtype,
        dtype,
        OperandMajorMode.K,
        OperandMajorMode.K,
        cutlass.Float32,
        (1, 1, 1),
        tiler_mn=(TILE_M, tile_n),
    )
    pv = sm90_utils.make_trivial_tiled_mma(
        dtype,
        dtype,
        OperandMajorMode.K,
        OperandMajorMode.MN,
        cutlass.Float32,
        (1, 1, 1),
        tiler_mn=(TILE_M, HEAD_DIM),
        a_source=warpgroup.OperandSource.RMEM,
    )
    return qk, pv


def make_smem_layouts(dtype: type[cutlass.Numeric], tile_n: int, stages: int) -> tuple[Any, Any, Any]:
    """Swizzled layouts: Q ``(64, d, 2)`` (one tile per consumer warpgroup; O reuses it), K
    ``(tile_n, d, stages)`` K-major and V ``(d, tile_n, stages)`` with d contiguous (MN-major)."""
    q = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, (TILE_M, tile_n, HEAD_DIM), dtype, CONSUMER_WGS)
    k = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, (TILE_M, tile_n, HEAD_DIM), dtype, stages)
    v = sm90_utils.make_smem_layout_b(LayoutEnum.COL_MAJOR, (TILE_M, HEAD_DIM, tile_n), dtype, stages)
    return q, k, v


# --- device side -------------------------------------------------------------------------------
@cute.jit
def issue_qk(
    dtype: cutlass.Constexpr,
    tile_n: cutlass.Constexpr,
    acc_s: cute.Tensor,
    tSrQ: cute.Tensor,
    tSrK: cute.Tensor,
) -> None:
    """Issue ``S = Q K^T`` for one Q tile ``(MMA, 1, d/16)`` and one K stage: d/16 WGMMAs, one
    commit group, still in flight on return. The first k-step overwrites S (no zero fill)."""
    # A TiledMma of our own: its ACCUMULATE field is set per k-step, and a field set inside a
    # helper must not escape into the caller's loop.
    qk_mma, _ = make_tiled_mmas(dtype, tile_n)
    warpgroup.fence()
    qk_mma.set(warpgroup.Field.ACCUMULATE, False)
    for kb in cutlass.range_constexpr(cute.size(tSrQ, mode=[2])):
        cute.gemm(qk_mma, acc_s, tSrQ[(None, None, kb)], tSrK[(None, None, kb)], acc_s)
        qk_mma.set(warpgroup.Field.ACCUMULATE, True)
    warpgroup.commit_group()


@cute.jit
def issue_pv(
    dtype: cutlass.Constexpr,
    tile_n: cutlass.Constexpr,
    acc_o: cute.Tensor,
    tOrP: cute.Tensor,
    tOrV: cute.Tensor,
) -> None:
    """Issue ``O += P V`` with P from registers ``(MMA, 1, tile_n/16)`` and one V stage: one
    commit group, still in flight on return."""
    _, pv_mma = make_tiled_mmas(dtype, tile_n)
    warpgroup.fence()
    pv_mma.set(warpgroup.Field.ACCUMULATE, True)
    for kb in cutlass.range_constexpr(cute.size(tOrP, mode=[2])):
        cute.gemm(pv_mma, acc_o, tOrP[(None, None, kb)], tOrV[(None, None, kb)], acc_o)
    warpgroup.commit_group()


def row_reduce(row: cute.Tensor, combine: Callable[[Any, Any], Any]) -> Any:
    """``combine`` over one accumulator row of this thread (at least four values), as four
    independent chains: a single chain of 32 dependent steps is latency-bound with three warps per
    scheduler. Plain Python, unrolled while the caller is traced."""
    parts = [row[j] for j in range(4)]
    for j in range(4, cute.size(row)):
        parts[j % 4] = combine(parts[j % 4], row[j])
    return combine(combine(parts[0], parts[1]), combine(parts[2], parts[3]))


def select(cond: Any, if_value: Any, else_value: Any) -> cutlass.Float32:
    """``if_value if cond else else_value`` as one select instruction. A dynamic ``if`` that assigns
    inside an unrolled loop makes the DSL carry every live value through the branch (thousands of
    ``selp`` for a score tile), and ptxas then serializes the WGMMAs in flight around it."""
    return cutlass.Float32(cutlass.select_(cond, if_value, else_value))


# --8<-- [start:softmax_step]
@cute.jit
def apply_mask(s_mn: cute.Tensor, c_mn: cute.Tensor, col_limit: cute.Tensor) -> None:
    """Drop the scores a row may not see: column ``j`` of row ``i`` becomes -inf when
    ``j >= col_limit[i]`` (the row's visible keys less the block's first key)."""
    for i in cutlass.range_constexpr(cute.size(s_mn, mode=[0])):
        for j in cutlass.range_constexpr(cute.size(s_mn, mode=[1])):
            s_mn[i, j] = select(c_mn[i, j][1] >= col_limit[i], -cutlass.Float32.inf, s_mn[i, j])


@cute.jit
def softmax_step(
    s_mn: cute.Tensor,
    row_max: cute.Tensor,
    row_sum: cute.Tensor,
    factor: cute.Tensor,
    scale_log2: cutlass.Constexpr,
) -> None:
    """One KV block of online softmax on this thread's rows of ``S`` (in place: S becomes P).

    ``row_max``: running max of raw scores; ``row_sum``: this thread's partial sum of
    ``exp2((s - max) * scale_log2)`` (the quad reduces it once, at the end); ``factor[i]``
    receives ``exp2((old_max - new_max) * scale_log2)``, what O's row must be multiplied by
    before this block's ``P V`` is added (exactly 1 when the max did not move). A row with
    nothing visible yet keeps max = -inf and computes with 0, so no NaN appears.
    """
    minus_inf = -cutlass.Float32.inf
    for i in cutlass.range_constexpr(cute.size(s_mn, mode=[0])):
        new_max = cute.arch.fmax(row_max[i], quad_max(row_reduce(s_mn[i, None], cute.arch.fmax)))
        base = select(new_max == minus_inf, 0.0, new_max)
        base_scaled = base * scale_log2
        # The difference first: an unmoved max gives exp2(0) = 1 exactly (as old * c - new * c
        # would not once contracted into an FMA), which v3's skip relies on.
        factor[i] = cute.math.exp2((row_max[i] - base) * scale_log2, fastmath=True)
        for j in cutlass.range_constexpr(cute.size(s_mn, mode=[1])):
            s_mn[i, j] = cute.math.exp2(s_mn[i, j] * scale_log2 - base_scaled, fastmath=True)
        row_sum[i] = row_sum[i] * factor[i] + row_reduce(s_mn[i, None], operator.add)
        row_max[i] = new_max


# --8<-- [end:softmax_step]


# --8<-- [start:probs_to_operand]
@cute.jit
def probs_to_operand(acc_s: cute.Tensor, tOrP: cute.Tensor) -> None:
    """P (fp32, the QK accumulator) into the 16-bit A operand of the PV WGMMA, in registers.

    For 16-bit types a thread's accumulator values of a 64 x N tile and its A-operand values of
    a 64 x N (M x K) tile are the same (row, column) pairs in the same order -- 2 columns, 2
    rows 8 apart, then the next 8 columns -- so the conversion is an elementwise cast through a
    view of the operand with the accumulator's layout (``tests/test_fmha_hopper.py`` checks the
    coordinates). No SMEM round trip, no shuffles.
    """
    cute.make_tensor(tOrP.iterator, acc_s.layout).store(acc_s.load().to(tOrP.element_type))


# --8<-- [end:probs_to_operand]


@cute.jit
def scale_rows(o_mn: cute.Tensor, factors: cute.Tensor) -> None:
    """``o[i, :] *= factors[i]`` on this thread's rows of an accumulator view."""
    for i in cutlass.range_constexpr(cute.size(o_mn, mode=[0])):
        for j in cutlass.range_constexpr(cute.size(o_mn, mode=[1])):
            o_mn[i, j] = o_mn[i, j] * factors[i]


@cute.jit
def finish_rows(
    row_max: cute.Tensor,
    row_sum: cute.Tensor,
    inv_sum: cute.Tensor,
    lse: cute.Tensor,
    scale: cutlass.Constexpr,
) -> None:
    """After the last block: the row sums over the quad, ``1 / sum`` (0 for an empty row) and the
    natural-log LSE ``max * scale + ln(sum)`` (-inf for an empty row, as ``torch.logsumexp``)."""
    for i in cutlass.range_constexpr(cute.size(row_sum)):
        total = quad_sum(row_sum[i])
        inv_sum[i] = 0.0
        lse[i] = -cutlass.Float32.inf
        if total > 0.0:
            inv_sum[i] = 1.0 / total
            lse[i] = row_max[i] * scale + cute.math.log(total, fastmath=True)


__all__ = [
    "CONSUMER_WGS",
    "CTA_M",
    "HEAD_DIM",
    "LOG2_E",
    "TILE_M",
    "TILE_NS",
    "WARPGROUP_THREADS",
    "FmhaSmemBudget",
    "acc_mn",
    "apply_mask",
    "finish_rows",
    "issue_pv",
    "issue_qk",
    "kv_schedule",
    "make_smem_layouts",
    "make_tiled_mmas",
    "max_stages",
    "probs_to_operand",
    "row_reduce",
    "scale_rows",
    "select",
    "smem_budget",
    "smem_capacity",
    "softmax_step",
    "visible_keys",
]
