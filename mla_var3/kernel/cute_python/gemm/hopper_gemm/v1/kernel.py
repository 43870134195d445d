"""Step v1 of the Hopper GEMM worklog: a multistage TMA pipeline on mbarriers.

v0 waited for every load before its math and for its math before the next load. Here the
A/B buffers become a ring of ``stages`` slots, each with a "full" mbarrier (the TMA unit
completes it with the slot's bytes) and an "empty" one (every consumer warp arrives on it once
its WGMMAs have read the slot), managed by ``cutlass.pipeline.PipelineTmaAsync``. Warp 0 fills
every slot before the first WGMMA and refills a slot as soon as it is released, so loads run
up to ``stages`` K tiles ahead of the math. No warp specialization yet: warp 0 loads in
between its own WGMMAs (as CUTLASS's non-persistent Hopper ``dense_gemm.py`` does), and each
K tile's WGMMAs are waited for before its slot is released.

The default tile grows to 128 x 256 (two warpgroups, 64 rows each): with the loads hidden
the tile is what sets how many FLOPs each loaded byte feeds.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import warpgroup

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.kernel import HopperGemmV0
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    TILE_K,
    HopperGemmWS,
    max_stages,
)


class HopperGemmV1(HopperGemmV0):
    """v0 with a ring of ``stages`` A/B slots (``None``: as many as fit in SMEM)."""

    def __init__(self, tile_mn: tuple[int, int] = (128, 256), stages: int | None = None) -> None:
        self.stages = stages if stages is not None else max_stages((*tile_mn, TILE_K), epi_stages=0)
        super().__init__(tile_mn)

    _mma_k_tile = HopperGemmWS._mma_k_tile  # wait for a full slot, issue its K tile's WGMMAs

    # --8<-- [start:pipeline]
    @cute.jit
    def _make_pipeline(
        self, storage: cute.struct, ab_dtype: type[cutlass.Numeric], consumer_threads: int
    ) -> pipeline.PipelineTmaAsync:
        """``stages`` full and empty mbarriers in ``storage``. A full barrier completes on one
        producer arrival plus the stage's TMA bytes; an empty one on one arrival per consumer
        warp (``enable_multicast_signaling`` turns the thread count into that warp count)."""
        tile_m, tile_n, tile_k = self.tile_mnk
        return pipeline.PipelineTmaAsync.create(
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, consumer_threads),
            tx_count=(tile_m + tile_n) * tile_k * ab_dtype.width // 8,
            barrier_storage=storage.ab_barriers.data_ptr(),
            enable_multicast_signaling=True,
        )

    @cute.jit
    def _load_k_tile(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        state: pipeline.PipelineState,
        a_load: tuple,
        b_load: tuple,
        m_tile: cutlass.Int32,
        n_tile: cutlass.Int32,
    ) -> None:
        """Wait until the slot ``state`` points at is empty, arm its full barrier, and load K tile
        ``state.count`` of A and B into it (the state counts K tiles: one tile per CTA)."""
        tma_a, tAgA, tAsA = a_load
        tma_b, tBgB, tBsB = b_load
        ab_pipeline.producer_acquire(state)
        full = ab_pipeline.producer_get_barrier(state)
        cute.copy(tma_a, tAgA[(None, m_tile, state.count)], tAsA[(None, state.index)], tma_bar_ptr=full)
        cute.copy(tma_b, tBgB[(None, n_tile, state.count)], tBsB[(None, state.index)], tma_bar_ptr=full)

    # --8<-- [end:pipeline]

    @cute.kernel
    def kernel(
        self,
        tma_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_b: cute.CopyAtom,
        mB: cute.Tensor,
        mC: cute.Tensor,
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        m_tile, n_tile, _ = cute.arch.block_idx()
        storage, sA, sB, a_load, b_load = self._smem_operands(tma_a, mA, tma_b, mB, a_layout, b_layout)
        ab_pipeline = self._make_pipeline(storage, sA.element_type, self.threads)
        tiled_mma, thr_mma, tCrA, tCrB, acc = self._mma_fragments(sA, sB, tidx)
        acc.fill(0.0)
        k_tiles = cute.size(a_load[1], mode=[2])

        # --8<-- [start:multistage_loop]
        # Prologue: warp 0 fills every slot (or all K tiles, if fewer).
        load = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        if warp_idx == 0:
            for _k in cutlass.range(cutlass.min(self.stages, k_tiles), unroll=1):
                self._load_k_tile(ab_pipeline, load, a_load, b_load, m_tile, n_tile)
                load.advance()
        # Mainloop: wait for slot k, run its WGMMAs to completion, release the slot; warp 0
        # then loads K tile k + stages into it. Up to `stages` loads are in flight meanwhile.
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        for _k in cutlass.range(k_tiles, unroll=1):
            self._mma_k_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
            warpgroup.wait_group(0)
            ab_pipeline.consumer_release(read)
            read.advance()
            if warp_idx == 0 and load.count < k_tiles:
                self._load_k_tile(ab_pipeline, load, a_load, b_load, m_tile, n_tile)
                load.advance()
        # --8<-- [end:multistage_loop]
        self._store_direct(thr_mma, acc, mC, m_tile, n_tile)


__all__ = ["HopperGemmV1"]
