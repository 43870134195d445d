"""Row sum and row max of an (M, N) tensor in one pass, fp32 out; long rows split over a cluster.

One CTA (or one cluster of ``cluster_n`` CTAs) per ``rows_per_cta`` rows: each thread loads its
vectors of the row with 128-bit copies (a column predicate where the tiles overhang N, a row guard
past M), reduces them to a partial sum and max in fp32, and the row's partials combine through
:func:`~mla_var3.kernel.cute_python.reduction.row_reduce.reduce.row_reduce`: warp shuffles, SMEM
across warps, and across the cluster through distributed SMEM (``st.async`` completing on each
CTA's mbarrier). Both results come from the same registers: x is read once.
"""

from __future__ import annotations

import operator
from functools import partial

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import (
    RowTiling,
    allocate_reduction,
    column_predicate,
    copy_pred,
    row_reduce,
    tiled_copy_for,
)

NEG_INF = float("-inf")


class RowSumMax:
    """sum(x, -1) and amax(x, -1) in fp32 for rows tiled by ``tiling``."""

    def __init__(self, tiling: RowTiling) -> None:
        self.tiling = tiling

    @cute.jit
    def __call__(self, mX: cute.Tensor, mSum: cute.Tensor, mMax: cute.Tensor, stream: cuda.CUstream) -> None:
        t = self.tiling
        tiled_copy = tiled_copy_for(mX.element_type, t)
        self.kernel(mX, mSum, mMax, tiled_copy).launch(
            grid=[cute.ceil_div(mX.shape[0], t.rows_per_cta), t.cluster_n, 1],
            block=[t.threads, 1, 1],
            cluster=[1, t.cluster_n, 1] if cutlass.const_expr(t.cluster_n > 1) else None,
            smem=t.smem_bytes(2),
            stream=stream,
        )

    @cute.kernel
    def kernel(
        self, mX: cute.Tensor, mSum: cute.Tensor, mMax: cute.Tensor, tiled_copy: cute.TiledCopy
    ) -> None:
        t = self.tiling
        tidx, _, _ = cute.arch.thread_idx()
        bidx, rank, _ = cute.arch.block_idx()  # rank: this CTA's column tile (its rank in the cluster)
        smem = cutlass.utils.SmemAllocator()
        buf, mbar = allocate_reduction(smem, t, 2)

        gX = cute.local_tile(mX, t.tiler, (bidx, rank))
        cX = cute.local_tile(cute.make_identity_tensor(mX.shape), t.tiler, (bidx, rank))
        thr = tiled_copy.get_slice(tidx)
        tXgX, tXcX = thr.partition_S(gX), thr.partition_S(cX)
        tXrX = cute.make_rmem_tensor_like(tXgX)
        tXrX.fill(0)  # copies outside the row stay zero
        pred = column_predicate(tXcX, t.n) if cutlass.const_expr(not t.even) else None
        load = partial(copy_pred, tiled_copy, pred=pred)  # bound outside the dynamic branch below
        row = tXcX[0][0]
        if row < mX.shape[0]:
            load(tXgX, tXrX)

        x = cute.make_rmem_tensor_like(tXrX, cutlass.Float32)
        x.store(tXrX.load().to(cutlass.Float32))
        total = x.load().reduce(cute.ReductionOp.ADD, init_val=0.0, reduction_profile=0)
        if cutlass.const_expr(not t.even):
            for k in cutlass.range_constexpr(cute.size(x, mode=[2])):
                if not pred[0, 0, k]:  # a zero outside the row must not win the max
                    for v in cutlass.range_constexpr(cute.size(x, mode=[0])):
                        x[v, 0, k] = NEG_INF
        peak = x.load().reduce(cute.ReductionOp.MAX, init_val=NEG_INF, reduction_profile=0)
        total, peak = row_reduce((total, peak), (operator.add, cute.arch.fmax), (0.0, NEG_INF), t, buf, mbar)
        if tXcX[0][1] == 0 and row < mX.shape[0]:  # the row's first thread of cluster rank 0
            mSum[row] = total
            mMax[row] = peak


__all__ = ["RowSumMax"]
