"""Row reductions in the CuTe DSL: how a row is spread over threads, CTAs and a cluster, and the
reduction in three levels (warp shuffles, SMEM across the warps of a row, distributed SMEM across
the CTAs of a cluster). The row-reduce and RMSNorm kernels of this layer share it.

**Tiling** (:class:`RowTiling`). A CTA owns a tile of ``rows_per_cta`` rows by ``cols_per_cta``
columns; ``threads_per_row`` threads share a row, thread ``c`` of a row taking the ``vec``-element
vector ``c`` of every ``threads_per_row * vec``-column slice, so a warp's accesses are contiguous and
each one is one 128-bit load where ``vec`` allows it. With ``cluster_n`` > 1 the row is split over
the CTAs of a (1, ``cluster_n``) cluster, CTA ``r`` taking column tile ``r``.

**Reduction** (:func:`row_reduce`). Each thread reduces its values, then the ``threads_per_row``
lanes of a row combine with butterfly shuffles (``SHFL.BFLY``). If a row spans several warps, lane 0
of each warp writes its partial into a (rows, (warps per row, cluster_n)) fp32 buffer in SMEM. In one
CTA a barrier and a second warp reduction finish (:func:`block_reduce`); in a cluster, lane ``r`` of
every warp stores the warp's partial into slot (row, (warp, own rank)) of CTA ``r`` with
``st.async`` (``cute.arch.store_async_dsmem``), whose bytes complete on CTA ``r``'s mbarrier; each
CTA arms its mbarrier with the bytes it will receive, waits, and reduces all slots
(:func:`cluster_reduce`). Every CTA ends with the whole row's value, after one exchange.

Several values (a sum and a max) reduce together: one buffer slot each, one barrier or one
mbarrier wait for all. Learned from CUTLASS's ``reduce.py``/``rmsnorm.py`` and quack's
``reduce.py``/``reduction_base.py`` (study note ``docs/examples/rmsnorm-and-reduce.md``); the
remote store here is the DSL's own ``store_async_dsmem``, not inline PTX.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

WARP = 32
COPY_BITS = 128  # the widest global access one thread issues (LDG.E.128 / STG.E.128)
PORTABLE_CLUSTER = 8  # the largest cluster every SM90 launch accepts without the non-portable attribute


def vector_elements(n: int, width: int) -> int:
    """Elements per copy for rows of ``n`` elements of ``width`` bits: 128 bits where every row start
    stays 16-byte aligned (``n`` a multiple of the vector), else the largest power of two dividing
    ``n`` that keeps rows aligned (4097 bf16 columns: one element per copy). A wider type in the same
    layout (an fp32 weight beside bf16 x) takes several copies per vector."""
    return math.gcd(n, COPY_BITS // width)


@dataclass(frozen=True)
class RowTiling:
    """How rows of ``n`` elements map to threads, CTAs and a cluster (all compile-time)."""

    n: int
    vec: int
    threads_per_row: int
    rows_per_cta: int
    cluster_n: int = 1

    def __post_init__(self) -> None:
        tpr = self.threads_per_row
        if not ((tpr <= WARP and WARP % tpr == 0) or tpr % WARP == 0):
            raise ValueError(f"threads_per_row={tpr} must divide 32 or be a multiple of it")
        if self.cluster_n > 1 and tpr < WARP:
            raise ValueError("a clustered row needs at least a warp per row (the exchange is per warp)")
        if self.threads % WARP:
            raise ValueError(f"{self.threads} threads per CTA is not a whole number of warps")

    @property
    def threads(self) -> int:
        return self.threads_per_row * self.rows_per_cta

    @property
    def vectors_per_thread(self) -> int:
        """Copies per thread and row: the row's vectors over the threads of all CTAs of the cluster."""
        per_slice = self.vec * self.threads_per_row * self.cluster_n
        return -(-self.n // per_slice)

    @property
    def cols_per_cta(self) -> int:
        return self.vec * self.threads_per_row * self.vectors_per_thread

    @property
    def warps_per_row(self) -> int:
        return max(self.threads_per_row // WARP, 1)

    @property
    def tiler(self) -> tuple[int, int]:
        return (self.rows_per_cta, self.cols_per_cta)

    @property
    def even(self) -> bool:
        """Whether the tiles cover the row exactly (no column predicate needed)."""
        return self.cols_per_cta * self.cluster_n == self.n

    def reduction_slots(self) -> int:
        """Floats per reduced value in the SMEM buffer (0: warp shuffles alone finish the row)."""
        if self.warps_per_row == 1 and self.cluster_n == 1:
            return 0
        return self.rows_per_cta * self.warps_per_row * self.cluster_n

    def smem_bytes(self, values: int, x_bytes: int = 0) -> int:
        """Dynamic SMEM of a kernel reducing ``values`` values: the buffers, an mbarrier when
        clustered, and ``x_bytes`` more (a staged tile)."""
        mbarrier = 8 if self.cluster_n > 1 else 0
        return x_bytes + values * 4 * self.reduction_slots() + mbarrier


def threads_per_row_for(vectors: int, per_thread: int = 4, least: int = 8, most: int = 256) -> int:
    """Threads sharing a row of ``vectors`` copies: the fewest (a power of two from ``least``) that
    leave each at most ``per_thread`` copies, at most ``most``."""
    threads = least
    while threads < most and vectors > per_thread * threads:
        threads *= 2
    return threads


def cluster_size(n: int, cta_cols: int) -> int:
    """The power-of-two cluster that leaves each CTA at most ``cta_cols`` columns of a row (at most
    8, the portable cluster size)."""
    cluster_n = 1
    while cluster_n < PORTABLE_CLUSTER and n > cta_cols * cluster_n:
        cluster_n *= 2
    return cluster_n


def row_block_tiling(
    n: int, width: int, rows_per_cta: int | None = None, cluster_n: int = 1, least: int = 32, most: int = 256
) -> RowTiling:
    """A tiling for rows of ``n`` elements of ``width`` bits: about four vectors per thread (``least``
    to ``most`` threads per row), ``rows_per_cta`` rows (``None``: as many as fill 256 threads), the
    row split over ``cluster_n`` CTAs."""
    vec = vector_elements(n, width)
    threads_per_row = threads_per_row_for(-(-n // (vec * cluster_n)), least=least, most=most)
    rows = rows_per_cta if rows_per_cta is not None else max(1, 256 // threads_per_row)
    return RowTiling(n=n, vec=vec, threads_per_row=threads_per_row, rows_per_cta=rows, cluster_n=cluster_n)


@cute.jit
def tiled_copy_for(dtype: type[cutlass.Numeric], tiling: cutlass.Constexpr) -> cute.TiledCopy:
    """The tiled copy of one CTA tile: ``rows_per_cta`` x ``threads_per_row`` threads (row-major),
    ``vec`` contiguous elements per copy. A type wider than the copy (fp32 with vec = 8) takes two
    copies per vector."""
    bits = min(COPY_BITS, tiling.vec * dtype.width)
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=bits)
    threads = cute.make_ordered_layout((tiling.rows_per_cta, tiling.threads_per_row), order=(1, 0))
    values = cute.make_layout((1, tiling.vec))
    return cute.make_tiled_copy_tv(atom, threads, values)


@cute.jit
def column_predicate(thr_coords: cute.Tensor, n: cutlass.Constexpr) -> cute.Tensor:
    """One predicate per copy of a thread's partition ((atom values, copies per vector), 1, vectors):
    true where the copy's first column is inside the row. ``n`` is a multiple of the vector, so a
    copy is all in or all out; rows are guarded apart (one compare per thread)."""
    copies, vectors = cute.size(thr_coords, mode=[0, 1]), cute.size(thr_coords, mode=[2])
    pred = cute.make_rmem_tensor(
        cute.make_layout((copies, 1, vectors), stride=(vectors, 0, 1)), cutlass.Boolean
    )
    for c in cutlass.range_constexpr(copies):
        for k in cutlass.range_constexpr(vectors):
            pred[c, 0, k] = cute.elem_less(thr_coords[(0, c), 0, k][1], n)
    return pred


@cute.jit
def copy_pred(
    tiled_copy: cute.TiledCopy, src: cute.Tensor, dst: cute.Tensor, pred: cute.Tensor | None
) -> None:
    """``cute.copy`` under ``pred`` (``None``: every copy; a tile that covers the row exactly)."""
    if cutlass.const_expr(pred is None):
        cute.copy(tiled_copy, src, dst)
    else:
        cute.copy(tiled_copy, src, dst, pred=pred)


@cute.jit
def warp_reduce(val: cutlass.Float32, op: Callable, group: cutlass.Constexpr) -> cutlass.Float32:
    """Butterfly shuffles within aligned groups of ``group`` lanes (``SHFL.BFLY``)."""
    return cute.arch.warp_reduction(val, op, threads_in_group=group)


@cute.jit
def block_reduce(vals: tuple, ops: tuple, inits: tuple, buf: cute.Tensor, first: cutlass.Int32) -> tuple:
    """Combine the warps of each row in one CTA: ``buf`` is (rows, (warps per row, 1), slots), value
    ``j`` in slot ``first + j`` (a loop over row blocks alternates two sets of slots, so a fast warp
    never overwrites a slot a slow warp has yet to read)."""
    lane, warp = cute.arch.lane_idx(), cute.arch.warp_idx()
    warps_per_row = cute.size(buf, mode=[1])
    row, col = warp // warps_per_row, warp % warps_per_row
    if lane == 0:
        for j in cutlass.range_constexpr(len(vals)):
            buf[row, (col, 0), first + j] = vals[j]
    cute.arch.barrier()
    out = []
    for j in cutlass.range_constexpr(len(vals)):
        v = inits[j]
        if lane < warps_per_row:
            v = buf[row, (lane, 0), first + j]
        out.append(warp_reduce(v, ops[j], WARP))
    return tuple(out)


# --8<-- [start:cluster_reduce]
@cute.jit
def cluster_reduce(vals: tuple, ops: tuple, inits: tuple, buf: cute.Tensor, mbar: cute.Pointer) -> tuple:
    """Combine the warps of each row across the CTAs of the cluster through distributed SMEM.

    ``buf`` is (rows, (warps per row, cluster_n), values) in every CTA; slot (row, (w, r), j) of CTA
    ``c`` receives value ``j`` of warp ``w`` of CTA ``r``. Each CTA's mbarrier (arrival count 1,
    initialised and made visible to the cluster before) counts the bytes that land in it.
    """
    lane, warp = cute.arch.lane_idx(), cute.arch.warp_idx()
    rows, (warps_per_row, cluster_n), nvals = buf.shape
    row, col = warp // warps_per_row, warp % warps_per_row
    rank = cute.arch.block_idx_in_cluster()
    if warp == 0:
        # Arm this CTA's barrier with every byte the cluster sends it: one float per warp, CTA and value.
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(mbar, rows * warps_per_row * cluster_n * nvals * 4)
    if lane < cluster_n:
        # Lane r sends this warp's partials to CTA r (itself included): st.async, complete_tx on r's barrier.
        for j in cutlass.range_constexpr(nvals):
            slot = buf.iterator + cute.crd2idx((row, (col, rank), j), buf.layout)
            cute.arch.store_async_dsmem(slot, cutlass.Float32(vals[j]).bitcast(cutlass.Int32), mbar, lane)
    cute.arch.mbarrier_wait(mbar, 0)  # one row block per CTA: the barrier's first phase
    out = []
    for j in cutlass.range_constexpr(nvals):
        v = inits[j]
        for i in cutlass.range_constexpr(-(-(warps_per_row * cluster_n) // WARP)):
            if lane + i * WARP < warps_per_row * cluster_n:
                v = ops[j](v, buf[row, lane + i * WARP, j])
        out.append(warp_reduce(v, ops[j], WARP))
    return tuple(out)


# --8<-- [end:cluster_reduce]


@cute.jit
def row_reduce(
    vals: tuple,
    ops: tuple,
    inits: tuple,
    tiling: cutlass.Constexpr,
    buf: cute.Tensor | None,
    mbar: cute.Pointer | None,
    first: cutlass.Int32 = 0,
) -> tuple:
    """Each thread's partials ``vals`` (scalars) reduced over its row: every thread of the row (and
    of the cluster) gets the results. ``buf``/``mbar`` from :func:`allocate_reduction`; ``first``: the
    first buffer slot to use (single-CTA rows)."""
    group = min(tiling.threads_per_row, WARP)
    vals = tuple(warp_reduce(vals[j], ops[j], group) for j in range(len(vals)))
    if cutlass.const_expr(tiling.cluster_n > 1):
        cute.arch.cluster_wait()  # every peer's mbarrier is initialised before we store into it
        vals = cluster_reduce(vals, ops, inits, buf, mbar)
    elif cutlass.const_expr(tiling.warps_per_row > 1):
        vals = block_reduce(vals, ops, inits, buf, first)
    return vals


@cute.jit
def allocate_reduction(
    smem: cutlass.utils.SmemAllocator, tiling: cutlass.Constexpr, nvals: cutlass.Constexpr
):
    """The SMEM buffer (rows, (warps per row, cluster_n), ``nvals`` slots) and, when clustered, the
    mbarrier (initialised by thread 0, fenced, then a relaxed cluster arrive: :func:`row_reduce`
    waits on the cluster barrier just before the first remote store, after the loads are issued)."""
    buf, mbar = None, None
    if cutlass.const_expr(tiling.reduction_slots() > 0):
        layout = cute.make_ordered_layout(
            (tiling.rows_per_cta, (tiling.warps_per_row, tiling.cluster_n), nvals), order=(1, 0, 2)
        )
        buf = smem.allocate_tensor(cutlass.Float32, layout, byte_alignment=16)
    if cutlass.const_expr(tiling.cluster_n > 1):
        mbar = smem.allocate_array(cutlass.Int64, num_elems=1)
        if cute.arch.thread_idx()[0] == 0:
            cute.arch.mbarrier_init(mbar, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.cluster_arrive_relaxed()
    return buf, mbar


__all__ = [
    "COPY_BITS",
    "PORTABLE_CLUSTER",
    "WARP",
    "RowTiling",
    "allocate_reduction",
    "block_reduce",
    "cluster_size",
    "cluster_reduce",
    "column_predicate",
    "copy_pred",
    "row_block_tiling",
    "row_reduce",
    "threads_per_row_for",
    "tiled_copy_for",
    "vector_elements",
    "warp_reduce",
]
