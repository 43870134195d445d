"""RMSNorm over row blocks: one CTA (or one cluster) per ``rows_per_cta`` rows, the row in registers.

Each thread copies its vectors of x (128-bit where N allows) and of the fp32 weight (two 128-bit
copies per 8 columns) into registers, under an N predicate built once from the identity tensor and
a row guard past M; sums x^2 in fp32; the row's threads (and the cluster's CTAs) combine the sums
(:func:`~mla_var3.kernel.cute_python.reduction.row_reduce.reduce.row_reduce`); each thread scales
its values and stores y with the same tiled copy.

``rmsnorm_v0`` runs it with one row per CTA and no cluster; ``rmsnorm_v2`` with several rows per
CTA and, for long rows, a cluster that splits each row (the tiling is all that differs).
"""

from __future__ import annotations

from functools import partial

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.reduction.rmsnorm.scale import broadcast_rows, rms_scale
from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import (
    RowTiling,
    allocate_reduction,
    column_predicate,
    copy_pred,
    tiled_copy_for,
)


class RmsNormRowBlock:
    """y = rmsnorm(x) * w, a row block per CTA (cluster), tiled by ``tiling``."""

    def __init__(self, tiling: RowTiling) -> None:
        self.tiling = tiling

    @cute.jit
    def __call__(
        self, mX: cute.Tensor, mW: cute.Tensor, mY: cute.Tensor, eps: cutlass.Float32, stream: cuda.CUstream
    ) -> None:
        t = self.tiling
        tiled_x = tiled_copy_for(mX.element_type, t)
        tiled_w = tiled_copy_for(mW.element_type, t)
        self.kernel(mX, broadcast_rows(mW, t.rows_per_cta), mY, eps, tiled_x, tiled_w).launch(
            grid=[cute.ceil_div(mX.shape[0], t.rows_per_cta), t.cluster_n, 1],
            block=[t.threads, 1, 1],
            cluster=[1, t.cluster_n, 1] if cutlass.const_expr(t.cluster_n > 1) else None,
            smem=t.smem_bytes(1),
            stream=stream,
        )

    @cute.kernel
    def kernel(
        self,
        mX: cute.Tensor,
        mW: cute.Tensor,
        mY: cute.Tensor,
        eps: cutlass.Float32,
        tiled_x: cute.TiledCopy,
        tiled_w: cute.TiledCopy,
    ) -> None:
        t = self.tiling
        tidx, _, _ = cute.arch.thread_idx()
        bidx, rank, _ = cute.arch.block_idx()  # rank: this CTA's column tile (its rank in the cluster)
        smem = cutlass.utils.SmemAllocator()
        buf, mbar = allocate_reduction(smem, t, 1)

        # --8<-- [start:partition]
        coords = cute.make_identity_tensor(mX.shape)
        gX, gY, cX = (cute.local_tile(m, t.tiler, (bidx, rank)) for m in (mX, mY, coords))
        gW = cute.local_tile(mW, t.tiler, (0, rank))
        thr_x, thr_w = tiled_x.get_slice(tidx), tiled_w.get_slice(tidx)
        tXgX, tXgY, tXcX = thr_x.partition_S(gX), thr_x.partition_D(gY), thr_x.partition_S(cX)
        tWgW, tWcW = thr_w.partition_S(gW), thr_w.partition_S(cX)
        tXrX, tWrW, tXrY = (cute.make_rmem_tensor_like(g) for g in (tXgX, tWgW, tXgY))
        # --8<-- [end:partition]
        pred_x, pred_w = None, None
        if cutlass.const_expr(not t.even):
            tXrX.fill(0)  # columns past N stay zero: they add nothing to the sum
            tWrW.fill(0)
            pred_x, pred_w = column_predicate(tXcX, t.n), column_predicate(tWcW, t.n)
        # Bound outside the dynamic branches below (a None captured by a dynamic `if` is not None).
        load_x, load_w = partial(copy_pred, tiled_x, pred=pred_x), partial(copy_pred, tiled_w, pred=pred_w)
        store_y = partial(copy_pred, tiled_x, pred=pred_x)

        row = tXcX[0][0]
        if row < mX.shape[0]:
            load_x(tXgX, tXrX)
        load_w(tWgW, tWrW)
        rms_scale(tXrX, tWrW, tXrY, t, buf, mbar, 0, eps)
        if row < mX.shape[0]:
            store_y(tXrY, tXgY)


__all__ = ["RmsNormRowBlock"]
