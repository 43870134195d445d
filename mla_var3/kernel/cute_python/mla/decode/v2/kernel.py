"""MLA decode v2 (sm_90a): v1 + warp specialization and a multistage KV pipeline.

**What it changes.** v0/v1 load one KV block, wait for it, compute, and only then load the
next: every block pays the full TMA latency, and the CTA barrier after each block keeps
both warpgroups in lockstep. v2 splits the CTA into roles, as our Hopper GEMM does:

- **Producer warpgroup** (warp 0 issues, the warpgroup gives registers back with
  ``setmaxregister_decrease``): loads Q once, then streams KV blocks into a ring of
  ``kv_stages`` SMEM buffers through ``PipelineTmaAsync`` (full barrier: TMA transaction
  bytes; empty barrier: one arrival per consumer warp). The stage count is what fits next to
  Q and P in the SMEM the DSL reports for sm_90 (``common.max_kv_stages``: 2).
- **Softmax warpgroup** (consumer 0, ``setmaxregister_increase``): ``S = Q K^T``, the
  online-softmax step, P and the row factors to SMEM, then ``O_left += P V_left``.
- **Second consumer warpgroup**: rescales ``O_right`` and adds ``P V_right``.

The two consumers hand P over with two named barriers (``P ready``: softmax -> second;
``P free``: second -> softmax, before P or the row factors are overwritten), so the softmax warpgroup computes
the next block's ``S`` while the second one still multiplies the previous P. A stage goes
back to the producer when both consumers' WGMMAs on it are done. Each consumer zeroes its
own V half of a last, partial block (rows past the sequence); K rows there are only read by
``Q K^T``, whose scores the mask replaces anyway.

The epilogue, the split-KV grid and the combine kernel are v1's.

**What the measurements said** (H200, debugging runs in separate processes; records come from
``verify``): the ring hides the load latency v0/v1 expose -- v2 was clearly faster than v1 at
every shape timed, compute-bound (h_q = 128) and memory-bound (h_q = 16) alike. The softmax
warpgroup is now the critical path: it runs
``Q K^T`` (4.7 MFLOP per block), the softmax and ``P V_left`` (2.1), while the second
warpgroup only runs ``P V_right`` (2.1) and waits for P; v3 tries to overlap its softmax.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.common import D_QK, TILE_M, TILE_N, V_HALF, WARPGROUP_THREADS
from mla_var3.kernel.cute_python.mla.decode.v1.kernel import MlaDecodeV1

# 128 x 24 + 256 x 240 = 64512 <= 65536 registers per SM (one CTA per SM: SMEM allows no more).
PRODUCER_REGISTERS = 24
CONSUMER_REGISTERS = 240
# Named barriers (0 is __syncthreads): P handed over, P consumed, the epilogue's row factors,
# and one per consumer warpgroup for zeroing its V half.
P_READY, P_FREE, EPILOGUE, ZEROED = 1, 2, 3, 4


class MlaDecodeV2(MlaDecodeV1):
    """Producer warpgroup + two consumer warpgroups over a ``kv_stages``-deep TMA pipeline."""

    threads = 3 * WARPGROUP_THREADS
    consumer_threads = 2 * WARPGROUP_THREADS

    def __init__(self, page: int, split_kv: bool, kv_stages: int | None = None) -> None:
        super().__init__(page, split_kv)
        self.kv_stages = kv_stages if kv_stages is not None else common.max_kv_stages()
        need = common.smem_budget(self.kv_stages).total
        if need > common.smem_capacity():
            raise ValueError(
                f"{self.kv_stages} KV stages need {need} B of SMEM, more than the {common.smem_capacity()} B "
                f"a block may use; use at most {common.max_kv_stages()}"
            )

    def _shared_storage(
        self,
        dtype: type[cutlass.Numeric],
        q_layout: cute.ComposedLayout,
        kv_layout: cute.ComposedLayout,
        p_layout: cute.ComposedLayout,
    ) -> type:
        stages = self.kv_stages

        @cute.struct
        class SharedStorage:
            barriers: cute.struct.MemRange[cutlass.Int64, 1]  # Q loaded
            kv_barriers: cute.struct.MemRange[cutlass.Int64, 2 * stages]  # full[stages], empty[stages]
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
        m_tile, split, batch = cute.arch.block_idx()

        storage = SmemAllocator().allocate(self.shared_storage)
        sQ, sKV, sV, sP, s_factor = self._smem_tensors(storage, q_layout, kv_layout, p_layout)
        q_bar = storage.barriers.data_ptr()
        kv_bytes = TILE_N * D_QK * sKV.element_type.width // 8
        # --8<-- [start:kv_pipeline]
        kv_pipeline = pipeline.PipelineTmaAsync.create(
            barrier_storage=storage.kv_barriers.data_ptr(),
            num_stages=self.kv_stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            # One arrival per consumer warp (its lane 0 signals) frees a stage.
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.consumer_threads // 32),
            tx_count=kv_bytes,
            defer_sync=True,
        )
        # --8<-- [end:kv_pipeline]
        if tidx == 0:
            cpasync.prefetch_descriptor(tma_q)
            cpasync.prefetch_descriptor(tma_kv)
            cute.arch.mbarrier_init(q_bar, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()

        tQsQ, tQgQ, tKVsKV, tKVgKV = self._tma_views(tma_q, mQ, tma_kv, mKV, sQ, sKV)
        length = mSeqlens[batch]
        first_block, end_block = self._kv_range(cute.ceil_div(length, TILE_N), split, mLsePart)

        # --8<-- [start:roles]
        if wg == 0:
            cute.arch.setmaxregister_decrease(PRODUCER_REGISTERS)
            if warp == 0:
                self._load_q(tma_q, tQgQ, tQsQ, m_tile, batch, q_bar)
                last_slot = cute.ceil_div(length, self.page) - 1
                state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.kv_stages)
                for block in cutlass.range(first_block, end_block, unroll=1):
                    kv_pipeline.producer_acquire(state)
                    self._issue_kv_copies(
                        tma_kv, tKVgKV, tKVsKV, mBlockTable, batch, block * TILE_N, last_slot, state.index,
                        kv_pipeline.producer_get_barrier(state),
                    )
                    state.advance()
        else:
            cute.arch.setmaxregister_increase(CONSUMER_REGISTERS)
            self._consume(
                kv_pipeline, q_bar, (sQ, sKV, sV, sP, s_factor), (mO, mLse, mOPart, mLsePart),
                (m_tile, split, batch), heads, mQ.shape[0] // heads, length, first_block, end_block,
            )
        # --8<-- [end:roles]

    @cute.jit
    def _issue_kv_copies(
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
    ) -> None:
        """The TMA copies of one KV block into ``stage`` (the pipeline armed ``bar`` already); a
        rolled loop over the pages a block spans keeps the 24-register producer from spilling."""
        for c in cutlass.range(self.copies_per_block, unroll=1):
            tile_in_page, page = common.kv_page_coords(
                mBlockTable, batch, kv_start + c * self.rows_per_copy, last_slot, self.page
            )
            cute.copy(tma_kv, tKVgKV[(None, tile_in_page, 0, page)], tKVsKV[(None, c, 0, stage)], tma_bar_ptr=bar)

    # --8<-- [start:consume]
    @cute.jit
    def _consume(
        self,
        kv_pipeline: pipeline.PipelineTmaAsync,
        q_bar: cute.Pointer,
        smem: tuple,
        outputs: tuple,
        coords: tuple,
        heads: cutlass.Int32,
        tokens: cutlass.Int32,
        length: cutlass.Int32,
        first_block: cutlass.Int32,
        end_block: cutlass.Int32,
    ) -> None:
        """A consumer warpgroup: half 0 computes S, the softmax and ``O_left``; half 1 ``O_right``."""
        sQ, sKV, sV, sP, s_factor = smem
        tidx, _, _ = cute.arch.thread_idx()
        half = cute.arch.make_warp_uniform(cute.arch.warp_idx()) // 4 - 1
        thr_qk, thr_pv, tSrQ, tSrK, tOrP, tOrV = self._mma_views(sQ, sKV, sV, sP, half, tidx % WARPGROUP_THREADS)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((TILE_M, V_HALF)), cutlass.Float32)
        acc_o.fill(0.0)
        c_mn = common.acc_mn(thr_qk.partition_C(cute.make_identity_tensor((TILE_M, TILE_N))))
        rows_state = self._row_state(c_mn, coords[0], heads, tokens, length)
        views = (thr_qk, tSrQ, tSrK, tOrP, tOrV, c_mn)
        blocks = (length, first_block, end_block)
        cute.arch.mbarrier_wait(q_bar, 0)
        if half == 0:
            self._softmax_half(kv_pipeline, smem, views, acc_o, rows_state, blocks)
        else:
            self._second_half(kv_pipeline, smem, views, acc_o, blocks)
        epilogue = pipeline.NamedBarrier(barrier_id=EPILOGUE, num_threads=self.consumer_threads)
        self._epilogue(outputs, s_factor, epilogue, half, acc_o, rows_state[1:3], c_mn, thr_pv, coords, heads)

    @cute.jit
    def _softmax_half(
        self,
        kv_pipeline: pipeline.PipelineTmaAsync,
        smem: tuple,
        views: tuple,
        acc_o: cute.Tensor,
        rows_state: tuple,
        blocks: tuple,
    ) -> None:
        """Consumer 0, per KV block: S, softmax, P to SMEM (``P ready``), then ``O_left += P V_left``."""
        _, sKV, _, sP, s_factor = smem
        thr_qk, tSrQ, tSrK, tOrP, tOrV, c_mn = views
        length, first_block, end_block = blocks
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, TILE_N)), cutlass.Float32)
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.kv_stages)
        for block in cutlass.range(first_block, end_block, unroll=1):
            kv_pipeline.consumer_wait(read)
            kv_start = block * TILE_N
            self._zero_v_half(sKV, read.index, kv_start, length, 0)
            if block > first_block:
                self._p_free().arrive_and_wait()  # the other half is done reading the previous P
            self._scores_to_probs(thr_qk, tSrQ, tSrK, read.index, acc_s, c_mn, kv_start, rows_state, sP, s_factor)
            self._p_ready().arrive()
            self._accumulate_pv(acc_o, tOrP, tOrV, read.index, s_factor, c_mn)
            kv_pipeline.consumer_release(read)
            read.advance()
        # The epilogue overwrites the row factors: wait until the other half read the last ones.
        if first_block < end_block:
            self._p_free().arrive_and_wait()

    @cute.jit
    def _second_half(
        self, kv_pipeline: pipeline.PipelineTmaAsync, smem: tuple, views: tuple, acc_o: cute.Tensor, blocks: tuple
    ) -> None:
        """Consumer 1, per KV block: wait for P (``P ready``), ``O_right += P V_right``, ``P free``."""
        _, sKV, _, _, s_factor = smem
        _, _, _, tOrP, tOrV, c_mn = views
        length, first_block, end_block = blocks
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.kv_stages)
        for block in cutlass.range(first_block, end_block, unroll=1):
            kv_pipeline.consumer_wait(read)
            self._zero_v_half(sKV, read.index, block * TILE_N, length, 1)
            self._p_ready().arrive_and_wait()
            self._accumulate_pv(acc_o, tOrP, tOrV, read.index, s_factor, c_mn)
            self._p_free().arrive()
            kv_pipeline.consumer_release(read)
            read.advance()

    # --8<-- [end:consume]

    def _p_ready(self) -> pipeline.NamedBarrier:
        return pipeline.NamedBarrier(barrier_id=P_READY, num_threads=self.consumer_threads)

    def _p_free(self) -> pipeline.NamedBarrier:
        return pipeline.NamedBarrier(barrier_id=P_FREE, num_threads=self.consumer_threads)

    @cute.jit
    def _zero_v_half(
        self, sKV: cute.Tensor, stage: cutlass.Int32, kv_start: cutlass.Int32, length: cutlass.Int32, half: cutlass.Constexpr
    ) -> None:
        """In a block that runs past the sequence, zero this warpgroup's V half of the rows past it."""
        if kv_start + TILE_N > length:
            tidx, _, _ = cute.arch.thread_idx()
            common.zero_kv_rows(
                sKV[(None, None, stage)], length - kv_start, half * V_HALF, V_HALF, tidx % WARPGROUP_THREADS, WARPGROUP_THREADS
            )
            cute.arch.fence_proxy("async.shared", space="cta")
            pipeline.NamedBarrier(barrier_id=ZEROED + half, num_threads=WARPGROUP_THREADS).arrive_and_wait()


__all__ = ["CONSUMER_REGISTERS", "PRODUCER_REGISTERS", "MlaDecodeV2"]
