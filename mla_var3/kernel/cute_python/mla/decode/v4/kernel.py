"""MLA decode v4 (sm_90a): FlashMLA's "seesaw" schedule in the CuTe DSL -- two warpgroups that
take turns, per-piece KV barriers, P in registers, and a combine launched with PDL.

**Why v2 stops at its speed.** In v2 one warpgroup (the "softmax" one) issues ``Q K^T`` and
its half of ``P V`` with the softmax in between, while the other issues only its ``P V`` half
and waits for P; a stage is awaited whole (72 KiB) and freed whole.

**The schedule** (learned from FlashMLA's SM90 kernel and its deep-dive; the code is ours). No
producer warpgroup: 256 threads, two warpgroups, each holding one ``64 x 256`` fp32 half of O
(WG0 the left columns, WG1 the right). KV blocks are taken in **pairs**: block ``b0`` always
lands in stage 0, ``b1 = b0 + 1`` in stage 1. WG0 owns ``S0 = Q K0^T``, WG1 owns
``S1 = Q K1^T``; the running row max ``m`` lives in SMEM (scaled by ``log2(e) / sqrt(d)``) and
both update it in turn. Per pair (``f0``, ``f1``: the rescale factors of the two steps):

    WG0                                         WG1
    softmax S0 -> P0, m, f0; O_L *= f0          (waits "scale0")
    "scale0" ->                                 softmax S1 -> P1, m, f1; O_R *= f0 f1
    O_L += P0 V0L  (P0 from registers)          "scale1" ->; P1 -> SMEM
    (waits "scale1"); refill stage 0 [0..3]     O_R += P1 V1R  (P1 from registers)
    P0 *= f1 -> SMEM; "P0" ->                   (waits "P0"); O_R += P0 V0R; "P1" ->
    (waits "P1"); O_L *= f1; O_L += P1 V1L      refill stage 1 [4..7] after P1 V1R,
    S0' = Q K0'^T on pieces 0..3, refill         stage 0 [4..8] after P0 V0R
      stage 1 [0..3, 8] after P1 V1L,           S1' = Q K1'^T on all 9 pieces
      S0' on pieces 4..8

so one warpgroup's softmax always runs while the other's WGMMAs keep the tensor cores busy,
and each warpgroup issues half of the pair's MMA work (v2's busiest issued 74 %). The row sums
stay split (WG0 sums P0, WG1 sums P1, each rescaled like its O half) and are added once at the end.

**Per-piece barriers.** A KV stage is nine ``64 x 64`` pieces (TMA boxes of 64 columns), each
with its own mbarrier, so ``Q K^T`` starts on piece 0 while pieces 1..8 are in flight, and a
piece is refilled as soon as its last reader is done: the left V half (pieces 0..3) after the
left ``P V``, the right half after the right one. **P lives in piece 8** (the 64 rope columns,
read only by ``Q K^T``) between the scores and the refill: SMEM holds Q and two stages
(216 KiB) and nothing else big.

**Barrier accounting** (a wrong count hangs the GPU, so every count is stated):

- ``q_bar``: arrive count 1; armed once with the Q tile's bytes by warp 0; waited once, parity 0.
- ``kv_bars[stage * 9 + piece]``: arrive count 1. Every load of a piece is one
  ``arrive_and_expect_tx(64 * 64 * elem_bytes)`` by the elected lane of the issuing warp, then
  its copies (``64 / rows_per_copy`` TMA boxes of ``rows_per_copy x 64``, together exactly those
  bytes). Pair ``k`` (0-based) loads every piece of both stages exactly once, so its loads
  complete phase ``k`` of each of the 18 barriers: waits use parity ``k % 2``. Stage 0's pieces
  are awaited only by WG0, stage 1's only by WG1, each exactly once per pair. Issuers: pair 0
  by warp 0 (the prologue); then, during pair ``k`` and only if pair ``k + 1`` exists, warp 0
  of WG0 loads stage 0 [0..3] and stage 1 [0..3, 8], warp 4 (WG1) stage 1 [4..7] and stage 0
  [4..8]: each piece once. A refill is issued only after its issuer has waited for the WGMMAs
  that read the piece, and the other warpgroup never reads it (the named barriers below order
  the cross-warpgroup reads), so no load overwrites live data and no barrier is armed twice in
  a phase.
- The last pair loads nothing, so its ``Q K^T`` (issued unconditionally: no WGMMA sits under a
  branch or stays in flight across the loop's back edge) waits with the parity of the phase
  that already completed and returns at once; its scores are discarded. No TMA is in flight at
  exit: every load of pair ``k + 1`` is awaited during pair ``k``.
- Named barriers (256 threads: one warpgroup arrives, the other syncs; each once per pair, in
  the order above): ``SCALE0`` (m, f0 written), ``SCALE1`` (m, f1 written), ``P0`` (P0 in SMEM),
  ``P1`` (P1 in SMEM, and WG1's ``P0 V0R`` issued). ``ZEROED + wg`` (128 threads) after a
  warpgroup zeroes its V half of a partial block; ``ROWS`` (256) in the epilogue.

**Pairs and odd block counts.** A split of ``n`` blocks runs ``ceil(n / 2)`` pairs; an odd ``n``
leaves a **virtual** last block (index ``end``): it is loaded from the sequence's last page (as
a partial block's slots are clamped), every column is masked (``m`` does not move, its factor is
exactly 1) and both V halves are zeroed, so it adds nothing. Its cost, one extra load and
``Q K^T``, is why v4's split shares are even (:meth:`MlaDecodeV4._kv_range`).

**Numerics.** Scores are masked with ``-inf`` (a select, so NaN in the poisoned rows past a
sequence never enters), the max starts at a finite ``-1e30`` so ``exp2(-inf - m)`` is 0, never
NaN. ``m`` is stored already scaled, so a factor is ``exp2(m_old - m_new)``: an unmoved max
gives exactly 1 (the FMA-contraction trap of ``exp2(old * c - new * c)`` does not arise), while
``exp2(s * c - m)`` may contract into one FFMA (a rounding residual on P, harmless).

**Split-KV and PDL.** Split shares and the workspace are v1's; the combine is v4's own, one warp
per query row, launched with PDL: the attention grid executes ``griddepcontrol.launch_dependents``
after its main loop, the combine waits (``griddepcontrol.wait``) before reading a partial.
"""

