"""Step v3 of the Hopper GEMM worklog: a persistent grid with a tile schedule and rasterization.

v2 launched one CTA per tile: every CTA paid its own prologue (barrier set-up, pipeline fill)
and, at the end of each wave, SMs idled until the next CTA started. Now the grid is at most
one CTA per SM (``max_ctas``, from the driver's occupancy calculator on the host) and each
CTA walks a list of tiles: work unit ``first``, ``first + grid``, ... The producer streams
the K tiles of all its tiles back to back through one ring, so the next tile's loads overlap
this tile's math and epilogue, and the pipeline states carry over from tile to tile.

The order of the work units is the v5 kernel's banded raster (imported from
``warp_specialized/kernel.py``, where the page on persistent tile rasterization shows it): units
walk ``raster_group_m`` tile rows column by column, so the CTAs running at one time share rows
of A and columns of B in L2. ``raster_group_m = 1`` walks C row by row. The producer loop is
the v5 kernel's ``_produce`` itself; here it runs with 1 x 1 clusters (no multicast: mask 0).
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v2.kernel import HopperGemmV2
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    WARPGROUP_THREADS,
    HopperGemmWS,
)


class HopperGemmV3(HopperGemmV2):
    """v2 on a persistent grid; ``raster_group_m``: tile rows per band of the tile order."""

    def __init__(
        self, tile_mn: tuple[int, int] = (128, 256), stages: int | None = None, raster_group_m: int = 8
    ) -> None:
        super().__init__(tile_mn, stages)
        self.raster_group_m = raster_group_m
        self.cluster_mn = (1, 1)  # the tile order below is written for clusters; v3 has none

    # The v5 kernel's tile order and producer (clusters of one CTA make cluster tiles CTA tiles).
    _work_units = HopperGemmWS._work_units
    _cluster_tile = HopperGemmWS._cluster_tile
    _cta_tile = HopperGemmWS._cta_tile

    # --8<-- [start:persistent_launch]
    @cute.jit
    def __call__(
        self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, max_ctas: cutlass.Int32, stream: cuda.CUstream
    ) -> None:
        """Launch ``min(tiles, max_ctas)`` CTAs (pass how many fit on the GPU at once); the work
        units are numbered along the grid's z mode, as the v5 kernel numbers its clusters."""
        tiles = cute.ceil_div(c.shape[0], self.tile_mnk[0]) * cute.ceil_div(c.shape[1], self.tile_mnk[1])
        self._launch(a, b, c, (1, 1, cutlass.min(tiles, max_ctas)), stream)

    # --8<-- [end:persistent_launch]

    @cute.jit
    def _produce(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        a_load: tuple,
        b_load: tuple,
        k_tiles: cutlass.Int32,
        tiles_mn: tuple,
    ) -> None:
        """The v5 kernel's producer loop: every K tile of every work unit of this CTA."""
        HopperGemmWS._produce(self, ab_pipeline, (*a_load, 0), (*b_load, 0), k_tiles, tiles_mn)

    # --8<-- [start:persistent_consumer]
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
        """A consumer thread walks the same work units as the producer, in the same order;
        its read state runs on across tiles, exactly as the producer's state does."""
        tiled_mma, thr_mma, tCrA, tCrB, acc = self._mma_fragments(sA, sB, tidx - WARPGROUP_THREADS)
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        first, step = self._work_units()
        for work in cutlass.range(first, tiles_mn[0] * tiles_mn[1], step, unroll=1):
            m_tile, n_tile = self._cta_tile(work, tiles_mn)
            read = self._mma_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB, k_tiles)
            self._store_direct(thr_mma, acc, mC, m_tile, n_tile)

    # --8<-- [end:persistent_consumer]


__all__ = ["HopperGemmV3"]
