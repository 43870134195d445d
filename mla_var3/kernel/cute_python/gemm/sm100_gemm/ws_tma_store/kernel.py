"""Step 2, ``sm100_gemm_ws_tma_store``: warp roles and a TMA-store epilogue on the CTA pair (sm_100a).

Over ``two_cta``: the CTA splits into roles that talk only through mbarriers and named barriers
(:class:`~mla_var3.kernel.cute_python.gemm.sm100_gemm.common.WarpSpecializedGemm`): a TMA warp
that runs ahead as far as the ring has room (no ``prefetch_stages`` needed), an MMA warp that
issues the pair's MMAs on the leader CTA, and four epilogue warps that drain TMEM through a
two-buffer SMEM ring into TMA stores. Each producer ends with its tail: the TMA warp waits for
every stage's release, the MMA warp for both CTAs' release of the accumulator, the epilogue for
its last bulk stores, and only then is TMEM freed. One output tile per CTA pair.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_2.py``
(pinned commit). Compile-verified only: no SM100 GPU here, numerics unverified.
"""

from __future__ import annotations

import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from mla_var3.kernel.cute_python.gemm.sm100_gemm import common


class Sm100GemmWsTmaStore(common.WarpSpecializedGemm):
    """One 256 x N tile per CTA pair, computed by a TMA warp, an MMA warp and four epilogue warps."""

    @cute.jit
    def roles(self, cta: common.CtaSetup, ctx: common.WsContext) -> None:
        bidx, bidy, _ = cute.arch.block_idx()
        mma_m, mma_n = bidx // self.pair, bidy  # the pair's MMA tile
        tidx, warp_idx, ops, tiled_mma = cta.tidx, cta.warp_idx, cta.ops, cta.tiled_mma

        # --8<-- [start:roles]
        if warp_idx == self.TMA_WARP:
            ops.loads.prefetch_descriptors()
            cpasync.prefetch_descriptor(ctx.epi.atom_c)
            ab_producer = common.produce_tile(ops.loads, ctx.ab_producer, mma_m, mma_n, ops.k_tiles)
            ab_producer.tail()  # every stage released: no late tcgen05.commit can reach this CTA's SMEM
        if warp_idx == self.MMA_WARP:
            _, acc = ctx.tmem_accumulator()
            acc_producer = ctx.acc_producer
            if cta.place.is_leader:
                acc_producer, _, tiled_mma = common.mma_tile(
                    acc_producer, ctx.ab_consumer, tiled_mma, acc, ops
                )
            acc_producer.tail()  # leader only: both CTAs' epilogues have released the accumulator
        if warp_idx < self.MMA_WARP:
            ctx.tmem.allocate(ctx.tmem_columns)  # epilogue warp 0 allocates, for the pair
            tmem_ptr, acc = ctx.tmem_accumulator()
            c_pipeline = common.make_c_pipeline(self.c_stages)
            common.store_tile_tma(ctx.epi, ctx.acc_consumer, acc, mma_m, mma_n, c_pipeline, tidx, warp_idx)
            c_pipeline.producer_tail()  # the last TMA stores have finished reading SMEM
            ctx.tmem.relinquish_alloc_permit()
            ctx.tmem.free(tmem_ptr)  # after the peer's allocator warp arrives on the dealloc mbarrier
        # --8<-- [end:roles]
