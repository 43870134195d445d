"""FMHA forward v1 (sm_90a): v0 + warp specialization and multistage K and V pipelines.

**What it changes.** v0 waits for every load and keeps its two warpgroups in lockstep. v1
splits the CTA into roles, as our Hopper GEMM and MLA decode v2 do:

- **Producer warpgroup** (warp 0 issues; the warpgroup gives registers back with
  ``setmaxregister_decrease``): loads the two Q tiles once, then streams K and V blocks, last
  block first, into two rings of ``stages`` SMEM buffers, each a ``PipelineTmaAsync`` (full
  barrier: the TMA's transaction bytes; empty barrier: one arrival per consumer warp). K and V
  have rings of their own, so K of the next block can land while V of this one is still read.
  The stage count is what fits beside the Q tiles (``common.max_stages``: 3 at tile_n = 128).
- **Two consumer warpgroups** (``setmaxregister_increase``), each owning 64 query rows: per KV
  block wait for K, ``S = Q K^T``, release K, the online softmax in registers, P into the A
  operand, wait for V, ``O += P V``, release V. Neither waits for the other: the tensor cores
  see two independent streams, so one warpgroup's WGMMAs can run during the other's softmax
  -- when their timing happens to interleave; nothing enforces it (v2 does).

The epilogue (O through the warpgroup's Q tile and a TMA store, the LSE from registers) and the
walk (last block first, masked steps, causal tile skipping) are v0's.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.attention.fmha import common
from mla_var3.kernel.cute_python.attention.fmha.common import CTA_M, WARPGROUP_THREADS
from mla_var3.kernel.cute_python.attention.fmha.v0.kernel import FmhaHopperV0

# 128 x 24 + 256 x 240 = 64512 <= 65536 registers per SM (one CTA per SM: SMEM allows no more).
PRODUCER_REGISTERS = 24
CONSUMER_REGISTERS = 240


class FmhaHopperV1(FmhaHopperV0):
    """A TMA producer warpgroup and two consumer warpgroups over ``stages``-deep K and V rings."""

    threads = 3 * WARPGROUP_THREADS
    consumer_threads = 2 * WARPGROUP_THREADS

    def __init__(self, causal: bool, tile_n: int = 128, stages: int | None = None) -> None:
        super().__init__(causal, tile_n)
        self.stages = stages if stages is not None else common.max_stages(tile_n)
        need = common.smem_budget(tile_n, self.stages).total
        if need > common.smem_capacity():
            raise ValueError(
                f"{self.stages} K/V stages of {tile_n} keys need {need} B of SMEM, more than the "
                f"{common.smem_capacity()} B a block may use; use at most {common.max_stages(tile_n)}"
            )

    @cute.kernel
    def kernel(
        self,
        tma_q: cute.CopyAtom,
        mQ: cute.Tensor,
        tma_k: cute.CopyAtom,
        mK: cute.Tensor,
        tma_v: cute.CopyAtom,
        mV: cute.Tensor,
        tma_o: cute.CopyAtom,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        q_layout: cute.ComposedLayout,
        k_layout: cute.ComposedLayout,
        v_layout: cute.ComposedLayout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        wg = warp // 4
        storage = SmemAllocator().allocate(self.shared_storage)
        smem = self._smem_tensors(storage, q_layout, k_layout, v_layout)
        q_bar = storage.barriers_.data_ptr()
        # --8<-- [start:pipelines]
        # K's full/empty barriers follow the two Q barriers; V's follow K's.
        k_pipe = self._kv_pipeline(q_bar + 2)
        v_pipe = self._kv_pipeline(q_bar + 2 + 2 * self.stages)
        # --8<-- [end:pipelines]
        if tidx == 0:
            for atom in (tma_q, tma_k, tma_v, tma_o):
                cpasync.prefetch_descriptor(atom)
            for tile in cutlass.range_constexpr(2):
                cute.arch.mbarrier_init(q_bar + tile, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()

        coords = self._block_coords(mQ)
        tma = self._tma_views(tma_q, mQ, tma_k, mK, tma_v, mV, tma_o, mO, smem)
        n_blocks, masked = common.kv_schedule(
            coords[0] * CTA_M, mK.shape[0], self.tile_n, self.causal, cutlass.min
        )
        # --8<-- [start:roles]
        if wg == 0:
            cute.arch.setmaxregister_decrease(PRODUCER_REGISTERS)
            if warp == 0:
                self._produce(tma, coords, q_bar, (k_pipe, v_pipe), n_blocks)
        else:
            cute.arch.setmaxregister_increase(CONSUMER_REGISTERS)
            mma = self._mma_views(smem, wg - 1, tidx % WARPGROUP_THREADS)
            state = self._row_state(mma, coords, wg - 1, mK.shape[0])
            cute.arch.mbarrier_wait(q_bar + wg - 1, 0)
            self._consume(mma, state, (k_pipe, v_pipe), n_blocks, masked, wg - 1)
            self._epilogue(mma, state, tma, coords, mLse, smem[0], wg - 1)
        # --8<-- [end:roles]

    def _kv_pipeline(self, barriers: cute.Pointer) -> pipeline.PipelineTmaAsync:
        """A ring of ``stages`` K (or V) blocks: the full barrier counts the TMA's bytes, the empty
        one an arrival per consumer warp (its lane 0 signals)."""
        return pipeline.PipelineTmaAsync.create(
            barrier_storage=barriers,
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.consumer_threads // 32),
            tx_count=self._kv_bytes(),
            defer_sync=True,
        )

    # --8<-- [start:produce]
    @cute.jit
    def _produce(
        self, tma: tuple, coords: tuple, q_bar: cute.Pointer, pipes: tuple, n_blocks: cutlass.Int32
    ) -> None:
        """The producer warp: both Q tiles, then K and V of every visible block, last block first."""
        k_pipe, v_pipe = pipes
        for tile in cutlass.range_constexpr(2):
            self._load_q(tma, coords, tile, q_bar + tile)
        write = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        for step in cutlass.range(n_blocks, unroll=1):
            n = n_blocks - 1 - step
            k_pipe.producer_acquire(write)
            self._load_k(tma, coords, n, write.index, k_pipe.producer_get_barrier(write))
            v_pipe.producer_acquire(write)
            self._load_v(tma, coords, n, write.index, v_pipe.producer_get_barrier(write))
            write.advance()

    # --8<-- [end:produce]

    # --8<-- [start:consume]
    @cute.jit
    def _consume(
        self,
        mma: tuple,
        state: tuple,
        pipes: tuple,
        n_blocks: cutlass.Int32,
        masked: cutlass.Int32,
        wg: cutlass.Int32,
    ) -> None:
        """A consumer warpgroup's walk: ``masked`` steps with the mask, the rest without."""
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        for step in cutlass.range(masked, unroll=1):
            self._consume_block(mma, state, pipes, read, n_blocks - 1 - step, True)
            read.advance()
        for step in cutlass.range(masked, n_blocks, unroll=1):
            self._consume_block(mma, state, pipes, read, n_blocks - 1 - step, False)
            read.advance()

    # --8<-- [end:consume]

    # --8<-- [start:consume_block]
    @cute.jit
    def _consume_block(
        self,
        mma: tuple,
        state: tuple,
        pipes: tuple,
        read: pipeline.PipelineState,
        n: cutlass.Int32,
        masked: cutlass.Constexpr,
    ) -> None:
        """KV block ``n`` from stage ``read``: S, softmax, P V; each stage released once its WGMMAs are done."""
        k_pipe, v_pipe = pipes
        _, _, tSrQ, tSrK, tOrV, tOrP, acc_s, acc_o, _ = mma
        k_pipe.consumer_wait(read)
        common.issue_qk(self.dtype, self.tile_n, acc_s, tSrQ, tSrK[(None, None, None, read.index)])
        warpgroup.wait_group(0)
        k_pipe.consumer_release(read)
        self._softmax(mma, state, n, masked)
        self._rescale(acc_o, state[3])
        common.probs_to_operand(acc_s, tOrP)
        v_pipe.consumer_wait(read)
        common.issue_pv(self.dtype, self.tile_n, acc_o, tOrP, tOrV[(None, None, None, read.index)])
        warpgroup.wait_group(0)
        v_pipe.consumer_release(read)

    # --8<-- [end:consume_block]


__all__ = ["CONSUMER_REGISTERS", "PRODUCER_REGISTERS", "FmhaHopperV1"]