import operator

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.attention.fmha.common import probs_to_operand, row_reduce, select
from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.common import (
    D_LATENT,
    D_QK,
    SCALE_LOG2,
    TILE_M,
    TILE_N,
    V_HALF,
    WARPGROUP_THREADS,
)
from mla_var3.kernel.cute_python.mla.decode.v1.kernel import MlaDecodeV1

PIECE = 64  # KV columns per TMA box and per barrier (one 128-byte swizzle atom wide)
PIECES = D_QK // PIECE  # 9 per stage
K_STEPS = PIECE // 16  # WGMMA k-steps of Q K^T per piece
P_PIECE = PIECES - 1  # the rope piece: P0/P1 live there between Q K^T and the refill
STAGES = 2  # stage 0 holds the even block of a pair, stage 1 the odd one
ALL_PIECES = tuple(range(PIECES))
# Refills, by issuer (see the module docstring): each piece of each stage exactly once per pair.
WG0_REFILL_STAGE0 = (0, 1, 2, 3)  # V0L, read by WG0's P0 V0L
WG0_REFILL_STAGE1 = (0, 1, 2, 3, P_PIECE)  # V1L and P1, read by WG0's P1 V1L
WG1_REFILL_STAGE1 = (4, 5, 6, 7)  # V1R, read by WG1's P1 V1R
WG1_REFILL_STAGE0 = (4, 5, 6, 7, P_PIECE)  # V0R and P0, read by WG1's P0 V0R
# WG1's Q K1^T: the pieces it refills itself come first (they are issued earliest).
WG1_QK_ORDER = (4, 5, 6, 7, 0, 1, 2, 3, P_PIECE)
MAX_INIT = -1e30  # finite start of the scaled row max: exp2(-inf - MAX_INIT) = 0, never NaN
# Named barriers (0 is __syncthreads).
SCALE0, SCALE1, P0_READY, P1_READY, ROWS, ZEROED = 1, 2, 3, 4, 5, 6  # ZEROED + warpgroup: 6, 7
COMBINE_ROWS_PER_CTA = 4  # one warp per query row
LANE_COLUMNS = 4  # fp32 values per vector access in the combine
COMBINE_VECTORS = D_LATENT // (32 * LANE_COLUMNS)  # 4 vectors of 4 per lane cover 512 columns


