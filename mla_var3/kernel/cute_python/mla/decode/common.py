"""Building blocks our CuTe DSL MLA decode variants share (sm_90a): sizes, SMEM budget, tensor
views, paged-KV TMA, the WGMMA accumulator's row/column view and the online-softmax step.

Vocabulary of every variant: a CTA owns a 64-row **query tile** of one sequence (the
``h_q * s_q`` query rows packed token-major: row ``r`` is token ``r // h_q``, head
``r % h_q``) and walks that sequence's KV cache in **KV blocks** of 64 rows. A KV block is
one ``64 x 576`` SMEM tile: K for ``S = Q K^T`` and, through a transposed view of its first
512 columns, V for ``O += P V`` -- the cache is read once. The 64 x 512 fp32 output is too
big for one warpgroup's registers (256 per thread), so two warpgroups each hold a
``64 x 256`` half.

Paged KV: the cache is ``(pages, page, 576)``; KV row ``n`` of sequence ``b`` lives in
physical page ``block_table[b, n // page]`` at row ``n % page``. One TMA copy moves
``min(page, 64)`` rows of one page (the page index is a TMA coordinate), so a KV block is one
copy for pages of 64 or more and ``64 / page`` copies for smaller pages.
"""

from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, cpasync
from cutlass.tensor_utils import LayoutEnum

from mla_var3.kernel.cute_python.mla.decode.plan_common import TILE_M, TILE_N
from mla_var3.kernel.workloads.mla import D_LATENT, D_QK, SOFTMAX_SCALE

WARPGROUP_THREADS = 128
V_HALF = D_LATENT // 2  # output columns per consumer warpgroup
SMEM_ALIGN = 1024  # 128-byte swizzle atoms repeat every 1 KiB
MBARRIER_BYTES = 8
DSL_STATIC_SMEM = 1024  # every DSL kernel holds 1 KiB of static SMEM (cuobjdump: SHARED:1024)
LOG2_E = 1.4426950408889634
SCALE_LOG2 = SOFTMAX_SCALE * LOG2_E  # scores are exponentiated as exp2(s * SCALE_LOG2 - max)


def smem_capacity() -> int:
    """Dynamic SMEM one sm_90 block may use: what the DSL reports, less its static 1 KiB."""
    from cutlass.memory import get_smem_capacity_in_bytes

    return get_smem_capacity_in_bytes("sm_90") - DSL_STATIC_SMEM


def _align(nbytes: int, to: int = SMEM_ALIGN) -> int:
    return (nbytes + to - 1) // to * to


# --8<-- [start:smem_budget]
@dataclass(frozen=True)
class MlaSmemBudget:
    """Bytes of dynamic SMEM per CTA, by buffer: the Q tile, ``kv_stages`` KV blocks, the P
    tile the softmax warpgroup hands to the other, and small fp32 row vectors + mbarriers."""

    q: int
    kv: int
    p: int
    small: int

    @property
    def total(self) -> int:
        return self.q + self.kv + self.p + self.small


def smem_budget(kv_stages: int, elem_bytes: int = 2, row_vectors: int = 2, barriers: int = 8) -> MlaSmemBudget:
    """Q 64x576 (72 KiB) + stages x 64x576 (72 KiB each) + P 64x64 (8 KiB) + row vectors/barriers."""
    return MlaSmemBudget(
        q=_align(TILE_M * D_QK * elem_bytes),
        kv=_align(TILE_N * D_QK * elem_bytes) * kv_stages,
        p=_align(TILE_M * TILE_N * elem_bytes),
        small=_align(row_vectors * TILE_M * 4 + barriers * MBARRIER_BYTES),
    )


def max_kv_stages(elem_bytes: int = 2) -> int:
    """The most KV stages that fit beside Q and P (2 on sm_90: 72 + 2 x 72 + 8 + 1 = 225 KiB)."""
    stages = 1
    while smem_budget(stages + 1, elem_bytes).total <= smem_capacity():
        stages += 1
    return stages


# --8<-- [end:smem_budget]


def rows_per_copy(page: int) -> int:
    """KV rows one TMA copy moves: a whole 64-row block, or one page of a smaller size."""
    if page < TILE_N and TILE_N % page or page > TILE_N and page % TILE_N:
        raise ValueError(f"page size {page} must divide 64 or be a multiple of 64")
    return min(page, TILE_N)


# --- host-side (inside @cute.jit) --------------------------------------------------------
def rows_major_view(t: cute.Tensor) -> cute.Tensor:
    """``(b, rows, cols)`` as ``(rows, cols, b)``: the per-sequence matrix first, for TMA tiling."""
    return cute.make_tensor(t.iterator, cute.select(t.layout, mode=[1, 2, 0]))


def make_smem_layouts(dtype: type[cutlass.Numeric], kv_stages: int) -> tuple[Any, Any, Any]:
    """Swizzled K-major layouts: Q ``(64, 576, 1)``, KV ``(64, 576, stages)``, P ``(64, 64, 1)``."""
    q_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, (TILE_M, TILE_N, D_QK), dtype, 1)
    kv_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, (TILE_M, TILE_N, D_QK), dtype, kv_stages)
    p_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, (TILE_M, V_HALF, TILE_N), dtype, 1)
    return q_layout, kv_layout, p_layout


