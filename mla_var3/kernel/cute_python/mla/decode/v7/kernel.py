"""MLA decode v7 (sm_90a): v6 with a combine whose loop over splits only loads and multiplies.

**v5's combine** (kept by v6) gives one warp to each (query row, column quarter); every lane
owns 4 columns. Its loop over the splits loads the split's LSE, takes ``exp2`` of it against the
row's max, adds the weight to the total and multiplies the split's partial by it: each split
costs a dependent chain global load -> exp2 -> FMA, and every lane of the warp repeats the same
LSE load and ``exp2`` (FlashMLA's combine computes each weight once).

**v7's combine**, FlashMLA's order with our grid:

1. *Weights once.* Each lane loads the LSEs of splits ``lane, lane + 32, ...`` (all in flight
   together), the warp reduces their max and the sum of ``exp2`` over it, and each lane writes
   its splits' normalized weights ``exp2(lse - max) / sum`` into an SMEM table of its warp
   (``MAX_SPLITS`` entries per warp). An empty split (LSE ``-inf``) weighs 0.
2. *Partials.* The loop over splits reads the weight from SMEM and multiplies the 16-byte
   partial: nothing in the loop depends on a global load except the partial itself, and the
   loop is unrolled ``SPLIT_UNROLL`` times so that many splits' partials are in flight.
3. The LSE of the row is ``max + ln(sum)``, written by lane 0 of the first quarter.

The grid is v5's ``(rows / 4, 4 quarters, b)``, launched with PDL (``griddepcontrol.wait`` before
the first read of the attention grid's output).
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.common import D_LATENT
from mla_var3.kernel.cute_python.mla.decode.v5.kernel import (
    COLUMN_QUARTERS,
    COMBINE_ROWS_PER_CTA,
    LANE_COLUMNS,
)
from mla_var3.kernel.cute_python.mla.decode.v6.kernel import MlaDecodeV6

MAX_SPLITS = 160  # weights per row in SMEM; the split rule gives at most one split per SM
LSE_PER_LANE = MAX_SPLITS // 32
SPLIT_UNROLL = 8  # splits whose partial loads may be in flight together
WEIGHT_BYTES = COMBINE_ROWS_PER_CTA * MAX_SPLITS * 4


class MlaDecodeV7(MlaDecodeV6):
    """v6 with the combine's split weights computed once per row, into SMEM."""

    @cute.jit
    def __call__(
        self,
        q: cute.Tensor,
        kv: cute.Tensor,
        block_table: cute.Tensor,
        seqlens: cute.Tensor,
        o: cute.Tensor,
        lse: cute.Tensor,
        heads: cutlass.Int32,
        o_part: cute.Tensor,
        lse_part: cute.Tensor,
        stream: cuda.CUstream,
    ) -> None:
        """v5's arguments and attention launch; the combine is :meth:`combine_weights_kernel`."""
        if cutlass.const_expr(not self.split_kv):
            self._launch_attention(q, kv, block_table, seqlens, o, lse, None, None, heads, stream)
        else:
            self._launch_attention(q, kv, block_table, seqlens, o, lse, o_part, lse_part, heads, stream)
            mO = common.rows_major_view(o)  # (rows, 512, b)
            mOPart = cute.make_tensor(o_part.iterator, cute.select(o_part.layout, mode=[2, 3, 1, 0]))
            mLsePart = cute.make_tensor(lse_part.iterator, cute.select(lse_part.layout, mode=[2, 1, 0]))
            self.combine_weights_kernel(mOPart, mLsePart, mO, lse, heads).launch(
                grid=(cute.ceil_div(mO.shape[0], COMBINE_ROWS_PER_CTA), COLUMN_QUARTERS, mO.shape[2]),
                block=(COMBINE_ROWS_PER_CTA * 32, 1, 1),
                smem=WEIGHT_BYTES,
                stream=stream,
                use_pdl=True,
            )

    # --8<-- [start:combine]
    @cute.kernel
    def combine_weights_kernel(
        self,
        mOPart: cute.Tensor,
        mLsePart: cute.Tensor,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        heads: cutlass.Int32,
    ) -> None:
        """One warp per (query row, column quarter): the splits' weights once into SMEM, then the
        weighted sum of the partials with ``SPLIT_UNROLL`` splits' loads in flight."""
        tidx, _, _ = cute.arch.thread_idx()
        block, quarter, batch = cute.arch.block_idx()
        lane = tidx % 32
        warp = tidx // 32
        row = block * COMBINE_ROWS_PER_CTA + warp
        splits = mLsePart.shape[1]
        weights = SmemAllocator().allocate_tensor(
            cutlass.Float32, cute.make_layout((MAX_SPLITS, COMBINE_ROWS_PER_CTA)), byte_alignment=16
        )
        cute.arch.griddepcontrol_wait()
        if row < mO.shape[0]:
            lse = cute.make_rmem_tensor(cute.make_layout(LSE_PER_LANE), cutlass.Float32)
            for k in cutlass.range_constexpr(LSE_PER_LANE):
                lse[k] = -cutlass.Float32.inf
                if lane + 32 * k < splits:
                    lse[k] = mLsePart[row, lane + 32 * k, batch]
            lse_max = -cutlass.Float32.inf
            for k in cutlass.range_constexpr(LSE_PER_LANE):
                lse_max = cute.arch.fmax(lse_max, lse[k])
            lse_max = cute.arch.warp_reduction_max(lse_max)
            if lse_max == -cutlass.Float32.inf:  # no split saw a key (cannot happen for s_k >= s_q)
                lse_max = cutlass.Float32(0.0)
            total = cutlass.Float32(0.0)
            for k in cutlass.range_constexpr(LSE_PER_LANE):
                lse[k] = cute.math.exp2((lse[k] - lse_max) * common.LOG2_E, fastmath=True)  # 0 for -inf
                total += lse[k]
            total = cute.arch.warp_reduction_sum(total)
            inv = cutlass.Float32(0.0)
            if total > 0.0:
                inv = 1.0 / total
            for k in cutlass.range_constexpr(LSE_PER_LANE):
                if lane + 32 * k < splits:
                    weights[lane + 32 * k, warp] = lse[k] * inv
            cute.arch.sync_warp()  # the warp's table is written before any lane reads it
            column = quarter * (D_LATENT // COLUMN_QUARTERS) + lane * LANE_COLUMNS
            acc = cute.make_rmem_tensor(cute.make_layout(LANE_COLUMNS), cutlass.Float32)
            acc.fill(0.0)
            # Groups of SPLIT_UNROLL splits: all their loads first, then the FMAs (written so: in one
            # unrolled loop ptxas interleaved them and kept only two or three loads in flight).
            frags = cute.make_rmem_tensor(cute.make_layout((LANE_COLUMNS, SPLIT_UNROLL)), cutlass.Float32)
            grouped = splits // SPLIT_UNROLL * SPLIT_UNROLL
            for first in cutlass.range(0, grouped, SPLIT_UNROLL, unroll=1):
                for u in cutlass.range_constexpr(SPLIT_UNROLL):
                    frags[(None, u)].store(self._partial(mOPart, row, first + u, batch, column).load())
                for u in cutlass.range_constexpr(SPLIT_UNROLL):
                    acc.store(acc.load() + weights[first + u, warp] * frags[(None, u)].load())
            for s in cutlass.range(grouped, splits, unroll=1):
                acc.store(acc.load() + weights[s, warp] * self._partial(mOPart, row, s, batch, column).load())
            out = cute.local_tile(mO[(row, None, batch)], (LANE_COLUMNS,), (None,))
            out[(None, column // LANE_COLUMNS)].store(acc.load().to(mO.element_type))
            if lane == 0 and quarter == 0:
                mLse[batch, row % heads, row // heads] = lse_max + cute.math.log(total, fastmath=True)

    # --8<-- [end:combine]

    @staticmethod
    @cute.jit
    def _partial(
        mOPart: cute.Tensor,
        row: cutlass.Int32,
        split: cutlass.Int32,
        batch: cutlass.Int32,
        column: cutlass.Int32,
    ) -> cute.Tensor:
        """The ``LANE_COLUMNS`` fp32 values of one split's partial that this lane sums (16 bytes)."""
        part = cute.local_tile(mOPart[(row, None, split, batch)], (LANE_COLUMNS,), (None,))
        return part[(None, column // LANE_COLUMNS)]


__all__ = ["MAX_SPLITS", "MlaDecodeV7"]
