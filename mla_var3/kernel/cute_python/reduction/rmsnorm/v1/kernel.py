"""RMSNorm with persistent CTAs: the weight loaded once per CTA, the next row block's x in flight.

``rmsnorm_v0`` re-reads the fp32 weight for every row: 4 bytes of w (from L2) per 2 bytes of x
(from DRAM). Here a grid of about as many CTAs as fit on the GPU walks the row blocks
(``block = bidx, bidx + grid, ...``); each thread loads its share of w once and keeps it in
registers, and issues the loads of its next row block before it reduces the current one (two x
fragments in registers), so a CTA always has a block's loads in flight while it reduces and
stores. The SMEM reduction buffer alternates two slots between consecutive blocks, so a warp that
runs ahead never overwrites a partial a slower warp has yet to read.
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


class RmsNormPersistent:
    """y = rmsnorm(x) * w; ``ctas`` persistent CTAs (a launch argument) walk the row blocks."""

    def __init__(self, tiling: RowTiling) -> None:
        if tiling.cluster_n != 1:
            raise ValueError("the persistent RMSNorm keeps whole rows in one CTA (cluster_n must be 1)")
        self.tiling = tiling

    @cute.jit
    def __call__(
        self,
        mX: cute.Tensor,
        mW: cute.Tensor,
        mY: cute.Tensor,
        eps: cutlass.Float32,
        ctas: cutlass.Int32,
        stream: cuda.CUstream,
    ) -> None:
        t = self.tiling
        tiled_x = tiled_copy_for(mX.element_type, t)
        tiled_w = tiled_copy_for(mW.element_type, t)
        self.kernel(mX, broadcast_rows(mW, t.rows_per_cta), mY, eps, tiled_x, tiled_w).launch(
            grid=[ctas, 1, 1], block=[t.threads, 1, 1], smem=t.smem_bytes(2), stream=stream
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
        bidx, _, _ = cute.arch.block_idx()
        grid, _, _ = cute.arch.grid_dim()
        smem = cutlass.utils.SmemAllocator()
        buf, mbar = allocate_reduction(smem, t, 2)
        m = mX.shape[0]
        blocks = cute.ceil_div(m, t.rows_per_cta)
        coords = cute.make_identity_tensor(mX.shape)
        thr_x, thr_w = tiled_x.get_slice(tidx), tiled_w.get_slice(tidx)

        # The block-independent part of the partition: this thread's columns and its row in a block.
        tXcX0 = thr_x.partition_S(cute.local_tile(coords, t.tiler, (0, 0)))
        tWgW = thr_w.partition_S(cute.local_tile(mW, t.tiler, (0, 0)))
        tWrW = cute.make_rmem_tensor_like(tWgW)
        tXrX = cute.make_rmem_tensor_like(thr_x.partition_S(cute.local_tile(mX, t.tiler, (0, 0))))
        tXrNext = cute.make_rmem_tensor_like(tXrX)
        tXrY = cute.make_rmem_tensor_like(tXrX, mY.element_type)
        pred_x, pred_w = None, None
        if cutlass.const_expr(not t.even):
            tXrX.fill(0)
            tXrNext.fill(0)  # columns past N are never loaded: they stay zero in both buffers
            tWrW.fill(0)
            pred_x = column_predicate(tXcX0, t.n)
            pred_w = column_predicate(thr_w.partition_S(cute.local_tile(coords, t.tiler, (0, 0))), t.n)
        copy_x, copy_w = partial(copy_pred, tiled_x, pred=pred_x), partial(copy_pred, tiled_w, pred=pred_w)
        row0 = tXcX0[0][0]  # this thread's row within a block

        # --8<-- [start:persistent_loop]
        copy_w(tWgW, tWrW)  # once per CTA
        if bidx < blocks and bidx * t.rows_per_cta + row0 < m:
            copy_x(thr_x.partition_S(cute.local_tile(mX, t.tiler, (bidx, 0))), tXrX)
        slot = cutlass.Int32(0)
        for block in cutlass.range(bidx, blocks, grid):
            row = block * t.rows_per_cta + row0
            if block + grid < blocks and row + grid * t.rows_per_cta < m:
                # The next block's loads go out before this block's reduction waits on anything.
                copy_x(thr_x.partition_S(cute.local_tile(mX, t.tiler, (block + grid, 0))), tXrNext)
            rms_scale(tXrX, tWrW, tXrY, t, buf, mbar, slot, eps)
            if row < m:
                copy_x(tXrY, thr_x.partition_D(cute.local_tile(mY, t.tiler, (block, 0))))
            tXrX.store(tXrNext.load())
            slot = 1 - slot
        # --8<-- [end:persistent_loop]


__all__ = ["RmsNormPersistent"]