# --8<-- [start:v_view]
def v_view_layout(kv_outer: cute.Layout, kv_stages: int) -> cute.Layout:
    """V as a view of the KV tiles: ``(512, 64, stages)`` with ``V[d, n] = KV[n, d]``.

    Composing the KV layout with a row-major ``(512, 64)`` map swaps the modes and keeps the
    first 512 columns. Each 8 x 64 K-major swizzle atom of KV, read transposed, is a 64 x 8
    MN-major atom: exactly what WGMMA takes for a B operand whose N (here d) is contiguous.
    """
    transpose = cute.make_layout((D_LATENT, TILE_N, kv_stages), stride=(TILE_N, 1, TILE_N * D_QK))
    return cute.composition(kv_outer, transpose)


# --8<-- [end:v_view]


def make_tiled_mmas(dtype: type[cutlass.Numeric], p_source: Any = None) -> tuple[cute.TiledMma, cute.TiledMma]:
    """WGMMA for ``S = Q K^T`` (64 x 64, both K-major) and ``O_half += P V_half`` (64 x 256, V MN-major)."""
    qk = sm90_utils.make_trivial_tiled_mma(
        dtype, dtype, OperandMajorMode.K, OperandMajorMode.K, cutlass.Float32, (1, 1, 1), tiler_mn=(TILE_M, TILE_N)
    )
    pv_args = (dtype, dtype, OperandMajorMode.K, OperandMajorMode.MN, cutlass.Float32, (1, 1, 1))
    if p_source is None:
        pv = sm90_utils.make_trivial_tiled_mma(*pv_args, tiler_mn=(TILE_M, V_HALF))
    else:
        pv = sm90_utils.make_trivial_tiled_mma(*pv_args, tiler_mn=(TILE_M, V_HALF), a_source=p_source)
    return qk, pv


# --8<-- [start:paged_tma]
def make_kv_tma(kv: cute.Tensor, kv_layout: cute.ComposedLayout, page: int) -> tuple[cute.CopyAtom, cute.Tensor]:
    """A TMA load of ``rows_per_copy(page)`` rows x 576 of one page of the cache ``(page, 576, pages)``.

    The SMEM side of one copy is the matching row slice of a KV stage, so the copy lands in
    the swizzled block WGMMA reads (a slice of whole 8-row swizzle atoms). The tensor it
    returns is tiled ``(rows, 576)``; a copy is addressed ``[(None, tile_in_page, 0, page_index)]``.
    """
    rpc = rows_per_copy(page)
    stage = cute.slice_(kv_layout, (None, None, 0))
    one_copy = cute.composition(stage, cute.make_layout((rpc, D_QK), stride=(1, TILE_N)))
    return cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), kv, one_copy, (rpc, D_QK))


# --8<-- [end:paged_tma]


def make_q_tma(q: cute.Tensor, q_layout: cute.ComposedLayout) -> tuple[cute.CopyAtom, cute.Tensor]:
    """A TMA load of one 64 x 576 query tile of ``(rows, 576, b)``; rows past the end are zero-filled."""
    return cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileG2SOp(), q, cute.slice_(q_layout, (None, None, 0)), (TILE_M, D_QK)
    )


# --- device side ---------------------------------------------------------------------------
# --8<-- [start:acc_mn]
def acc_mn(t: cute.Tensor) -> cute.Tensor:
    """A 64 x N WGMMA accumulator fragment viewed as (rows, cols) of this thread.

    A thread holds values ``((2, 2, N/8), 1, 1)``: 2 adjacent columns, 2 rows 8 apart, N/8
    column blocks. The view is ``(2 rows, (2, N/8) cols)``; it works for identity tensors
    too, so ``acc_mn(thr_mma.partition_C(identity))[i, j]`` is the (row, col) of a value.
    """
    v = cute.get(t.layout, mode=[0])
    layout = cute.make_layout(
        (v.shape[1], (v.shape[0], v.shape[2])), stride=(v.stride[1], (v.stride[0], v.stride[2]))
    )
    return cute.make_tensor(t.iterator, layout)


# --8<-- [end:acc_mn]


@cute.jit
def quad_max(x: cutlass.Float32) -> cutlass.Float32:
    """Max over the 4 lanes that hold one accumulator row."""
    return cute.arch.warp_reduction_max(x, threads_in_group=4)


@cute.jit
def quad_sum(x: cutlass.Float32) -> cutlass.Float32:
    """Sum over the 4 lanes that hold one accumulator row."""
    return cute.arch.warp_reduction_sum(x, threads_in_group=4)


