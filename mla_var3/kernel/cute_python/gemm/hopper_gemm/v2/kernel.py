"""Step v2 of the Hopper GEMM worklog: warp specialization with register reallocation.

In v1 warp 0 both loaded and computed, so a load could be issued only between its own
WGMMAs. Now the CTA has one more warpgroup, a **producer**: one of its warps does nothing but
issue TMA loads into the ring, waiting only for empty slots. The **consumer** warpgroups
(64 rows of the tile each) only wait for full slots and run WGMMA, and they keep one K tile's
WGMMAs in flight: tile k is issued before tile k-1's completion is awaited, and only then is
slot k-1 released.

Three warpgroups at one CTA per SM start with 168 registers per thread (65536 / 384, rounded
down to a multiple of 8). ``setmaxnreg`` moves registers within that pool: the producer
warpgroup drops to 40 and the consumers rise to 232, enough for a 64 x 256 fp32 accumulator
(128 registers) and everything around it: 128 x (40 + 2 x 232) = 384 x 168. The budgets are
the v5 kernel's constants; ``setmaxnreg`` needs the launch bound ``min_blocks_per_mp=1``.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import warpgroup

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v1.kernel import HopperGemmV1
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    CONSUMER_REGISTERS,
    PRODUCER_REGISTERS,
    WARPGROUP_THREADS,
    WARPS_PER_WARPGROUP,
)


class HopperGemmV2(HopperGemmV1):
    """v1 with a producer warpgroup beside the ``tile_m / 64`` consumer warpgroups."""

    min_blocks_per_mp = 1  # a register cap at entry, so setmaxnreg can move registers

    def __init__(self, tile_mn: tuple[int, int] = (128, 256), stages: int | None = None) -> None:
        super().__init__(tile_mn, stages)
        self.threads = WARPGROUP_THREADS * (1 + self.consumer_wgs)

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
        storage, sA, sB, a_load, b_load = self._smem_operands(tma_a, mA, tma_b, mB, a_layout, b_layout)
        ab_pipeline = self._make_pipeline(storage, sA.element_type, self.consumer_wgs * WARPGROUP_THREADS)
        tiles_mn = (
            cute.ceil_div(mC.shape[0], self.tile_mnk[0]),
            cute.ceil_div(mC.shape[1], self.tile_mnk[1]),
        )
        self._run_roles(ab_pipeline, a_load, b_load, (sA, sB, mC), tiles_mn)

    # --8<-- [start:warp_roles]
    @cute.jit
    def _run_roles(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        a_load: tuple,
        b_load: tuple,
        consumer_args: tuple,
        tiles_mn: tuple,
    ) -> None:
        """Warpgroup 0 produces (its warp 0 issues the loads), warpgroups 1.. consume.
        ``setmaxnreg`` is warpgroup-wide: all four producer warps give registers back."""
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        k_tiles = cute.size(a_load[1], mode=[2])
        if warp_idx // WARPS_PER_WARPGROUP == 0:
            cute.arch.setmaxregister_decrease(PRODUCER_REGISTERS)
            if warp_idx == 0:
                self._produce(ab_pipeline, a_load, b_load, k_tiles, tiles_mn)
        else:
            cute.arch.setmaxregister_increase(CONSUMER_REGISTERS)
            self._consume(
                ab_pipeline, *consumer_args, tidx, warp_idx // WARPS_PER_WARPGROUP - 1, k_tiles, tiles_mn
            )

    # --8<-- [end:warp_roles]

    @cute.jit
    def _produce(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        a_load: tuple,
        b_load: tuple,
        k_tiles: cutlass.Int32,
        tiles_mn: tuple,
    ) -> None:
        """The producer warp: stream this CTA's K tiles through the ring, then wait until the
        consumers have released the last slots (no arrival may land after the CTA exits)."""
        m_tile, n_tile, _ = cute.arch.block_idx()
        # --8<-- [start:producer]
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        for _k in cutlass.range(k_tiles, unroll=1):
            self._load_k_tile(ab_pipeline, state, a_load, b_load, m_tile, n_tile)
            state.advance()
        ab_pipeline.producer_tail(state)
        # --8<-- [end:producer]

    @cute.jit
    def _consume(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        sA: cute.Tensor,
        sB: cute.Tensor,
        mC: cute.Tensor,
        tidx: cutlass.Int32,
        consumer_wg: cutlass.Int32,
        k_tiles: cutlass.Int32,
        tiles_mn: tuple,
    ) -> None:
        """A consumer thread (of warpgroup ``consumer_wg`` among the consumers): this CTA's tile,
        then the direct epilogue. (The arguments are the v5 kernel's ``_consume``'s.)"""
        m_tile, n_tile, _ = cute.arch.block_idx()
        tiled_mma, thr_mma, tCrA, tCrB, acc = self._mma_fragments(sA, sB, tidx - WARPGROUP_THREADS)
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        self._mma_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB, k_tiles)
        self._store_direct(thr_mma, acc, mC, m_tile, n_tile)

    # --8<-- [start:consumer_mainloop]
    @cute.jit
    def _mma_tile(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        read: pipeline.PipelineState,
        tiled_mma: cute.TiledMma,
        acc: cute.Tensor,
        tCrA: cute.Tensor,
        tCrB: cute.Tensor,
        k_tiles: cutlass.Int32,
    ) -> pipeline.PipelineState:
        """Accumulate one tile over ``k_tiles`` slots starting at ``read``; returns the state past
        them. One K tile's WGMMAs stay in flight: after issuing tile k, wait until only they are
        pending, so tile k-1's WGMMAs have read their slot and it can be released."""
        acc.fill(0.0)
        release = read.clone()
        for k in cutlass.range(k_tiles, unroll=1):
            self._mma_k_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
            read.advance()
            warpgroup.wait_group(1)
            if k > 0:
                ab_pipeline.consumer_release(release)
                release.advance()
        warpgroup.wait_group(0)
        ab_pipeline.consumer_release(release)
        return read

    # --8<-- [end:consumer_mainloop]


__all__ = ["HopperGemmV2"]
