"""Blackwell (sm_100a) GEMM with tcgen05 MMA into Tensor Memory: C = A @ B^T, A and B K-major.

The smallest complete tcgen05 GEMM: one CTA of four warps computes one ``tile_m x tile_n``
tile of C, with an fp32 accumulator that lives in **TMEM** (tensor memory), not registers.

- **TMEM allocation**: warp 0 allocates as many TMEM columns as the accumulator needs (one
  column per fp32 output column of the tile, rounded to a power of two); the address comes
  back through SMEM and every warp reads it after a named barrier.
- **Main loop** (warp 0): TMA loads K-blocks of A and B into a ``stages``-deep ring of
  128-byte-swizzled SMEM buffers (``PipelineTmaUmma``: the TMA completes a "full" mbarrier
  by transaction count), then issues ``tcgen05.mma``, which reads both operands from SMEM
  through descriptors. ``tcgen05.commit`` frees an SMEM stage once the MMAs that read
  it have finished, and after the last K-block signals the accumulator as ready.
- **Epilogue** (all four warps): warp ``w`` owns TMEM lanes ``32w..32w+31``, i.e. rows of
  the tile; ``tcgen05.ld`` (32x32b, 64 columns at a time) brings each thread's row segment
  into registers, which are converted to fp16/bf16 and stored to global memory.

M must be a multiple of ``tile_m`` and N of ``tile_n`` (the epilogue stores without
predication); K can be any multiple of 8 (16-byte rows): TMA fills the last K-block's
out-of-bounds part with zeros.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_0.py``
at the pinned commit (TMEM allocation :118-128 and :194-199, main loop :233-270, TMEM
epilogue :276-292). Ours: a class with configurable tile and stage count, the dtype taken
from the tensors (fp16 and bf16), TMEM sized to the accumulator instead of all 512 columns,
every SMEM buffer in one struct whose size is the launch's SMEM, dynamic M, N and K, and
the launch on the caller's stream. The pieces the later steps reuse (TMA of one K tile, the
MMAs of one K tile, the direct-store epilogue, the SMEM budget) live in
:mod:`mla_var3.kernel.cute_python.gemm.sm100_gemm.common`.

Compile-verified only: our GPU is an H200 (sm_90), which has no tcgen05 or TMEM. Its SASS
shows UTCHMMA (tcgen05.mma), UTCBAR (tcgen05.commit), UTMALDG (TMA loads), LDTM
(tcgen05.ld) and UTCATOMSWS (TMEM allocation).
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import tcgen05
from cutlass.memory import TmemAllocator, get_num_tmem_alloc_cols

from mla_var3.kernel.cute_python.gemm.sm100_gemm import common

TMEM_ALLOC_BARRIER_ID = 1


class Sm100GemmTcgen05(common.Sm100Gemm):
    """C[M,N] = A[M,K] @ B[N,K]^T on one SM100 CTA per output tile (TMA + tcgen05 + TMEM)."""

    pair = 1  # no cluster: one CTA per MMA tile, so the single MMA "thread" is the CTA

    def __init__(self, mma_tiler_mn: tuple[int, int] = (128, 256), stages: int = 4) -> None:
        super().__init__(mma_tiler_mn, stages=stages)

    @cute.jit
    def run(self, cta: common.CtaSetup) -> None:
        tile_m, tile_n, _ = cute.arch.block_idx()
        tidx, warp_idx, storage, ops, tiled_mma = cta.tidx, cta.warp_idx, cta.storage, cta.ops, cta.tiled_mma
        if warp_idx == 0:
            ops.loads.prefetch_descriptors()

        # --8<-- [start:tmem_alloc]
        # The accumulator's TMEM layout: 128 lanes (rows) x tile_n columns of fp32.
        acc_layout = cta.acc_layout(self.mma_tiler)
        tmem = TmemAllocator(
            storage.tmem_address.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(
                barrier_id=TMEM_ALLOC_BARRIER_ID, num_threads=common.EPI_THREADS
            ),
        )
        tmem.allocate(get_num_tmem_alloc_cols(acc_layout))  # warp 0 allocates; address -> SMEM
        # --8<-- [end:tmem_alloc]

        ab_producer, ab_consumer = common.make_ab_pipeline(cta, self.budget.ab_stages)
        acc_producer, acc_consumer = common.make_acc_pipeline(
            1, common.EPI_THREADS, cta.vmnk, storage.acc_barriers.data_ptr()
        )

        tmem.wait_for_alloc()  # every warp: the named barrier after warp 0 wrote the address
        tmem_ptr = tmem.retrieve_ptr(cutlass.Float32)
        tCtAcc = cute.make_tensor(tmem_ptr, acc_layout.layout)

        # --8<-- [start:tcgen05_mma]
        if warp_idx == 0:
            acc_slot = acc_producer.acquire_and_advance()
            tiled_mma.set(tcgen05.Field.ACCUMULATE, False)  # the first MMA overwrites TMEM
            for k_tile in cutlass.range(ops.k_tiles, prefetch_stages=self.budget.ab_stages - 2):
                # A free SMEM stage, TMA of A and B into it (common.AbLoads.issue) ...
                ab_producer = ops.loads.issue(ab_producer, tile_m, tile_n, k_tile)
                # ... its bytes landed: MMAs, then tcgen05.commit frees it.
                ab_consumer, tiled_mma = common.mma_k_tile(ab_consumer, tiled_mma, tCtAcc, ops.tCrA, ops.tCrB)
            acc_slot.commit()  # tcgen05.commit: the accumulator is complete
        # --8<-- [end:tcgen05_mma]

        # --8<-- [start:tmem_epilogue]
        tmem.relinquish_alloc_permit()
        # Wait for the accumulator, TMEM -> registers -> global, release (common.store_tile_direct).
        acc_consumer = common.store_tile_direct(
            acc_consumer, tCtAcc, ops.tCgC[(None, None, None, tile_m, tile_n)], tidx
        )
        pipeline.sync(barrier_id=TMEM_ALLOC_BARRIER_ID)  # every warp has read its lanes
        tmem.free(tmem_ptr)
        # --8<-- [end:tmem_epilogue]