# --8<-- [start:online_softmax]
@cute.jit
def online_softmax_step(
    s_mn: cute.Tensor,
    c_mn: cute.Tensor,
    kv_start: cutlass.Int32,
    visible: cute.Tensor,
    row_max: cute.Tensor,
    row_sum: cute.Tensor,
    scale: cute.Tensor,
) -> None:
    """One KV block of online softmax on this thread's two rows of ``S`` (in place: S becomes P).

    ``visible[i]``: KV rows row i may see (its sequence length, less the causal offset);
    columns at or past it are masked to -inf. ``row_max``/``row_sum``: the running max of raw
    scores and this thread's partial sum of ``exp2((s - max) * SCALE_LOG2)``. ``scale[i]``
    receives ``exp2((old_max - new_max) * SCALE_LOG2)``, the factor the output rows must be
    rescaled by before this block's ``P V`` is added. A row with no visible column yet keeps
    max = -inf; it computes with a max of 0 so no ``-inf - -inf`` NaN appears.
    """
    for i in cutlass.range_constexpr(cute.size(s_mn, mode=[0])):
        block_max = -cutlass.Float32.inf
        for j in cutlass.range_constexpr(cute.size(s_mn, mode=[1])):
            if kv_start + c_mn[i, j][1] >= visible[i]:
                s_mn[i, j] = -cutlass.Float32.inf
            block_max = cute.arch.fmax(block_max, s_mn[i, j])
        new_max = cute.arch.fmax(row_max[i], quad_max(block_max))
        base = new_max
        if new_max == -cutlass.Float32.inf:
            base = 0.0
        base_scaled = base * SCALE_LOG2
        scale[i] = cute.math.exp2(row_max[i] * SCALE_LOG2 - base_scaled, fastmath=True)
        total = 0.0
        for j in cutlass.range_constexpr(cute.size(s_mn, mode=[1])):
            s_mn[i, j] = cute.math.exp2(s_mn[i, j] * SCALE_LOG2 - base_scaled, fastmath=True)
            total += s_mn[i, j]
        row_sum[i] = row_sum[i] * scale[i] + total
        row_max[i] = new_max


# --8<-- [end:online_softmax]


@cute.jit
def finish_rows(row_max: cute.Tensor, row_sum: cute.Tensor, inv_sum: cute.Tensor, lse: cute.Tensor) -> None:
    """After the last block: the full row sums (over the quad), ``1 / sum`` (0 for an empty row)
    and the natural-log LSE ``max * scale + ln(sum)`` (-inf for an empty row)."""
    for i in cutlass.range_constexpr(cute.size(row_sum)):
        total = quad_sum(row_sum[i])
        inv_sum[i] = 0.0
        lse[i] = -cutlass.Float32.inf
        if total > 0.0:
            inv_sum[i] = 1.0 / total
            lse[i] = row_max[i] * SOFTMAX_SCALE + cute.math.log(total, fastmath=True)


@cute.jit
def scale_rows(o_mn: cute.Tensor, factors: cute.Tensor) -> None:
    """``o[i, :] *= factors[i]`` on this thread's rows of an accumulator view."""
    for i in cutlass.range_constexpr(cute.size(o_mn, mode=[0])):
        for j in cutlass.range(cute.size(o_mn, mode=[1]), unroll_full=True):
            o_mn[i, j] = o_mn[i, j] * factors[i]


@cute.jit
def zero_kv_rows(
    s_kv: cute.Tensor,
    first_row: cutlass.Int32,
    col0: cutlass.Constexpr,
    cols: cutlass.Constexpr,
    tidx: cutlass.Int32,
    threads: cutlass.Constexpr,
) -> None:
    """Zero rows ``first_row..63``, columns ``col0..col0+cols-1`` of one KV stage ``(64, 576)``.

    Rows past the sequence hold whatever the cache held (NaN in our tests): the scores of
    those rows are masked with a select, but V enters ``P V`` as ``0 * NaN = NaN``.
    """
    count = (TILE_N - first_row) * cols
    for idx in cutlass.range(tidx, count, threads, unroll=1):
        s_kv[first_row + idx // cols, col0 + idx % cols] = s_kv.element_type(0)


@cute.jit
def kv_page_coords(
    block_table: cute.Tensor, batch: cutlass.Int32, kv_row: cutlass.Int32, last_slot: cutlass.Int32, page: cutlass.Constexpr
) -> tuple[cutlass.Int32, cutlass.Int32]:
    """(row tile within the page, physical page) of KV row ``kv_row``: the TMA coordinates.

    Slots past the sequence's last page are clamped to it (their rows are zeroed after the
    load anyway), so a load never reads a block-table entry the sequence does not own.
    """
    rpc = rows_per_copy(page)
    slot = kv_row // page
    if slot > last_slot:
        slot = last_slot
    return (kv_row % page) // rpc, block_table[batch, slot]


__all__ = [
    "D_LATENT",
    "D_QK",
    "SCALE_LOG2",
    "TILE_M",
    "TILE_N",
    "V_HALF",
    "WARPGROUP_THREADS",
    "MlaSmemBudget",
    "acc_mn",
    "finish_rows",
    "kv_page_coords",
    "make_kv_tma",
    "make_q_tma",
    "make_smem_layouts",
    "make_tiled_mmas",
    "max_kv_stages",
    "online_softmax_step",
    "quad_max",
    "quad_sum",
    "rows_major_view",
    "rows_per_copy",
    "scale_rows",
    "smem_budget",
    "smem_capacity",
    "v_view_layout",
    "zero_kv_rows",
]
