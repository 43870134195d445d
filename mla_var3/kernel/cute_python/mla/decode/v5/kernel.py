"""MLA decode v5 (sm_90a): v4's seesaw kernel with two scheduling changes, each aimed at a shape
where v4 fell furthest behind FlashMLA in the same-run groups.

**Longest sequence first.** With variable lengths (``N(t, t/2)`` clipped to ``[s_q, 2 t]``) and
no split (b = 128, h_q = 128: 256 CTAs on 132 SMs), v4's CTAs take sequences in batch order, so a
long sequence that starts in the second wave finishes long after the rest: the grid's time is
set by its unluckiest SM. v5's plan passes the lengths followed by the sequence indices sorted
by length, longest first (``plan.lengths_and_order``), and the CTAs of grid slot ``z`` take the
``z``-th longest sequence. The hardware hands out CTAs in the order of their linear index, so
this is greedy longest-processing-time-first scheduling (LPT): the long sequences start in the
first wave and the short ones fill the gaps behind them. A greedy simulation of the group's
varlen shape (``tests/test_mla_decode_v5.py``) puts LPT within a few percent of a perfect
balance where batch order is well over it. Fixed lengths sort to the identity (ties keep index
order): nothing changes there.

**A wider combine.** v4's combine gives each query row one warp that walks the splits in turn;
at b = 1 (66 splits of 2 blocks each, 128 rows) that is 32 CTAs each reading half a megabyte,
one split after another. v5's combine splits the 512 columns into four quarters (grid ``(rows /
4, 4, b)``: four times the CTAs), each lane owning 4 columns of a quarter, and it drops the
branch on empty splits so the loads of consecutive splits can be in flight together: an empty
split's partial is finite (its O is ``0 * 0``, ``mla_decode.common.finish_rows``) and its LSE
``-inf`` gives the weight ``exp2(-inf) = 0``.

The attention kernel is v4's (``MlaDecodeV4.attention_kernel``) with one line changed, the
sequence a CTA takes; everything else -- barriers, walks, split shares, epilogue -- is inherited.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.common import D_LATENT, D_QK, SCALE_LOG2, TILE_M, TILE_N, V_HALF
from mla_var3.kernel.cute_python.mla.decode.v4.kernel import (
    ALL_PIECES,
    MAX_INIT,
    PIECES,
    ROWS,
    STAGES,
    WARPGROUP_THREADS,
    MlaDecodeV4,
)

COMBINE_ROWS_PER_CTA = 4  # one warp per (query row, column quarter)
COLUMN_QUARTERS = 4
LANE_COLUMNS = D_LATENT // (COLUMN_QUARTERS * 32)  # 4 fp32 columns per lane: one 16-byte access
SPLIT_UNROLL = 4  # splits whose loads may be in flight together in the combine


class MlaDecodeV5(MlaDecodeV4):
    """v4 with longest-first dispatch of sequences and a combine over column quarters."""

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
        """v4's arguments, ``seqlens`` being ``(2 b,)``: the lengths, then the dispatch order."""
        if cutlass.const_expr(not self.split_kv):
            self._launch_attention(q, kv, block_table, seqlens, o, lse, None, None, heads, stream)
        else:
            self._launch_attention(q, kv, block_table, seqlens, o, lse, o_part, lse_part, heads, stream)
            mO = common.rows_major_view(o)  # (rows, 512, b)
            mOPart = cute.make_tensor(o_part.iterator, cute.select(o_part.layout, mode=[2, 3, 1, 0]))
            mLsePart = cute.make_tensor(lse_part.iterator, cute.select(lse_part.layout, mode=[2, 1, 0]))
            self.combine_quarters_kernel(mOPart, mLsePart, mO, lse, heads).launch(
                grid=(cute.ceil_div(mO.shape[0], COMBINE_ROWS_PER_CTA), COLUMN_QUARTERS, mO.shape[2]),
                block=(COMBINE_ROWS_PER_CTA * 32, 1, 1),
                stream=stream,
                use_pdl=True,
            )

    # --8<-- [start:kernel]
    @cute.kernel
    def attention_kernel(
        self,
        tma_q: cute.CopyAtom,
        mQ: cute.Tensor,
        tma_kv: cute.CopyAtom,
        mKV: cute.Tensor,
        mBlockTable: cute.Tensor,
        mSeqlens: cute.Tensor,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        mOPart: cute.Tensor | None,
        mLsePart: cute.Tensor | None,
        heads: cutlass.Int32,
        q_layout: cute.ComposedLayout,
        kv_layout: cute.ComposedLayout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        wg = warp // 4
        wg_tidx = tidx % WARPGROUP_THREADS
        m_tile, split, slot = cute.arch.block_idx()
        # v5's one change to v4's kernel: the CTAs of grid slot z (dispatched in order of z) take the
        # z-th longest sequence; ``mSeqlens`` is (lengths, order).
        batch = mSeqlens[mSeqlens.shape[0] // 2 + slot]

        storage = SmemAllocator().allocate(self.shared_storage)
        sQ = storage.sQ.get_tensor(q_layout.outer, swizzle=q_layout.inner)
        sKV = storage.sKV.get_tensor(kv_layout.outer, swizzle=kv_layout.inner)
        q_bar = storage.q_bar.data_ptr()
        kv_bars = storage.kv_bars.data_ptr()
        s_max = storage.row_max.get_tensor(cute.make_layout(TILE_M))
        if tidx == 0:
            cpasync.prefetch_descriptor(tma_q)
            cpasync.prefetch_descriptor(tma_kv)
            cute.arch.mbarrier_init(q_bar, 1)
            for b in cutlass.range_constexpr(STAGES * PIECES):
                cute.arch.mbarrier_init(kv_bars + b, 1)
        if tidx < TILE_M:
            s_max[tidx] = MAX_INIT
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()

        length = mSeqlens[batch]
        first_block, end_block = self._kv_range(cute.ceil_div(length, TILE_N), split, mLsePart)
        pairs = (end_block - first_block + 1) // 2  # <= 0 for an empty split: no load, no MMA
        # Rows past ``bound`` are masked and their V zeroed: past the sequence, or past the split
        # (the virtual block of an odd share).
        bound = cutlass.min(length, end_block * TILE_N)
        loads = self._piece_loader(
            tma_kv, mKV, sKV, mBlockTable, batch, cute.ceil_div(length, self.page) - 1, kv_bars
        )
        if warp == 0:
            tQsQ, tQgQ = cpasync.tma_partition(
                tma_q,
                0,
                cute.make_layout(1),
                cute.group_modes(sQ, 0, 2),
                cute.group_modes(cute.flat_divide(mQ, (TILE_M, D_QK)), 0, 2),
            )
            self._load_q(tma_q, tQgQ, tQsQ, m_tile, batch, q_bar)
            if pairs > 0:
                self._load_pieces(loads, first_block, 0, ALL_PIECES)
                self._load_pieces(loads, first_block + 1, 1, ALL_PIECES)

        mma = self._v4_mma_views(sQ, sKV, wg, wg_tidx)
        acc_o = cute.make_rmem_tensor(mma[1].partition_shape_C((TILE_M, V_HALF)), cutlass.Float32)
        acc_o.fill(0.0)
        c_mn = common.acc_mn(mma[0].partition_C(cute.make_identity_tensor((TILE_M, TILE_N))))
        limit, row_max, row_sum = self._row_state(c_mn, m_tile, heads, mQ.shape[0] // heads, length)
        for i in cutlass.range_constexpr(cute.size(limit)):
            limit[i] = cutlass.min(limit[i], bound)  # the last KV row + 1 each query row may see here
        factors = (
            s_max,
            storage.factor0.get_tensor(cute.make_layout(TILE_M)),
            storage.factor1.get_tensor(cute.make_layout(TILE_M)),
        )
        walk = (first_block, pairs, bound, loads)
        cute.arch.mbarrier_wait(q_bar, 0)
        if wg == 0:
            self._walk_even(sKV, kv_bars, mma, acc_o, c_mn, (limit, row_sum), factors, walk)
        else:
            self._walk_odd(sKV, kv_bars, mma, acc_o, c_mn, (limit, row_sum), factors, walk)
        if cutlass.const_expr(mLsePart is not None):
            # The combine grid may launch now; it waits for this grid's completion before reading.
            cute.arch.griddepcontrol_launch_dependents()

        # Row sums: WG0's (even blocks) + WG1's (odd blocks), both relative to the final m.
        rows = pipeline.NamedBarrier(barrier_id=ROWS, num_threads=self.threads)
        wg1_sums = storage.wg1_sums.get_tensor(cute.make_layout(2 * WARPGROUP_THREADS))
        if wg == 1:
            for i in cutlass.range_constexpr(cute.size(row_sum)):
                wg1_sums[wg_tidx * 2 + i] = row_sum[i]
        rows.arrive_and_wait()
        if wg == 0:
            for i in cutlass.range_constexpr(cute.size(row_sum)):
                row_sum[i] = row_sum[i] + wg1_sums[wg_tidx * 2 + i]
                row_max[i] = s_max[c_mn[i, 0][0]] * (1.0 / SCALE_LOG2)  # raw units, as v0's epilogue takes
        self._epilogue(
            (mO, mLse, mOPart, mLsePart),
            storage.row_factor.get_tensor(cute.make_layout(TILE_M)),
            rows,
            wg,
            acc_o,
            (row_max, row_sum),
            c_mn,
            mma[1],
            (m_tile, split, batch),
            heads,
        )

    # --8<-- [start:combine]
    @cute.kernel
    def combine_quarters_kernel(
        self,
        mOPart: cute.Tensor,
        mLsePart: cute.Tensor,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        heads: cutlass.Int32,
    ) -> None:
        """One warp per (query row, quarter of the 512 columns): the LSE-weighted merge of v4's
        combine, without a branch per split (an empty split weighs ``exp2(-inf) = 0`` and its
        partial is 0), the split loop unrolled so several splits' loads are in flight. Launched
        with PDL: waits for the attention grid before its first read."""
        tidx, _, _ = cute.arch.thread_idx()
        block, quarter, batch = cute.arch.block_idx()
        lane = tidx % 32
        row = block * COMBINE_ROWS_PER_CTA + tidx // 32
        splits = mLsePart.shape[1]
        cute.arch.griddepcontrol_wait()
        if row < mO.shape[0]:
            lse_max = -cutlass.Float32.inf
            for s in cutlass.range(lane, splits, 32, unroll=1):
                lse_max = cute.arch.fmax(lse_max, mLsePart[row, s, batch])
            lse_max = cute.arch.warp_reduction_max(lse_max)
            if lse_max == -cutlass.Float32.inf:  # no split saw a key (cannot happen for s_k >= s_q)
                lse_max = cutlass.Float32(0.0)
            column = quarter * (D_LATENT // COLUMN_QUARTERS) + lane * LANE_COLUMNS
            acc = cute.make_rmem_tensor(cute.make_layout(LANE_COLUMNS), cutlass.Float32)
            acc.fill(0.0)
            total = cutlass.Float32(0.0)
            for s in cutlass.range(splits, unroll=SPLIT_UNROLL):
                weight = cute.math.exp2((mLsePart[row, s, batch] - lse_max) * common.LOG2_E, fastmath=True)
                total += weight
                part = cute.local_tile(mOPart[(row, None, s, batch)], (LANE_COLUMNS,), (None,))
                acc.store(acc.load() + weight * part[(None, column // LANE_COLUMNS)].load())
            inv = cutlass.Float32(0.0)
            if total > 0.0:
                inv = 1.0 / total
            out = cute.local_tile(mO[(row, None, batch)], (LANE_COLUMNS,), (None,))
            out[(None, column // LANE_COLUMNS)].store((acc.load() * inv).to(mO.element_type))
            if lane == 0 and quarter == 0:
                mLse[batch, row % heads, row // heads] = lse_max + cute.math.log(total, fastmath=True)

    # --8<-- [end:combine]


__all__ = ["MlaDecodeV5"]