def smem_bytes(elem_bytes: int = 2) -> int:
    """The SMEM struct's size: barriers and row vectors first (1 Q + 18 KV barriers; m, f0, f1 and
    the epilogue's factors, 64 fp32 each; WG1's 256 row sums), padded to the 1 KiB the swizzled
    tiles align to, then Q 64x576 and 2 stages of 64x576 (216 KiB at 16 bits). No P buffer: P
    lives in a stage's rope piece."""
    small = (1 + STAGES * PIECES) * common.MBARRIER_BYTES + (4 * TILE_M + 2 * WARPGROUP_THREADS) * 4
    tiles = (TILE_M * D_QK + STAGES * TILE_N * D_QK) * elem_bytes
    return -(-small // common.SMEM_ALIGN) * common.SMEM_ALIGN + tiles


class MlaDecodeV4(MlaDecodeV1):
    """Two warpgroups in FlashMLA's seesaw over pairs of KV blocks; v1's split shares (made even)."""

    threads = 2 * WARPGROUP_THREADS
    kv_stages = STAGES

    def dynamic_smem_bytes(self) -> int:
        return smem_bytes()

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
        """v1's arguments; with ``split_kv`` the combine is launched with PDL (it may start while
        the attention grid drains and waits for it in-kernel)."""
        if cutlass.const_expr(not self.split_kv):
            self._launch_attention(q, kv, block_table, seqlens, o, lse, None, None, heads, stream)
        else:
            self._launch_attention(q, kv, block_table, seqlens, o, lse, o_part, lse_part, heads, stream)
            mO = common.rows_major_view(o)  # (rows, 512, b)
            mOPart = cute.make_tensor(o_part.iterator, cute.select(o_part.layout, mode=[2, 3, 1, 0]))
            mLsePart = cute.make_tensor(lse_part.iterator, cute.select(lse_part.layout, mode=[2, 1, 0]))
            self.combine_pdl_kernel(mOPart, mLsePart, mO, lse, heads).launch(
                grid=(cute.ceil_div(mO.shape[0], COMBINE_ROWS_PER_CTA), 1, mO.shape[2]),
                block=(COMBINE_ROWS_PER_CTA * 32, 1, 1),
                stream=stream,
                use_pdl=True,
            )

    @cute.jit
    def _launch_attention(
        self,
        q: cute.Tensor,
        kv: cute.Tensor,
        block_table: cute.Tensor,
        seqlens: cute.Tensor,
        o: cute.Tensor,
        lse: cute.Tensor,
        o_part: cute.Tensor | None,
        lse_part: cute.Tensor | None,
        heads: cutlass.Int32,
        stream: cuda.CUstream,
    ) -> None:
        """v0's grid ``(query tiles, splits, b)`` with a TMA atom of one ``rows_per_copy x 64`` piece."""
        dtype = q.element_type
        if cutlass.const_expr(dtype not in (cutlass.BFloat16, cutlass.Float16) or kv.element_type != dtype):
            raise TypeError(f"q and kv must both be BFloat16 or Float16, got {dtype} and {kv.element_type}")
        self.dtype = dtype
        mQ, mKV, mO = common.rows_major_view(q), common.rows_major_view(kv), common.rows_major_view(o)
        mOPart, mLsePart = None, None
        if cutlass.const_expr(o_part is not None):
            mOPart = cute.make_tensor(o_part.iterator, cute.select(o_part.layout, mode=[2, 3, 1, 0]))
            mLsePart = cute.make_tensor(lse_part.iterator, cute.select(lse_part.layout, mode=[2, 1, 0]))
        q_layout, kv_layout, _ = common.make_smem_layouts(dtype, STAGES)
        tma_q, tQ = common.make_q_tma(mQ, q_layout)
        # --8<-- [start:piece_tma]
        stage = cute.slice_(kv_layout, (None, None, 0))
        one_piece = cute.composition(stage, cute.make_layout((self.rows_per_copy, PIECE), stride=(1, TILE_N)))
        tma_kv, tKV = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileG2SOp(), mKV, one_piece, (self.rows_per_copy, PIECE)
        )
        # --8<-- [end:piece_tma]
        self.shared_storage = self._v4_storage(dtype, q_layout, kv_layout)
        self.attention_kernel(
            tma_q,
            tQ,
            tma_kv,
            tKV,
            block_table,
            seqlens,
            mO,
            lse,
            mOPart,
            mLsePart,
            heads,
            q_layout,
            kv_layout,
        ).launch(
            grid=(cute.ceil_div(mQ.shape[0], TILE_M), 1 if o_part is None else o_part.shape[1], mQ.shape[2]),
            block=(self.threads, 1, 1),
            min_blocks_per_mp=1,  # one CTA per SM: up to 255 registers per thread, no setmaxnreg needed
            stream=stream,
        )

    def _v4_storage(
        self, dtype: type[cutlass.Numeric], q_layout: cute.ComposedLayout, kv_layout: cute.ComposedLayout
    ) -> type:
        @cute.struct
        class SharedStorage:
            q_bar: cute.struct.MemRange[cutlass.Int64, 1]
            kv_bars: cute.struct.MemRange[cutlass.Int64, STAGES * PIECES]  # stage s, piece p: s * 9 + p
            row_max: cute.struct.MemRange[cutlass.Float32, TILE_M]  # m, scaled by SCALE_LOG2
            factor0: cute.struct.MemRange[cutlass.Float32, TILE_M]  # f0 of the pair's even block
            factor1: cute.struct.MemRange[cutlass.Float32, TILE_M]  # f1 of the odd block
            row_factor: cute.struct.MemRange[cutlass.Float32, TILE_M]  # the epilogue's 1 / sum
            wg1_sums: cute.struct.MemRange[cutlass.Float32, 2 * WARPGROUP_THREADS]  # WG1's row sums
            sQ: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(q_layout)], common.SMEM_ALIGN]
            sKV: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(kv_layout)], common.SMEM_ALIGN]

        return SharedStorage

    @cute.jit
    def _kv_range(
        self, kv_blocks: cutlass.Int32, split: cutlass.Int32, mLsePart: cute.Tensor | None
    ) -> tuple[cutlass.Int32, cutlass.Int32]:
        """v1's shares rounded up to an even number of blocks, so only a sequence's end can leave a
        virtual block in a pair (a later split may be left empty)."""
        splits = 1
        if cutlass.const_expr(mLsePart is not None):
            splits = mLsePart.shape[1]
        per_split = cute.ceil_div(kv_blocks, 2 * splits) * 2
        first = split * per_split
        end = cutlass.min(first + per_split, kv_blocks)
        return first, end

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
        m_tile, split, batch = cute.arch.block_idx()

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

    # --8<-- [end:kernel]

    def _v4_mma_views(
        self, sQ: cute.Tensor, sKV: cute.Tensor, half: cutlass.Int32, wg_tidx: cutlass.Int32
    ) -> tuple:
        """``(thr_qk, thr_pv, tSrQ, tSrK, tOrP, tOsP, tOrV_rs, tOrV_ss, sP)``: Q ``(MMA, 1, 36, 1)``,
        K ``(MMA, 1, 36, 2)``; P in registers ``(MMA, 1, 4)`` (16-bit, the A operand of the local
        ``P V``) and in SMEM ``(MMA, 1, 4, 2)`` (the remote ``P V``); this warpgroup's V half
        ``(MMA, 1, 4, 2)`` for each of the two ``P V`` MMAs; ``sP (64, 64, 2)``: piece 8 of each
        stage, where P is stored."""
        qk_mma, pv_ss = common.make_tiled_mmas(sQ.element_type)
        _, pv_rs = common.make_tiled_mmas(sQ.element_type, warpgroup.OperandSource.RMEM)
        thr_qk = qk_mma.get_slice(wg_tidx)
        thr_ss, thr_rs = pv_ss.get_slice(wg_tidx), pv_rs.get_slice(wg_tidx)
        sP = cute.flat_divide(sKV, (TILE_N, PIECE))[(None, None, 0, P_PIECE, None)]  # (64, 64, 2)
        sV = cute.make_tensor(sKV.iterator, common.v_view_layout(sKV.layout, STAGES))
        sV_half = cute.flat_divide(sV, (V_HALF, TILE_N))[(None, None, half, 0, None)]  # (256, 64, 2)
        return (
            thr_qk,
            thr_ss,
            qk_mma.make_fragment_A(thr_qk.partition_A(sQ)),
            qk_mma.make_fragment_B(thr_qk.partition_B(sKV)),
            cute.make_rmem_tensor(pv_rs.partition_shape_A((TILE_M, TILE_N)), sQ.element_type),
            pv_ss.make_fragment_A(thr_ss.partition_A(sP)),
            pv_rs.make_fragment_B(thr_rs.partition_B(sV_half)),
            pv_ss.make_fragment_B(thr_ss.partition_B(sV_half)),
            sP,
        )

    # --- the two warpgroups' walks ------------------------------------------------------------
    # --8<-- [start:walk_even]
    @cute.jit
    def _walk_even(
        self,
        sKV: cute.Tensor,
        kv_bars: cute.Pointer,
        mma: tuple,
        acc_o: cute.Tensor,
        c_mn: cute.Tensor,
        rows: tuple,
        factors: tuple,
        walk: tuple,
    ) -> None:
        """WG0: the even block of each pair (stage 0) and the left V half of both."""
        thr_qk, _, tSrQ, tSrK, tOrP, tOsP, tOrV_rs, tOrV_ss, sP = mma
        limit, row_sum = rows
        s_max, f0, f1 = factors
        first_block, pairs, bound, loads = walk
        issuer = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % 4 == 0
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, TILE_N)), cutlass.Float32)
        if pairs > 0:
            self._issue_qk(tSrQ, tSrK, acc_s, kv_bars, 0, 0, ALL_PIECES, True)
            warpgroup.wait_group(0)
        for pair in cutlass.range(0, pairs, unroll=1):
            block = first_block + 2 * pair
            more = pair + 1 < pairs
            parity = self._next_parity(pair, more)
            s_mn = common.acc_mn(acc_s)
            self._softmax(s_mn, c_mn, limit, block * TILE_N, s_max, f0, None, row_sum, acc_o)
            pipeline.NamedBarrier(barrier_id=SCALE0, num_threads=self.threads).arrive()
            probs_to_operand(acc_s, tOrP)
            self._zero_v_half(sKV, 0, block * TILE_N, bound, 0)
            self._issue_pv(acc_o, tOrP, tOrV_rs[(None, None, None, 0)], True)
            warpgroup.wait_group(0)
            pipeline.NamedBarrier(barrier_id=SCALE1, num_threads=self.threads).arrive_and_wait()
            if more and issuer:
                self._load_pieces(loads, block + 2, 0, WG0_REFILL_STAGE0)
            # P0 *= f1, into piece 8 of stage 0 for WG1's P0 V0R.
            f1_rows = self._row_values(f1, c_mn)
            common.scale_rows(s_mn, f1_rows)
            probs_to_operand(acc_s, tOrP)
            cute.autovec_copy(
                cute.make_tensor(tOrP.iterator, acc_s.layout), thr_qk.partition_C(sP[(None, None, 0)])
            )
            cute.arch.fence_proxy("async.shared", space="cta")
            pipeline.NamedBarrier(barrier_id=P0_READY, num_threads=self.threads).arrive()
            pipeline.NamedBarrier(barrier_id=P1_READY, num_threads=self.threads).arrive_and_wait()
            self._zero_v_half(sKV, 1, (block + 1) * TILE_N, bound, 0)
            common.scale_rows(common.acc_mn(acc_o), f1_rows)
            for i in cutlass.range_constexpr(cute.size(row_sum)):
                row_sum[i] = row_sum[i] * f1_rows[i]
            self._issue_pv(acc_o, tOsP[(None, None, None, 1)], tOrV_ss[(None, None, None, 1)], False)
            # S of the next pair's even block: pieces 0..3 were refilled first; after P1 V1L is
            # done (one commit group, then 4 of Q K^T in flight), refill stage 1's left pieces.
            self._issue_qk(tSrQ, tSrK, acc_s, kv_bars, 0, parity, WG0_REFILL_STAGE0, True)
            warpgroup.wait_group(len(WG0_REFILL_STAGE0))
            if more and issuer:
                self._load_pieces(loads, block + 3, 1, WG0_REFILL_STAGE1)
            self._issue_qk(tSrQ, tSrK, acc_s, kv_bars, 0, parity, (4, 5, 6, 7, P_PIECE), False)
            warpgroup.wait_group(0)

    # --8<-- [end:walk_even]

    # --8<-- [start:walk_odd]
    @cute.jit
    def _walk_odd(
        self,
        sKV: cute.Tensor,
        kv_bars: cute.Pointer,
        mma: tuple,
        acc_o: cute.Tensor,
        c_mn: cute.Tensor,
        rows: tuple,
        factors: tuple,
        walk: tuple,
    ) -> None:
        """WG1: the odd block of each pair (stage 1) and the right V half of both."""
        thr_qk, _, tSrQ, tSrK, tOrP, tOsP, tOrV_rs, tOrV_ss, sP = mma
        limit, row_sum = rows
        s_max, f0, f1 = factors
        first_block, pairs, bound, loads = walk
        issuer = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % 4 == 0
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, TILE_N)), cutlass.Float32)
        if pairs > 0:
            self._issue_qk(tSrQ, tSrK, acc_s, kv_bars, 1, 0, WG1_QK_ORDER, True)
            warpgroup.wait_group(0)
        for pair in cutlass.range(0, pairs, unroll=1):
            block = first_block + 2 * pair + 1
            more = pair + 1 < pairs
            parity = self._next_parity(pair, more)
            pipeline.NamedBarrier(barrier_id=SCALE0, num_threads=self.threads).arrive_and_wait()
            self._softmax(common.acc_mn(acc_s), c_mn, limit, block * TILE_N, s_max, f1, f0, row_sum, acc_o)
            pipeline.NamedBarrier(barrier_id=SCALE1, num_threads=self.threads).arrive()
            probs_to_operand(acc_s, tOrP)
            cute.autovec_copy(
                cute.make_tensor(tOrP.iterator, acc_s.layout), thr_qk.partition_C(sP[(None, None, 1)])
            )
            cute.arch.fence_proxy("async.shared", space="cta")  # P1 for WG0's WGMMA (async proxy)
            self._zero_v_half(sKV, 1, block * TILE_N, bound, 1)
            self._issue_pv(acc_o, tOrP, tOrV_rs[(None, None, None, 1)], True)
            pipeline.NamedBarrier(barrier_id=P0_READY, num_threads=self.threads).arrive_and_wait()
            self._zero_v_half(sKV, 0, (block - 1) * TILE_N, bound, 1)
            self._issue_pv(acc_o, tOsP[(None, None, None, 0)], tOrV_ss[(None, None, None, 0)], False)
            pipeline.NamedBarrier(barrier_id=P1_READY, num_threads=self.threads).arrive()
            warpgroup.wait_group(1)  # P1 V1R done: stage 1's right pieces are free
            if more and issuer:
                self._load_pieces(loads, block + 2, 1, WG1_REFILL_STAGE1)
            warpgroup.wait_group(0)  # P0 V0R done: stage 0's right pieces and P0 are free
            if more and issuer:
                self._load_pieces(loads, block + 1, 0, WG1_REFILL_STAGE0)
            self._issue_qk(tSrQ, tSrK, acc_s, kv_bars, 1, parity, WG1_QK_ORDER, True)
            warpgroup.wait_group(0)

    # --8<-- [end:walk_odd]

    # --- device helpers -----------------------------------------------------------------------
    @staticmethod
    @cute.jit
    def _next_parity(pair: cutlass.Int32, more: cutlass.Boolean) -> cutlass.Int32:
        """Parity of the next pair's loads; the last pair waits for its own (completed) phase instead."""
        parity = (pair + 1) % 2
        if not more:
            parity = pair % 2
        return parity

    @staticmethod
    @cute.jit
    def _row_values(vec: cute.Tensor, c_mn: cute.Tensor) -> cute.Tensor:
        """This thread's rows of a 64-entry SMEM row vector, in registers."""
        out = cute.make_rmem_tensor(cute.make_layout(cute.size(c_mn, mode=[0])), cutlass.Float32)
        for i in cutlass.range_constexpr(cute.size(out)):
            out[i] = vec[c_mn[i, 0][0]]
        return out

    # --8<-- [start:softmax]
    @cute.jit
    def _softmax(
        self,
        s_mn: cute.Tensor,
        c_mn: cute.Tensor,
        limit: cute.Tensor,
        kv_start: cutlass.Int32,
        s_max: cute.Tensor,
        s_factor: cute.Tensor,
        s_prev: cute.Tensor | None,
        row_sum: cute.Tensor,
        acc_o: cute.Tensor,
    ) -> None:
        """One block's online-softmax step against the shared scaled max ``s_max`` (in place: S becomes P).

        Masks columns at or past ``limit[i] - kv_start`` with -inf, moves the row max, writes it
        and the factor ``f = exp2(m_old - m_new)`` (into ``s_factor``), rescales this warpgroup's
        O half and its row sums by ``f`` -- times ``s_prev`` (the other block's factor of this
        pair) when given -- and adds the block's sums.
        """
        rows = cute.size(s_mn, mode=[0])
        new_max = cute.make_rmem_tensor(cute.make_layout(rows), cutlass.Float32)
        factor = cute.make_rmem_tensor(cute.make_layout(rows), cutlass.Float32)
        for i in cutlass.range_constexpr(rows):
            col_limit = limit[i] - kv_start
            for j in cutlass.range_constexpr(cute.size(s_mn, mode=[1])):
                s_mn[i, j] = select(c_mn[i, j][1] >= col_limit, -cutlass.Float32.inf, s_mn[i, j])
            old = s_max[c_mn[i, 0][0]]
            block_max = common.quad_max(row_reduce(s_mn[i, None], cute.arch.fmax))
            new_max[i] = cute.arch.fmax(old, block_max * SCALE_LOG2)
            factor[i] = cute.math.exp2(old - new_max[i], fastmath=True)  # exactly 1 if m did not move
        cute.arch.sync_warp()  # the quad's four lanes have read m before any of them writes it
        for i in cutlass.range_constexpr(rows):
            s_max[c_mn[i, 0][0]] = new_max[i]  # the four lanes of a row store the same values
            s_factor[c_mn[i, 0][0]] = factor[i]
            for j in cutlass.range_constexpr(cute.size(s_mn, mode=[1])):
                s_mn[i, j] = cute.math.exp2(s_mn[i, j] * SCALE_LOG2 - new_max[i], fastmath=True)
            if cutlass.const_expr(s_prev is not None):
                factor[i] = factor[i] * s_prev[c_mn[i, 0][0]]
            row_sum[i] = row_sum[i] * factor[i] + row_reduce(s_mn[i, None], operator.add)
        common.scale_rows(common.acc_mn(acc_o), factor)

    # --8<-- [end:softmax]

    @cute.jit
    def _issue_qk(
        self,
        tSrQ: cute.Tensor,
        tSrK: cute.Tensor,
        acc_s: cute.Tensor,
        kv_bars: cute.Pointer,
        stage: cutlass.Constexpr,
        parity: cutlass.Int32,
        pieces: cutlass.Constexpr,
        overwrite: cutlass.Constexpr,
    ) -> None:
        """``S (+)= Q K^T`` over ``pieces`` of ``stage``: per piece, wait for its barrier (``parity``),
        then 4 WGMMA k-steps as one commit group, left in flight (``overwrite``: the first step
        replaces S)."""
        qk_mma, _ = common.make_tiled_mmas(self.dtype)
        qk_mma.set(warpgroup.Field.ACCUMULATE, not overwrite)
        for n in cutlass.range_constexpr(len(pieces)):
            cute.arch.mbarrier_wait(kv_bars + stage * PIECES + pieces[n], parity)
            warpgroup.fence()
            for k in cutlass.range_constexpr(K_STEPS):
                kb = pieces[n] * K_STEPS + k
                cute.gemm(qk_mma, acc_s, tSrQ[(None, None, kb, 0)], tSrK[(None, None, kb, stage)], acc_s)
                qk_mma.set(warpgroup.Field.ACCUMULATE, True)
            warpgroup.commit_group()

    @cute.jit
    def _issue_pv(
        self, acc_o: cute.Tensor, tOP: cute.Tensor, tOV: cute.Tensor, p_in_registers: cutlass.Constexpr
    ) -> None:
        """``O_half += P V_half``: 4 WGMMA k-steps over the block's 64 rows, one commit group, in flight."""
        source = warpgroup.OperandSource.RMEM if p_in_registers else None
        _, pv_mma = common.make_tiled_mmas(self.dtype, source)
        warpgroup.fence()
        pv_mma.set(warpgroup.Field.ACCUMULATE, True)
        for kb in cutlass.range_constexpr(cute.size(tOP, mode=[2])):
            cute.gemm(pv_mma, acc_o, tOP[(None, None, kb)], tOV[(None, None, kb)], acc_o)
        warpgroup.commit_group()

    @cute.jit
    def _zero_v_half(
        self,
        sKV: cute.Tensor,
        stage: cutlass.Constexpr,
        kv_start: cutlass.Int32,
        bound: cutlass.Int32,
        half: cutlass.Constexpr,
    ) -> None:
        """In a block that runs past ``bound`` (the sequence's or the split's end), zero this
        warpgroup's V half of the rows past it (all 64 in a virtual block) before ``P V`` reads them."""
        if kv_start + TILE_N > bound:
            tidx, _, _ = cute.arch.thread_idx()
            common.zero_kv_rows(
                sKV[(None, None, stage)],
                cutlass.max(bound - kv_start, 0),
                half * V_HALF,
                V_HALF,
                tidx % WARPGROUP_THREADS,
                WARPGROUP_THREADS,
            )
            cute.arch.fence_proxy("async.shared", space="cta")
            pipeline.NamedBarrier(barrier_id=ZEROED + half, num_threads=WARPGROUP_THREADS).arrive_and_wait()

    def _piece_loader(
        self,
        tma_kv: cute.CopyAtom,
        mKV: cute.Tensor,
        sKV: cute.Tensor,
        mBlockTable: cute.Tensor,
        batch: cutlass.Int32,
        last_slot: cutlass.Int32,
        kv_bars: cute.Pointer,
    ) -> tuple:
        """What a refill needs: the atom, its SMEM ``(TMA, copies, 9, 2)`` and GMEM
        ``(TMA, tiles_in_page, 9, pages)`` partitions, and where the sequence's pages are."""
        tile = (self.rows_per_copy, PIECE)
        tKVsKV, tKVgKV = cpasync.tma_partition(
            tma_kv,
            0,
            cute.make_layout(1),
            cute.group_modes(cute.flat_divide(sKV, tile), 0, 2),
            cute.group_modes(cute.flat_divide(mKV, tile), 0, 2),
        )
        return tma_kv, tKVsKV, tKVgKV, mBlockTable, batch, last_slot, kv_bars

    # --8<-- [start:load_pieces]
    @cute.jit
    def _load_pieces(
        self, loads: tuple, block: cutlass.Int32, stage: cutlass.Constexpr, pieces: cutlass.Constexpr
    ) -> None:
        """Load ``pieces`` of KV block ``block`` into ``stage`` (a whole warp calls this): per piece,
        one arrival that arms its barrier with the piece's bytes, then one TMA box per page the
        block spans (``64 / rows_per_copy`` boxes of ``rows_per_copy x 64``: exactly those bytes)."""
        tma_kv, tKVsKV, tKVgKV, mBlockTable, batch, last_slot, kv_bars = loads
        piece_bytes = TILE_N * PIECE * self.dtype.width // 8
        coords = []
        for c in cutlass.range_constexpr(self.copies_per_block):
            coords.append(
                common.kv_page_coords(
                    mBlockTable, batch, block * TILE_N + c * self.rows_per_copy, last_slot, self.page
                )
            )
        for n in cutlass.range_constexpr(len(pieces)):
            bar = kv_bars + stage * PIECES + pieces[n]
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(bar, piece_bytes)
            for c in cutlass.range_constexpr(self.copies_per_block):
                tile_in_page, page = coords[c]
                cute.copy(
                    tma_kv,
                    tKVgKV[(None, tile_in_page, pieces[n], page)],
                    tKVsKV[(None, c, pieces[n], stage)],
                    tma_bar_ptr=bar,
                )

    # --8<-- [end:load_pieces]

    # --8<-- [start:combine]
    @cute.kernel
    def combine_pdl_kernel(
        self,
        mOPart: cute.Tensor,
        mLsePart: cute.Tensor,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        heads: cutlass.Int32,
    ) -> None:
        """One warp per query row: merge the splits' partials by their LSE weights (v1's math), after
        ``griddepcontrol.wait`` -- this grid is launched with PDL and may start before the
        attention grid has finished. Lanes share the splits for the max and the weights' sum, and
        each lane owns 4 vectors of 4 columns (coalesced 16-byte accesses)."""
        tidx, _, _ = cute.arch.thread_idx()
        block, _, batch = cute.arch.block_idx()
        lane = tidx % 32
        row = block * COMBINE_ROWS_PER_CTA + tidx // 32
        splits = mLsePart.shape[1]
        cute.arch.griddepcontrol_wait()
        if row < mO.shape[0]:
            lse_max = -cutlass.Float32.inf
            for s in cutlass.range(lane, splits, 32, unroll=1):
                lse_max = cute.arch.fmax(lse_max, mLsePart[row, s, batch])
            lse_max = cute.arch.warp_reduction_max(lse_max)
            acc = cute.make_rmem_tensor(cute.make_layout((LANE_COLUMNS, COMBINE_VECTORS)), cutlass.Float32)
            acc.fill(0.0)
            total = cutlass.Float32(0.0)
            for s in cutlass.range(splits, unroll=1):
                lse_s = mLsePart[row, s, batch]
                if lse_s > -cutlass.Float32.inf:  # an empty split weighs nothing
                    weight = cute.math.exp2((lse_s - lse_max) * common.LOG2_E, fastmath=True)
                    total += weight
                    part = cute.local_tile(mOPart[(row, None, s, batch)], (LANE_COLUMNS,), (None,))
                    for v in cutlass.range_constexpr(COMBINE_VECTORS):
                        frag = part[(None, lane + 32 * v)].load()
                        acc[(None, v)].store(acc[(None, v)].load() + weight * frag)
            inv = cutlass.Float32(0.0)
            if total > 0.0:
                inv = 1.0 / total
            out = cute.local_tile(mO[(row, None, batch)], (LANE_COLUMNS,), (None,))
            for v in cutlass.range_constexpr(COMBINE_VECTORS):
                out[(None, lane + 32 * v)].store((acc[(None, v)].load() * inv).to(mO.element_type))
            if lane == 0:
                mLse[batch, row % heads, row // heads] = lse_max + cute.math.log(total, fastmath=True)

    # --8<-- [end:combine]


__all__ = ["MlaDecodeV4", "smem_bytes"]
