"""Step 1, ``sm100_gemm_two_cta``: a CTA pair issues one 256-row tcgen05 MMA, with TMA multicast (sm_100a).

Over ``tcgen05`` (one CTA per 128 x N tile):

- **The pair.** ``CtaGroup.TWO``: one ``tcgen05.mma`` of M = 256 reads A and B from *both* CTAs'
  SMEM and writes each CTA's 128 rows of the accumulator into that CTA's own TMEM. Each CTA
  loads its 128 rows of A and half of B's rows, so one stage holds 16 + 16 KiB instead of
  16 + 32 KiB (fp16, N = 256) and more stages fit. Only the leader (V = 0) waits for full
  stages and issues the MMAs; the peer only loads. The full barrier of the leader counts both
  CTAs' bytes, and the leader's ``tcgen05.commit`` frees the stage in both CTAs at once.
- **Multicast.** On a cluster with more than one CTA column (the default 2 x 2), the CTAs of a
  row need the same A rows: each CTA loads its share of A once and the TMA unit writes it into
  every CTA of the row (``mcast_mask``); B likewise along the cluster's M when it has more than
  one pair.
- **Tails.** Barriers are now signalled from other CTAs, so before the CTA may exit the
  producer waits for every stage's release (``ab_producer.tail()``) and the leader for both
  CTAs' release of the accumulator; TMEM is allocated and freed for the pair, the free waiting
  for the peer's allocator warp.

Structure otherwise as ``tcgen05``: warp 0 loads and (on the leader) issues MMAs in one
software-pipelined loop; all four warps run the TMEM -> registers -> global epilogue.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_1.py``
(pinned commit). Compile-verified only: no SM100 GPU here, numerics unverified.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import tcgen05
from cutlass.memory import TmemAllocator, get_num_tmem_alloc_cols

from mla_var3.kernel.cute_python.gemm.sm100_gemm import common


class Sm100GemmTwoCta(common.Sm100Gemm):
    """C[M,N] = A[M,K] @ B[N,K]^T, one 256 x N MMA tile per CTA pair, on clusters of ``cluster_mn`` CTAs."""

    def __init__(
        self, mma_tiler_mn: tuple[int, int] = (256, 256), cluster_mn: tuple[int, int] = (2, 2)
    ) -> None:
        super().__init__(mma_tiler_mn, cluster_mn)  # as many A/B stages as fit

    @cute.jit
    def run(self, cta: common.CtaSetup) -> None:
        bidx, bidy, _ = cute.arch.block_idx()
        mma_m, mma_n = bidx // self.pair, bidy  # the pair's MMA tile
        tidx, warp_idx, storage, ops, place = cta.tidx, cta.warp_idx, cta.storage, cta.ops, cta.place
        tiled_mma = cta.tiled_mma
        if warp_idx == 0:
            ops.loads.prefetch_descriptors()

        # --8<-- [start:pair_setup]
        tmem = TmemAllocator(
            storage.tmem_address.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(
                barrier_id=common.TMEM_BARRIER_ID, num_threads=common.EPI_THREADS
            ),
            is_two_cta=True,  # tcgen05.alloc.cta_group::2: the same columns in both CTAs
            two_cta_tmem_dealloc_mbar_ptr=storage.tmem_dealloc_barrier.ptr,
        )
        acc_layout = cta.acc_layout(self.mma_tiler)  # this CTA's 128 rows of the pair's 256
        tmem.allocate(get_num_tmem_alloc_cols(acc_layout))
        # The leader's full barrier expects both CTAs' bytes; one multicast commit frees a stage everywhere.
        ab_producer, ab_consumer = common.make_ab_pipeline(cta, self.budget.ab_stages)
        # Both CTAs' 128 epilogue threads release the accumulator to the leader.
        acc_producer, acc_consumer = common.make_acc_pipeline(
            1, common.EPI_THREADS, cta.vmnk, storage.acc_barriers.data_ptr()
        )
        # --8<-- [end:pair_setup]
        tmem.wait_for_alloc()
        tmem_ptr = tmem.retrieve_ptr(cutlass.Float32)
        acc = cute.make_tensor(tmem_ptr, acc_layout.layout)

        # --8<-- [start:pair_mainloop]
        if warp_idx == 0:
            if place.is_leader:
                acc_producer.acquire()  # an empty accumulator
            tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
            for k_tile in cutlass.range(ops.k_tiles, prefetch_stages=self.budget.ab_stages - 2):
                ab_producer = ops.loads.issue(ab_producer, mma_m, mma_n, k_tile)  # both CTAs: their halves
                if place.is_leader:  # one MMA for the pair, reading both CTAs' SMEM
                    ab_consumer, tiled_mma = common.mma_k_tile(
                        ab_consumer, tiled_mma, acc, ops.tCrA, ops.tCrB
                    )
            if place.is_leader:
                acc_producer.commit()  # tcgen05.commit, multicast to both CTAs' accumulator barrier
                acc_producer.advance()
        # --8<-- [end:pair_mainloop]

        # --8<-- [start:pair_epilogue]
        tmem.relinquish_alloc_permit()
        acc_consumer = common.store_tile_direct(
            acc_consumer, acc, ops.tCgC[(None, None, None, mma_m, mma_n)], tidx
        )
        if warp_idx == 0:
            ab_producer.tail()  # every stage's release has arrived: no late commit into this CTA's SMEM
            acc_producer.tail()  # leader only: both CTAs' epilogues have released the accumulator
        pipeline.sync(barrier_id=common.TMEM_BARRIER_ID)  # every warp has read its TMEM lanes
        tmem.free(tmem_ptr)  # waits for the peer's allocator warp on the dealloc mbarrier
        # --8<-- [end:pair_epilogue]
