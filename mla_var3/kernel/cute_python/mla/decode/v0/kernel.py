"""MLA decode v0 (sm_90a): the correct baseline -- TMA, WGMMA, online softmax, nothing overlapped.

**What it does.** One CTA per (64-row query tile, sequence), 256 threads = two warpgroups,
walking the sequence's whole KV cache one 64-row block at a time:

1. Warp 0 loads the Q tile once and then each KV block with TMA (the physical page from
   the block table is the TMA coordinate; see ``common.make_kv_tma``) onto one mbarrier.
2. Warpgroup 0 computes ``S = Q K^T`` (64 x 64, 36 WGMMA k-steps over 576), masks columns
   past each row's visible length, runs the online-softmax step in registers and writes P
   (bf16/fp16) and the per-row rescale factor to SMEM.
3. Both warpgroups rescale their half of O (64 x 256 fp32 each, 128 registers/thread) and
   add ``P V_half`` with WGMMA, V being a transposed view of the same SMEM block (the cache
   is read once).
4. A CTA barrier, then the next block's TMA. At the end, O is divided by the row sums and
   written with plain stores; the LSE goes to ``lse[b, head, token]``.

Rows of the last block past the sequence are zeroed in SMEM before use: the cache there
holds anything (NaN in our tests) and ``0 * NaN`` would poison ``P V``.

**Why it is slow** (what the next variants fix; on the H200 the compute-bound shapes already
keep the tensor cores fairly busy, but 8 CTAs at b = 4 leave the GPU nearly idle): a single KV buffer, so TMA latency is fully
exposed; warpgroup 1 idles while warpgroup 0 computes S and softmax; and one CTA per
(tile, sequence) leaves most SMs idle when ``b * ceil(h_q s_q / 64)`` is small.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.common import D_QK, TILE_M, TILE_N, V_HALF, WARPGROUP_THREADS


class MlaDecodeV0:
    """Absorbed-MLA decode over a paged cache, one CTA per (query tile, sequence).

    ``page``: rows per cache page (divides 64 or is a multiple of it); compile-time, since it
    shapes the TMA copies. Everything else (batch, heads, lengths, pool size) is dynamic.
    """

    threads = 2 * WARPGROUP_THREADS
    kv_stages = 1
    split_kv = False  # v1 splits the KV blocks (a runtime count, the workspace's) and adds a combine kernel

    def __init__(self, page: int) -> None:
        self.page = page
        self.rows_per_copy = common.rows_per_copy(page)
        self.copies_per_block = TILE_N // self.rows_per_copy

    def dynamic_smem_bytes(self) -> int:
        return common.smem_budget(self.kv_stages).total

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
        stream: cuda.CUstream,
    ) -> None:
        """``q (b, rows, 576)``, ``kv (pages, page, 576)``, ``block_table (b, max_pages)``,
        ``seqlens (b,)``, ``o (b, rows, 512)``, ``lse (b, heads, rows / heads)``; rows = h_q s_q."""
        self._launch_attention(q, kv, block_table, seqlens, o, lse, None, None, heads, stream)

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
        """Build the SMEM layouts and TMA descriptors and launch the attention kernel on a
        ``(query tiles, splits, b)`` grid; with partials, ``o_part (b, splits, rows, 512)`` and
        ``lse_part (b, splits, rows)`` receive each split's result."""
        dtype = q.element_type
        if cutlass.const_expr(dtype not in (cutlass.BFloat16, cutlass.Float16) or kv.element_type != dtype):
            raise TypeError(f"q and kv must both be BFloat16 or Float16, got {dtype} and {kv.element_type}")
        self.dtype = dtype  # a compile-time constant the device helpers read
        mQ = common.rows_major_view(q)  # (rows, 576, b)
        mKV = common.rows_major_view(kv)  # (page, 576, pages)
        mO = common.rows_major_view(o)  # (rows, 512, b)
        mOPart, mLsePart = None, None
        if cutlass.const_expr(o_part is not None):
            mOPart = cute.make_tensor(o_part.iterator, cute.select(o_part.layout, mode=[2, 3, 1, 0]))
            mLsePart = cute.make_tensor(lse_part.iterator, cute.select(lse_part.layout, mode=[2, 1, 0]))
        q_layout, kv_layout, p_layout = common.make_smem_layouts(dtype, self.kv_stages)
        tma_q, tQ = common.make_q_tma(mQ, q_layout)
        tma_kv, tKV = common.make_kv_tma(mKV, kv_layout, self.page)

        self.shared_storage = self._shared_storage(dtype, q_layout, kv_layout, p_layout)
        self.kernel(
            tma_q, tQ, tma_kv, tKV, block_table, seqlens, mO, lse, mOPart, mLsePart, heads, q_layout, kv_layout, p_layout
        ).launch(
            grid=(cute.ceil_div(mQ.shape[0], TILE_M), 1 if o_part is None else o_part.shape[1], mQ.shape[2]),
            block=(self.threads, 1, 1),
            min_blocks_per_mp=1,  # one CTA per SM (its SMEM allows no more): a register cap at entry for setmaxnreg
            stream=stream,
        )

    def _shared_storage(
        self,
        dtype: type[cutlass.Numeric],
        q_layout: cute.ComposedLayout,
        kv_layout: cute.ComposedLayout,
        p_layout: cute.ComposedLayout,
    ) -> type:
        @cute.struct
        class SharedStorage:
            barriers: cute.struct.MemRange[cutlass.Int64, 2]  # Q loaded, KV block loaded
            row_factor: cute.struct.MemRange[cutlass.Float32, TILE_M]
            sQ: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(q_layout)], common.SMEM_ALIGN]
            sKV: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(kv_layout)], common.SMEM_ALIGN]
            sP: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(p_layout)], common.SMEM_ALIGN]

        return SharedStorage

    @cute.kernel
    def kernel(
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
        p_layout: cute.ComposedLayout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        wg = warp // 4
        wg_tidx = tidx % WARPGROUP_THREADS
        m_tile, split, batch = cute.arch.block_idx()

        storage = SmemAllocator().allocate(self.shared_storage)
        sQ, sKV, sV, sP, s_factor = self._smem_tensors(storage, q_layout, kv_layout, p_layout)
        q_bar = storage.barriers.data_ptr()
        kv_bar = q_bar + 1
        if tidx == 0:
            cpasync.prefetch_descriptor(tma_q)
            cpasync.prefetch_descriptor(tma_kv)
            cute.arch.mbarrier_init(q_bar, 1)
            cute.arch.mbarrier_init(kv_bar, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()

        tQsQ, tQgQ, tKVsKV, tKVgKV = self._tma_views(tma_q, mQ, tma_kv, mKV, sQ, sKV)
        length = mSeqlens[batch]
        first_block, end_block = self._kv_range(cute.ceil_div(length, TILE_N), split, mLsePart)
        last_slot = cute.ceil_div(length, self.page) - 1
        kv_bytes = TILE_N * D_QK * sKV.element_type.width // 8

        # Warp 0 issues every TMA copy: a copy elects one lane itself (elect.sync needs the whole
        # warp converged), and so does the arm of its mbarrier.
        if warp == 0:
            self._load_q(tma_q, tQgQ, tQsQ, m_tile, batch, q_bar)
            if first_block < end_block:
                self._load_kv_block(
                    tma_kv, tKVgKV, tKVsKV, mBlockTable, batch, first_block * TILE_N, last_slot, 0, kv_bar, kv_bytes
                )

        thr_qk, thr_pv, tSrQ, tSrK, tOrP, tOrV = self._mma_views(sQ, sKV, sV, sP, wg, wg_tidx)
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, TILE_N)), cutlass.Float32)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((TILE_M, V_HALF)), cutlass.Float32)
        acc_o.fill(0.0)
        c_mn = common.acc_mn(thr_qk.partition_C(cute.make_identity_tensor((TILE_M, TILE_N))))
        rows_state = self._row_state(c_mn, m_tile, heads, mQ.shape[0] // heads, length)

        p_ready = pipeline.NamedBarrier(barrier_id=1, num_threads=self.threads)
        cute.arch.mbarrier_wait(q_bar, 0)
        for block in cutlass.range(first_block, end_block, unroll=1):
            cute.arch.mbarrier_wait(kv_bar, (block - first_block) % 2)
            kv_start = block * TILE_N
            if kv_start + TILE_N > length:
                common.zero_kv_rows(sKV[(None, None, 0)], length - kv_start, 0, D_QK, tidx, self.threads)
                cute.arch.fence_proxy("async.shared", space="cta")
                cute.arch.sync_threads()
            if wg == 0:
                self._scores_to_probs(thr_qk, tSrQ, tSrK, 0, acc_s, c_mn, kv_start, rows_state, sP, s_factor)
            p_ready.arrive_and_wait()
            self._accumulate_pv(acc_o, tOrP, tOrV, 0, s_factor, c_mn)
            # Every WGMMA on this block and on P is done: the buffers can be refilled.
            cute.arch.sync_threads()
            if warp == 0 and block + 1 < end_block:
                self._load_kv_block(
                    tma_kv, tKVgKV, tKVsKV, mBlockTable, batch, kv_start + TILE_N, last_slot, 0, kv_bar, kv_bytes
                )

        self._epilogue(
            (mO, mLse, mOPart, mLsePart),
            s_factor,
            p_ready,
            wg,
            acc_o,
            rows_state[1:3],
            c_mn,
            thr_pv,
            (m_tile, split, batch),
            heads,
        )

    # --- pieces every variant's kernel reuses -------------------------------------------------
    def _smem_tensors(
        self, storage: object, q_layout: cute.ComposedLayout, kv_layout: cute.ComposedLayout, p_layout: cute.ComposedLayout
    ) -> tuple[cute.Tensor, ...]:
        """Q ``(64, 576, 1)``, KV ``(64, 576, stages)``, its V view ``(512, 64, stages)``, P
        ``(64, 64, 1)`` and the 64 per-row factors the softmax warpgroup shares."""
        sQ = storage.sQ.get_tensor(q_layout.outer, swizzle=q_layout.inner)
        sKV = storage.sKV.get_tensor(kv_layout.outer, swizzle=kv_layout.inner)
        sV = cute.make_tensor(sKV.iterator, common.v_view_layout(kv_layout.outer, self.kv_stages))
        sP = storage.sP.get_tensor(p_layout.outer, swizzle=p_layout.inner)
        s_factor = storage.row_factor.get_tensor(cute.make_layout(TILE_M))
        return sQ, sKV, sV, sP, s_factor

    def _tma_views(
        self, tma_q: cute.CopyAtom, mQ: cute.Tensor, tma_kv: cute.CopyAtom, mKV: cute.Tensor, sQ: cute.Tensor, sKV: cute.Tensor
    ) -> tuple[cute.Tensor, cute.Tensor, cute.Tensor, cute.Tensor]:
        """TMA partitions: the Q tile ``(TMA, 1)`` / ``(TMA, m_tiles, 1, b)``, and KV copies of
        ``rows_per_copy x 576`` rows of one page ``(TMA, copies, 1, stages)`` / ``(TMA, tiles_in_page, 1, pages)``."""
        tQsQ, tQgQ = cpasync.tma_partition(
            tma_q,
            0,
            cute.make_layout(1),
            cute.group_modes(sQ, 0, 2),
            cute.group_modes(cute.flat_divide(mQ, (TILE_M, D_QK)), 0, 2),
        )
        tile = (self.rows_per_copy, D_QK)
        tKVsKV, tKVgKV = cpasync.tma_partition(
            tma_kv,
            0,
            cute.make_layout(1),
            cute.group_modes(cute.flat_divide(sKV, tile), 0, 2),
            cute.group_modes(cute.flat_divide(mKV, tile), 0, 2),
        )
        return tQsQ, tQgQ, tKVsKV, tKVgKV

    def _mma_views(
        self, sQ: cute.Tensor, sKV: cute.Tensor, sV: cute.Tensor, sP: cute.Tensor, half: cutlass.Int32, wg_tidx: cutlass.Int32
    ) -> tuple:
        """This thread's slices of the two tiled MMAs and the WGMMA operand views: Q ``(MMA, 1, 36, 1)``,
        K ``(MMA, 1, 36, stages)``, P ``(MMA, 1, 4, 1)`` and V's ``half`` ``(MMA, 1, 4, stages)``."""
        qk_mma, pv_mma = common.make_tiled_mmas(sQ.element_type)
        thr_qk = qk_mma.get_slice(wg_tidx)
        thr_pv = pv_mma.get_slice(wg_tidx)
        tSrQ = qk_mma.make_fragment_A(thr_qk.partition_A(sQ))
        tSrK = qk_mma.make_fragment_B(thr_qk.partition_B(sKV))
        tOrP = pv_mma.make_fragment_A(thr_pv.partition_A(sP))
        sV_half = cute.flat_divide(sV, (V_HALF, TILE_N))[(None, None, half, 0, None)]  # (256, 64, stages)
        tOrV = pv_mma.make_fragment_B(thr_pv.partition_B(sV_half))
        return thr_qk, thr_pv, tSrQ, tSrK, tOrP, tOrV

    def _row_state(
        self, c_mn: cute.Tensor, m_tile: cutlass.Int32, heads: cutlass.Int32, tokens: cutlass.Int32, length: cutlass.Int32
    ) -> tuple[cute.Tensor, cute.Tensor, cute.Tensor]:
        """This thread's two query rows: KV rows each may see (causal inside the query block:
        token ``i`` of ``tokens`` sees ``length - (tokens - 1 - i)``), running max and sum."""
        row_count = cute.size(c_mn, mode=[0])
        visible = cute.make_rmem_tensor(cute.make_layout(row_count), cutlass.Int32)
        row_max = cute.make_rmem_tensor(cute.make_layout(row_count), cutlass.Float32)
        row_sum = cute.make_rmem_tensor(cute.make_layout(row_count), cutlass.Float32)
        for i in range(row_count):  # traced as plain Python: unrolled
            token = (m_tile * TILE_M + c_mn[i, 0][0]) // heads
            visible[i] = length - (tokens - 1 - token)
            row_max[i] = -cutlass.Float32.inf
            row_sum[i] = 0.0
        return visible, row_max, row_sum

    @cute.jit
    def _load_q(
        self, tma_q: cute.CopyAtom, tQgQ: cute.Tensor, tQsQ: cute.Tensor, m_tile: cutlass.Int32, batch: cutlass.Int32, bar: cute.Pointer
    ) -> None:
        """Arm ``bar`` with the Q tile's bytes and load it (a whole warp calls this)."""
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(bar, TILE_M * D_QK * tQsQ.element_type.width // 8)
        cute.copy(tma_q, tQgQ[(None, m_tile, 0, batch)], tQsQ[(None, 0)], tma_bar_ptr=bar)

    # --8<-- [start:scores_to_probs]
    @cute.jit
    def _scores_to_probs(
        self,
        thr_qk: cute.ThrMma,
        tSrQ: cute.Tensor,
        tSrK: cute.Tensor,
        stage: cutlass.Int32,
        acc_s: cute.Tensor,
        c_mn: cute.Tensor,
        kv_start: cutlass.Int32,
        rows_state: tuple[cute.Tensor, cute.Tensor, cute.Tensor],
        sP: cute.Tensor,
        s_factor: cute.Tensor,
    ) -> None:
        """The softmax warpgroup's part of one KV block: ``S = Q K^T``, wait, then :meth:`_probs_to_smem`."""
        self._issue_qk(tSrQ, tSrK, stage, acc_s)
        warpgroup.wait_group(0)
        self._probs_to_smem(thr_qk, acc_s, c_mn, kv_start, rows_state, sP, s_factor)

    @cute.jit
    def _issue_qk(self, tSrQ: cute.Tensor, tSrK: cute.Tensor, stage: cutlass.Int32, acc_s: cute.Tensor) -> None:
        """Issue ``S = Q K^T`` for the KV block in ``stage``: 36 WGMMAs over d = 576, one commit group."""
        # A TiledMma of our own: its ACCUMULATE field is set per k-step, and a field set inside a
        # helper must not escape into the caller's loop.
        qk_mma, _ = common.make_tiled_mmas(self.dtype)
        warpgroup.fence()
        qk_mma.set(warpgroup.Field.ACCUMULATE, False)
        for kb in cutlass.range_constexpr(cute.size(tSrQ, mode=[2])):
            cute.gemm(qk_mma, acc_s, tSrQ[(None, None, kb, 0)], tSrK[(None, None, kb, stage)], acc_s)
            qk_mma.set(warpgroup.Field.ACCUMULATE, True)
        warpgroup.commit_group()

    @cute.jit
    def _probs_to_smem(
        self,
        thr_qk: cute.ThrMma,
        acc_s: cute.Tensor,
        c_mn: cute.Tensor,
        kv_start: cutlass.Int32,
        rows_state: tuple[cute.Tensor, cute.Tensor, cute.Tensor],
        sP: cute.Tensor,
        s_factor: cute.Tensor,
    ) -> None:
        """The online-softmax step on finished scores, then P and each row's rescale factor to SMEM."""
        visible, row_max, row_sum = rows_state
        factor = cute.make_rmem_tensor_like(row_max)
        common.online_softmax_step(common.acc_mn(acc_s), c_mn, kv_start, visible, row_max, row_sum, factor)
        p_regs = cute.make_rmem_tensor(acc_s.layout, sP.element_type)
        p_regs.store(acc_s.load().to(sP.element_type))
        cute.autovec_copy(p_regs, thr_qk.partition_C(sP[(None, None, 0)]))
        for i in cutlass.range_constexpr(cute.size(factor)):
            s_factor[c_mn[i, 0][0]] = factor[i]
        # P is read by WGMMA (the async proxy): make the generic-proxy writes visible to it.
        cute.arch.fence_proxy("async.shared", space="cta")

    # --8<-- [end:scores_to_probs]

    @cute.jit
    def _accumulate_pv(
        self,
        acc_o: cute.Tensor,
        tOrP: cute.Tensor,
        tOrV: cute.Tensor,
        stage: cutlass.Int32,
        s_factor: cute.Tensor,
        c_mn: cute.Tensor,
        wait: cutlass.Constexpr = True,
    ) -> None:
        """Rescale this warpgroup's O half by the rows' factors, then ``O_half += P V_half`` (4 WGMMAs;
        ``wait``: until they are done, else they stay in flight as one commit group)."""
        o_mn = common.acc_mn(acc_o)
        factor = cute.make_rmem_tensor(cute.make_layout(cute.size(o_mn, mode=[0])), cutlass.Float32)
        for i in cutlass.range_constexpr(cute.size(factor)):
            factor[i] = s_factor[c_mn[i, 0][0]]
        common.scale_rows(o_mn, factor)
        _, pv_mma = common.make_tiled_mmas(self.dtype)
        warpgroup.fence()
        pv_mma.set(warpgroup.Field.ACCUMULATE, True)
        for kb in cutlass.range_constexpr(cute.size(tOrP, mode=[2])):
            cute.gemm(pv_mma, acc_o, tOrP[(None, None, kb, 0)], tOrV[(None, None, kb, stage)], acc_o)
        warpgroup.commit_group()
        if cutlass.const_expr(wait):
            warpgroup.wait_group(0)

    @cute.jit
    def _kv_range(
        self, kv_blocks: cutlass.Int32, split: cutlass.Int32, mLsePart: cute.Tensor | None
    ) -> tuple[cutlass.Int32, cutlass.Int32]:
        """The KV blocks ``[first, end)`` split ``split`` walks: all of them without partials, else an
        equal share of the splits the workspace ``(rows, splits, b)`` holds (a short sequence may
        leave a split empty)."""
        splits = 1
        if cutlass.const_expr(mLsePart is not None):
            splits = mLsePart.shape[1]
        per_split = cute.ceil_div(kv_blocks, splits)
        first = split * per_split
        end = cutlass.min(first + per_split, kv_blocks)
        return first, end

    @cute.jit
    def _load_kv_block(
        self,
        tma_kv: cute.CopyAtom,
        tKVgKV: cute.Tensor,
        tKVsKV: cute.Tensor,
        mBlockTable: cute.Tensor,
        batch: cutlass.Int32,
        kv_start: cutlass.Int32,
        last_slot: cutlass.Int32,
        stage: cutlass.Int32,
        bar: cute.Pointer,
        kv_bytes: cutlass.Constexpr,
    ) -> None:
        """Arm ``bar`` with one block's bytes and issue its TMA copies (one per page it spans); called by a whole warp."""
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(bar, kv_bytes)
        for c in cutlass.range_constexpr(self.copies_per_block):
            tile_in_page, page = common.kv_page_coords(
                mBlockTable, batch, kv_start + c * self.rows_per_copy, last_slot, self.page
            )
            cute.copy(tma_kv, tKVgKV[(None, tile_in_page, 0, page)], tKVsKV[(None, c, 0, stage)], tma_bar_ptr=bar)

    @cute.jit
    def _epilogue(
        self,
        outputs: tuple,
        s_factor: cute.Tensor,
        barrier: pipeline.NamedBarrier,
        half: cutlass.Int32,
        acc_o: cute.Tensor,
        row_stats: tuple[cute.Tensor, cute.Tensor],
        c_mn: cute.Tensor,
        thr_pv: cute.ThrMma,
        coords: tuple[cutlass.Int32, cutlass.Int32, cutlass.Int32],
        heads: cutlass.Int32,
    ) -> None:
        """O / row sum and the LSE of each row that exists: into ``o``/``lse`` (one split), or as this
        split's fp32 partial and partial LSE into the workspace (several; a combine kernel merges them).

        ``outputs``: ``(o (rows, 512, b), lse (b, heads, tokens), o_part, lse_part)`` with the
        partials ``(rows, 512, splits, b)`` and ``(rows, splits, b)`` (or None with one split).
        ``half``: which 256 output columns this warpgroup holds; half 0 also holds the row
        statistics ``(max, sum)`` and shares ``1 / sum`` through ``s_factor`` (``barrier``: both
        warpgroups). ``coords``: (query tile, split, sequence) of this CTA.
        """
        mO, mLse, mOPart, mLsePart = outputs
        row_max, row_sum = row_stats
        m_tile, split, batch = coords
        tidx, _, _ = cute.arch.thread_idx()
        rows = mO.shape[0]
        row_count = cute.size(row_max)
        inv_sum = cute.make_rmem_tensor_like(row_max)
        lse = cute.make_rmem_tensor_like(row_max)
        if half == 0:
            common.finish_rows(row_max, row_sum, inv_sum, lse)
            for i in cutlass.range_constexpr(row_count):
                row = m_tile * TILE_M + c_mn[i, 0][0]
                s_factor[c_mn[i, 0][0]] = inv_sum[i]
                if tidx % 4 == 0 and row < rows:
                    if cutlass.const_expr(mLsePart is None):
                        mLse[batch, row % heads, row // heads] = lse[i]
                    else:
                        mLsePart[row, split, batch] = lse[i]
        barrier.arrive_and_wait()
        for i in cutlass.range_constexpr(row_count):
            inv_sum[i] = s_factor[c_mn[i, 0][0]]
        o_mn = common.acc_mn(acc_o)
        common.scale_rows(o_mn, inv_sum)
        tile = (TILE_M, V_HALF)
        if cutlass.const_expr(mOPart is None):
            gO = cute.flat_divide(mO, tile)[(None, None, m_tile, half, batch)]  # (64, 256)
        else:
            gO = cute.flat_divide(mOPart, tile)[(None, None, m_tile, half, split, batch)]
        g_mn = common.acc_mn(thr_pv.partition_C(gO))
        oc_mn = common.acc_mn(thr_pv.partition_C(cute.make_identity_tensor(tile)))
        for i in cutlass.range_constexpr(row_count):
            if m_tile * TILE_M + oc_mn[i, 0][0] < rows:
                for j in cutlass.range(cute.size(o_mn, mode=[1]), unroll_full=True):
                    g_mn[i, j] = o_mn[i, j].to(gO.element_type)


__all__ = ["MlaDecodeV0"]
