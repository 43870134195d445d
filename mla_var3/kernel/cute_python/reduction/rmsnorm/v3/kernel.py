"""RMSNorm with x staged in SMEM by bulk copies: a ring of row stages per CTA, w in registers.

A CTA takes a contiguous range of rows (M split over the grid as evenly as whole rows allow) and
walks it in blocks of ``rows_per_stage`` rows; the grid is a launch argument (:mod:`.tiling`'s
rule: one persistent CTA per SM, two, or many scheduled by the hardware). x never passes through
registers on its way in: one elected thread arms a stage's mbarrier with the block's bytes and
issues one ``cp.async.bulk`` of the whole block (its rows are contiguous in x and in the stage; a
short last block goes row by row), into a ring of ``stages`` SMEM buffers. The CTA keeps
``stages - 1`` blocks of x in flight while it reduces and stores the current one: the loads in
flight cost SMEM, not registers, and need no address per thread.

Per block, every thread waits on the stage's mbarrier (phase = how many times the ring has wrapped,
mod 2), reads its vectors of x from SMEM (128-bit ``LDS``), sums x^2 and reduces the row (warp
shuffles, then the SMEM buffer and a CTA barrier when a row spans several warps). That barrier is
also the stage's release: every thread has read the stage before it, so right after it the elected
thread refills the stage with the block ``stages`` ahead. Rows of one warp or less have no barrier
in their reduction; they take one for the release. Then each thread scales its x (still in
registers) by the row's rsqrt and its weight (loaded once per CTA into registers, fp32) and
stores y with 128-bit ``STG`` into the block's rows (:func:`rows_from`). The launch passes no SMEM
size: the DSL sizes the dynamic SMEM from the allocations.
"""

from __future__ import annotations

import operator
from functools import partial

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.reduction.rmsnorm.scale import broadcast_rows
from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.tiling import StagedRows
from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import (
    RowTiling,
    allocate_reduction,
    column_predicate,
    copy_pred,
    row_reduce,
    tiled_copy_for,
)

SMEM_ALIGN = 128


def row_tiling(staged: StagedRows) -> RowTiling:
    """The register side of the layout: ``rows_per_stage`` rows of ``threads_per_row`` threads, 8 bf16 per copy."""
    return RowTiling(
        n=staged.n, vec=8, threads_per_row=staged.threads_per_row, rows_per_cta=staged.rows_per_stage
    )


@cute.jit
def bulk_rows(
    mX: cute.Tensor,
    sX: cute.Tensor,
    mbar: cute.Pointer,
    first: cutlass.Int32,
    row: cutlass.Constexpr,
    count: cutlass.Constexpr,
    stage: cutlass.Int32,
) -> None:
    """One ``cp.async.bulk`` of ``count`` rows (contiguous in x and in the stage), from row
    ``first + row`` of x to row ``row`` of ``stage``, completing on ``mbar``."""
    n = cute.size(mX, mode=[1])
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyBulkG2SOp(), mX.element_type)
    src = cute.make_tensor(mX[first + row, None].iterator, cute.make_layout(count * n))
    dst = cute.make_tensor(sX[row, None, stage].iterator, cute.make_layout(count * n))
    cute.copy(atom, cute.group_modes(src, 0, 1), cute.group_modes(dst, 0, 1), mbar_ptr=mbar)


def rows_from(tensor: cute.Tensor, tiler: tuple[int, int], first: cutlass.Int32 | int) -> cute.Tensor:
    """The ``tiler`` tile of ``tensor`` whose first row is ``first``: offset the whole tensor, then
    tile it. (Offsetting the tile instead is wrong when the tile has one row: that mode has size 1,
    the layout algebra gives it stride 0, and the offset along it vanishes -- every block of one
    row would land on row 0. ``tests/test_rmsnorm_v3.py`` checks this on coordinates.)"""
    return cute.local_tile(cute.domain_offset((first, 0), tensor), tiler, (0, 0))


