"""Step 4, ``sm100_gemm_persistent_clc``: persistent warp roles on a CLC dynamic tile schedule (sm_100a).

Over ``persistent_static``: the grid is every tile again, as for a non-persistent kernel, and
a running cluster that finishes a tile asks the hardware to *cancel* a cluster that has not
started yet and takes over its tile (Cluster Launch Control). The schedule adapts to however
many clusters actually run, instead of assuming one full wave.

- **Query.** Warp 6 of the cluster's first CTA (the scheduler warp) acquires the one-stage CLC
  pipeline, which arms the full barrier of every CTA of the cluster with 16 bytes, and one of
  its threads issues ``clusterlaunchcontrol.try_cancel`` (multicast): the hardware writes the
  16-byte answer into each CTA's SMEM and completes the bytes on each CTA's barrier
  (``UGETNEXTWORKID`` in the SASS).
- **Answer.** Every role of every CTA waits on its own CTA's full barrier, decodes the answer
  (``clusterlaunchcontrol.query_cancel``: canceled or not, the first CTA of the cancelled
  cluster), fences the proxy so the next query may overwrite it, and releases to the first
  CTA's empty barrier. The first tile is the CTA's own block index, never queried.
- **End.** A failed cancel (nothing left) ends every loop on the same answer; the scheduler
  warp's ``producer_tail`` waits for the last answer's releases before the CTA exits.

The DSL's ``cutlass.utils.ClcDynamicPersistentTileScheduler`` does this (deprecated in 4.8.1,
"migrated to examples/CuTeDSL/helpers"); :class:`ClcSchedule` writes it out over the library's
``PipelineClcFetchAsync`` and ``cute.arch.issue_clc_query`` / ``clc_response``.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_3_1.py``
and ``python/CuTeDSL/cutlass/utils/dynamic_persistent_tile_scheduler.py`` (pinned commit).
Compile-verified only: no SM100 GPU here, numerics unverified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from mla_var3.kernel.cute_python.gemm.sm100_gemm.common import (
    CLC_RESPONSE_BYTES,
    EPI_WARPS,
    CtaSetup,
    PersistentGemm,
)


# --8<-- [start:clc_schedule]
@dataclass(frozen=True)
class ClcSchedule:
    """Tiles from Cluster Launch Control: the CTA's own first, then those of clusters it cancels."""

    fetch: pipeline.PipelineClcFetchAsync  # one stage: a 16-byte answer per CTA, CTA 0's empty barrier
    response: cute.Pointer  # this CTA's copy of the answer, in SMEM
    cluster_mn: tuple[int, int]

    def first(self) -> tuple[Any, Any, Any, Any]:
        tile_m, tile_n, _ = cute.arch.block_idx()
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 1)
        return state, tile_m, tile_n, cutlass.Boolean(True)

    def next(self, state: pipeline.PipelineState) -> tuple[Any, Any, Any, Any]:
        """Every role: read the answer the scheduler warp asked for, then release it."""
        self.fetch.consumer_wait(state)
        first_m, first_n, _, canceled = cute.arch.clc_response(self.response)
        cute.arch.fence_proxy("async.shared", space="cta")  # read before the next query rewrites it
        self.fetch.consumer_release(state)
        state.advance()
        bidx, bidy, _ = cute.arch.block_idx()
        tile_m = first_m + bidx % self.cluster_mn[0]  # the cancelled cluster's CTA at this CTA's place
        tile_n = first_n + bidy % self.cluster_mn[1]
        return state, tile_m, tile_n, canceled != 0

    @cute.jit
    def produce(self) -> None:
        """Scheduler warp of the cluster's first CTA: one query ahead of the tile being computed."""
        if cute.arch.block_idx_in_cluster() == 0:
            query = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 1)
            state, _, _, valid = self.first()
            while valid:
                self.fetch.producer_acquire(query)  # all read the last answer; arm every CTA's barrier
                with cute.arch.elect_one():
                    cute.arch.issue_clc_query(self.fetch.producer_get_barrier(query), self.response)
                query.advance()
                state, _, _, valid = self.next(state)
            self.fetch.producer_tail(query)  # the last answer's releases have arrived
# --8<-- [end:clc_schedule]


class Sm100GemmPersistentClc(PersistentGemm):
    """Persistent warp-specialized 2-CTA GEMM whose clusters steal the tiles of clusters not yet launched."""

    warps = PersistentGemm.warps + 1  # warp 6, the scheduler warp, asks for the next tile

    # --8<-- [start:clc_pipeline]
    def make_schedule(self, cta: CtaSetup) -> ClcSchedule:
        # Who reads each answer: the scheduler warp, and the MMA, TMA and epilogue warps of every CTA.
        readers = 32 * (1 + cute.size(cta.vmnk) * (EPI_WARPS + 2))
        fetch = pipeline.PipelineClcFetchAsync.create(
            num_stages=1,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, readers),
            tx_count=CLC_RESPONSE_BYTES,
            barrier_storage=cta.storage.clc_barriers.data_ptr(),
            cta_layout_vmnk=cta.vmnk,
        )
        return ClcSchedule(fetch, cta.storage.clc_response.data_ptr(), self.cluster_mn)

    # --8<-- [end:clc_pipeline]
