"""Step 3, ``sm100_gemm_persistent_static``: persistent warp roles on a static tile schedule (sm_100a).

Over ``ws_tma_store``: the grid holds at most one wave of clusters, and each role of each CTA
loops over output tiles (:class:`~mla_var3.kernel.cute_python.gemm.sm100_gemm.common.PersistentGemm`).
Which tiles is a pure function of the block index, so the TMA warp, the MMA warp and the
epilogue warps each compute the same sequence without talking: cluster ``z`` of ``G`` takes
cluster tiles ``z, z + G, z + 2G, ...`` in M-fastest order. That is what the DSL's
``cutlass.utils.StaticPersistentTileScheduler`` does (deprecated in 4.8.1, "migrated to
examples/CuTeDSL/helpers"); :class:`StaticSchedule` writes it out. One TMEM accumulator stage:
the MMA warp waits for the epilogue to drain it before the next tile (step 5 adds a second).

``G`` is the number of clusters one wave holds: a B200's 148 SMs over the cluster size, passed
in as ``sm_count`` (no SM100 GPU here to ask; on one, ``HardwareInfo().get_max_active_clusters``).

Learned from CUTLASS ``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_3.py``
and ``python/CuTeDSL/cutlass/utils/static_persistent_tile_scheduler.py`` (pinned commit).
Compile-verified only: no SM100 GPU here, numerics unverified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.gemm.sm100_gemm.common import CTA_TILE_M, CtaSetup, PersistentGemm

B200_SM_COUNT = 148


# --8<-- [start:static_schedule]
@dataclass(frozen=True)
class StaticSchedule:
    """Cluster ``z`` of ``G`` (``blockIdx.z`` of ``gridDim.z``) takes cluster tiles z, z + G, ...

    The state is the linear cluster-tile index; a CTA's tile is its cluster tile's corner plus
    its place in the cluster (``blockIdx.x``, ``blockIdx.y``: the grid is one cluster wide).
    """

    clusters_m: Any  # cluster tiles along M
    cluster_tiles: Any  # cluster tiles in all
    cluster_mn: tuple[int, int]

    def tile(self, unit: Any) -> tuple[Any, Any, Any, Any]:
        cta_m, cta_n, _ = cute.arch.block_idx()
        cluster_m, cluster_n = unit % self.clusters_m, unit // self.clusters_m
        tile_m = cluster_m * self.cluster_mn[0] + cta_m
        tile_n = cluster_n * self.cluster_mn[1] + cta_n
        return unit, tile_m, tile_n, unit < self.cluster_tiles

    def first(self) -> tuple[Any, Any, Any, Any]:
        return self.tile(cute.arch.block_idx()[2])

    def next(self, unit: Any) -> tuple[Any, Any, Any, Any]:
        return self.tile(unit + cute.arch.grid_dim()[2])
# --8<-- [end:static_schedule]


class Sm100GemmPersistentStatic(PersistentGemm):
    """Persistent warp-specialized 2-CTA GEMM: one wave of clusters walks the tiles in a fixed order."""

    def __init__(
        self,
        mma_tiler_mn: tuple[int, int] = (256, 256),
        cluster_mn: tuple[int, int] = (2, 1),
        sm_count: int = B200_SM_COUNT,
    ) -> None:
        super().__init__(mma_tiler_mn, cluster_mn)
        self.max_active_clusters = sm_count // (self.cluster_mn[0] * self.cluster_mn[1])

    def cluster_counts(self, c: cute.Tensor) -> tuple[Any, Any]:
        """Cluster tiles of C along M and N."""
        cluster_m, cluster_n = self.cluster_mn
        return (
            cute.ceil_div(c.layout.shape[0], CTA_TILE_M * cluster_m),
            cute.ceil_div(c.layout.shape[1], self.mma_tiler[1] * cluster_n),
        )

    # --8<-- [start:static_grid]
    def grid(self, c: cute.Tensor) -> Any:
        """One cluster wide, ``min(cluster tiles, clusters per wave)`` deep: a single wave."""
        clusters_m, clusters_n = self.cluster_counts(c)
        return (*self.cluster_mn, cutlass.min(clusters_m * clusters_n, self.max_active_clusters))

    def make_schedule(self, cta: CtaSetup) -> StaticSchedule:
        clusters_m, clusters_n = self.cluster_counts(cta.c_out.tma_tensor)
        return StaticSchedule(clusters_m, clusters_m * clusters_n, self.cluster_mn)

    # --8<-- [end:static_grid]