class RmsNormStaged:
    """y = rmsnorm(x) * w; ``ctas`` CTAs (a launch argument) walk the row blocks."""

    def __init__(self, staged: StagedRows) -> None:
        self.staged = staged
        self.tiling = row_tiling(staged)

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
            grid=[ctas, 1, 1], block=[t.threads, 1, 1], stream=stream
        )

    @cute.jit
    def issue(
        self,
        mX: cute.Tensor,
        sX: cute.Tensor,
        full: cute.Pointer,
        first: cutlass.Int32,
        end: cutlass.Int32,
        stage,
    ) -> None:
        """From one thread: arm ``stage``'s mbarrier with the bytes of rows ``first`` up to
        ``rows_per_stage`` rows, stopping at ``end``, and copy them into the stage: a whole block in
        one bulk copy (its rows are contiguous in both memories), a short block one row at a time (a
        bulk copy's size is compiled in)."""
        s = self.staged
        rows = cutlass.min(end - first, s.rows_per_stage)
        cute.arch.mbarrier_arrive_and_expect_tx(full + stage, rows * s.row_bytes)
        if rows == s.rows_per_stage:
            bulk_rows(mX, sX, full + stage, first, 0, s.rows_per_stage, stage)
        else:
            for r in cutlass.range_constexpr(s.rows_per_stage - 1):
                if r < rows:
                    bulk_rows(mX, sX, full + stage, first, r, 1, stage)

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
        s, t = self.staged, self.tiling
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        grid, _, _ = cute.arch.grid_dim()
        warp = cute.arch.warp_idx()
        # This CTA's rows: [start, end), M split as evenly as whole rows allow (sizes differ by at most one).
        m = mX.shape[0]
        share, extra = m // grid, m % grid
        start = bidx * share + cutlass.min(bidx, extra)
        end = start + share + (1 if bidx < extra else 0)
        blocks = cute.ceil_div(end - start, s.rows_per_stage)

        smem = cutlass.memory.SmemAllocator()
        # Each stage: rows_per_stage whole rows, back to back as in global memory (row stride N), viewed
        # with the register tile's columns (cols_per_cta >= N: the copies past N are predicated off).
        sX = cute.make_tensor(
            smem.allocate_array(
                mX.element_type, s.stages * s.rows_per_stage * s.n, byte_alignment=SMEM_ALIGN
            ),
            cute.make_layout(
                (s.rows_per_stage, t.cols_per_cta, s.stages), stride=(s.n, 1, s.rows_per_stage * s.n)
            ),
        )
        full = smem.allocate_array(cutlass.Int64, num_elems=s.stages)
        buf, _ = allocate_reduction(smem, t, 2)
        if tidx == 0:
            for i in cutlass.range_constexpr(s.stages):
                cute.arch.mbarrier_init(full + i, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.barrier()

        # The first stages' loads go out before anything else.
        if warp == 0:
            with cute.arch.elect_one():
                for i in cutlass.range_constexpr(s.stages):
                    if i < blocks:
                        self.issue(mX, sX, full, start + i * s.rows_per_stage, end, i)

        coords = cute.make_identity_tensor(mX.shape)
        thr_x, thr_w = tiled_x.get_slice(tidx), tiled_w.get_slice(tidx)
        tXcX0 = thr_x.partition_S(cute.local_tile(coords, t.tiler, (0, 0)))
        tWgW = thr_w.partition_S(cute.local_tile(mW, t.tiler, (0, 0)))
        tWrW = cute.make_rmem_tensor_like(tWgW)
        tXrX = cute.make_rmem_tensor_like(thr_x.partition_S(sX[None, None, 0]))
        tXrY = cute.make_rmem_tensor_like(tXrX, mY.element_type)
        pred_x, pred_w = None, None
        if cutlass.const_expr(not t.even):
            tXrX.fill(0)  # columns past N stay zero: they add nothing to the sum
            tWrW.fill(0)
            pred_x = column_predicate(tXcX0, t.n)
            pred_w = column_predicate(thr_w.partition_S(cute.local_tile(coords, t.tiler, (0, 0))), t.n)
        copy_x, copy_w = partial(copy_pred, tiled_x, pred=pred_x), partial(copy_pred, tiled_w, pred=pred_w)
        copy_w(tWgW, tWrW)  # once per CTA
        w = cute.make_tensor(tWrW.iterator, tXrX.layout).load()
        row0 = tXcX0[0][0]  # this thread's row within a block

        # --8<-- [start:staged_loop]
        stage, phase, slot = cutlass.Int32(0), cutlass.Int32(0), cutlass.Int32(0)
        for block in cutlass.range(0, blocks, 1):
            cute.arch.mbarrier_wait(full + stage, phase)
            copy_x(thr_x.partition_S(sX[None, None, stage]), tXrX)
            x = tXrX.load().to(cutlass.Float32)
            sum_sq = (x * x).reduce(cute.ReductionOp.ADD, init_val=0.0, reduction_profile=0)
            (sum_sq,) = row_reduce((sum_sq,), (operator.add,), (0.0,), t, buf, None, slot)
            if cutlass.const_expr(t.warps_per_row == 1):
                cute.arch.barrier()  # no barrier in the reduction: one for the stage's release
            # Every thread has read this stage: refill it with the block `stages` ahead.
            if warp == 0:
                with cute.arch.elect_one():
                    if block + s.stages < blocks:
                        self.issue(mX, sX, full, start + (block + s.stages) * s.rows_per_stage, end, stage)
            rstd = cute.math.rsqrt(sum_sq / t.n + eps, fastmath=True)
            tXrY.store((x * rstd * w).to(mY.element_type))
            first = start + block * s.rows_per_stage
            if first + row0 < end:
                copy_x(tXrY, thr_x.partition_D(rows_from(mY, t.tiler, first)))
            stage += 1
            if stage == s.stages:
                stage, phase = cutlass.Int32(0), phase ^ 1
            slot = 1 - slot
        # --8<-- [end:staged_loop]


__all__ = ["RmsNormStaged", "row_tiling", "rows_from"]
