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
the launch on the caller's stream.

Compile-verified only: our GPU is an H200 (sm_90), which has no tcgen05 or TMEM. Its SASS
shows UTCHMMA (tcgen05.mma), UTCBAR (tcgen05.commit), UTMALDG (TMA loads), LDTM
(tcgen05.ld) and UTCATOMSWS (TMEM allocation).
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, tcgen05
from cutlass.memory import SmemAllocator, TmemAllocator, get_num_tmem_alloc_cols

THREADS = 128  # four warps: one TMEM lane quarter (32 rows of the tile) each
TILE_K = 64  # K per stage: 64 x 16-bit = 128 bytes, one 128-byte swizzle row
EPI_COLUMNS = 64  # accumulator columns per tcgen05.ld (32x32b.x64: 64 fp32 registers per thread)
SMEM_ALIGN = 1024  # a 128-byte-swizzle atom spans 8 rows x 128 B
MBARRIER_BYTES = 8
TMEM_ALLOC_BARRIER_ID = 1


def smem_bytes(tile_mn: tuple[int, int], stages: int, elem_bytes: int = 2) -> int:
    """Dynamic SMEM of one CTA: ``stages`` A and B tiles plus a 1 KiB header of mbarriers.

    The header holds a full and an empty mbarrier per stage, one pair for the accumulator
    and the 4-byte TMEM address (< 1 KiB for any stage count that fits), padded so that the
    operand buffers start 1 KiB aligned. 128x256 tiles, 4 stages: 1 KiB + 4 x 48 KiB = 193 KiB.
    """
    tile_m, tile_n = tile_mn
    return SMEM_ALIGN + stages * (tile_m + tile_n) * TILE_K * elem_bytes


class Sm100GemmTcgen05:
    """C[M,N] = A[M,K] @ B[N,K]^T on one SM100 CTA per output tile (TMA + tcgen05 + TMEM)."""

    def __init__(self, tile_mn: tuple[int, int] = (128, 256), stages: int = 4) -> None:
        tile_m, tile_n = tile_mn
        if tile_m != 128 or tile_n % EPI_COLUMNS or not EPI_COLUMNS <= tile_n <= 256:
            raise ValueError(
                f"tile_mn must be (128, N) with N a multiple of {EPI_COLUMNS} up to 256, got {tile_mn}"
            )
        self.tile_mn = (tile_m, tile_n)
        self.mma_tiler = (tile_m, tile_n, TILE_K)
        self.stages = stages

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream: cuda.CUstream) -> None:
        ab_dtype = a.element_type
        tiled_mma = sm100_utils.make_trivial_tiled_mma(
            ab_dtype,
            ab_dtype,
            OperandMajorMode.K,
            OperandMajorMode.K,
            cutlass.Float32,
            tcgen05.CtaGroup.ONE,
            self.tile_mn,
        )
        # (MMA, MMA_M|N, MMA_K, stages) layouts with the swizzle the MMA descriptors expect.
        a_smem_layout = sm100_utils.make_smem_layout_a(tiled_mma, self.mma_tiler, ab_dtype, self.stages)
        b_smem_layout = sm100_utils.make_smem_layout_b(tiled_mma, self.mma_tiler, ab_dtype, self.stages)
        tma_op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
        tma_atom_a, tma_a = cute.nvgpu.make_tiled_tma_atom_A(
            tma_op, a, cute.select(a_smem_layout, mode=[0, 1, 2]), self.mma_tiler, tiled_mma
        )
        tma_atom_b, tma_b = cute.nvgpu.make_tiled_tma_atom_B(
            tma_op, b, cute.select(b_smem_layout, mode=[0, 1, 2]), self.mma_tiler, tiled_mma
        )

        @cute.struct
        class SharedStorage:
            ab_barriers: cute.struct.MemRange[cutlass.Int64, self.stages * 2]
            acc_barriers: cute.struct.MemRange[cutlass.Int64, 2]
            tmem_address: cutlass.Int32
            sA: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(a_smem_layout)], SMEM_ALIGN]
            sB: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(b_smem_layout)], SMEM_ALIGN]

        self.shared_storage = SharedStorage
        grid = cute.ceil_div((*c.layout.shape, 1), self.tile_mn)
        self.kernel(tiled_mma, tma_atom_a, tma_a, tma_atom_b, tma_b, c, a_smem_layout, b_smem_layout).launch(
            grid=grid, block=(THREADS, 1, 1), stream=stream
        )

    @cute.kernel
    def kernel(
        self,
        tiled_mma: cute.TiledMma,
        tma_atom_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_atom_b: cute.CopyAtom,
        mB: cute.Tensor,
        mC: cute.Tensor,
        a_smem_layout: cute.ComposedLayout,
        b_smem_layout: cute.ComposedLayout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        tile_m_idx, tile_n_idx, _ = cute.arch.block_idx()
        tile_coord = (tile_m_idx, tile_n_idx, None)

        storage = SmemAllocator().allocate(self.shared_storage)
        sA = storage.sA.get_tensor(a_smem_layout.outer, swizzle=a_smem_layout.inner)
        sB = storage.sB.get_tensor(b_smem_layout.outer, swizzle=b_smem_layout.inner)
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

        # This CTA's tiles: A (bM, bK, k_tiles), B (bN, bK, k_tiles), C (bM, bN).
        gA = cute.local_tile(mA, self.mma_tiler, tile_coord, proj=(1, None, 1))
        gB = cute.local_tile(mB, self.mma_tiler, tile_coord, proj=(None, 1, 1))
        gC = cute.local_tile(mC, self.mma_tiler, tile_coord, proj=(1, 1, None))
        thr_mma = tiled_mma.get_slice(0)  # one CTA, so the single MMA "thread" is the CTA
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCgC = thr_mma.partition_C(gC)
        tCrA = tiled_mma.make_fragment_A(sA)  # SMEM descriptors, (MMA, MMA_M, MMA_K, stages)
        tCrB = tiled_mma.make_fragment_B(sB)
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )

        # --8<-- [start:tmem_alloc]
        # The accumulator's TMEM layout: 128 lanes (rows) x tile_n columns of fp32.
        acc_layout = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C(self.mma_tiler[:2]))
        tmem = TmemAllocator(
            storage.tmem_address.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=TMEM_ALLOC_BARRIER_ID, num_threads=THREADS),
        )
        tmem.allocate(get_num_tmem_alloc_cols(acc_layout))  # warp 0 allocates; address -> SMEM
        # --8<-- [end:tmem_alloc]

        ab_producer, ab_consumer = pipeline.PipelineTmaUmma.create(
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=cute.size_in_bytes(sA.element_type, cute.select(a_smem_layout, mode=[0, 1, 2]))
            + cute.size_in_bytes(sB.element_type, cute.select(b_smem_layout, mode=[0, 1, 2])),
            barrier_storage=storage.ab_barriers.data_ptr(),
        ).make_participants()
        acc_producer, acc_consumer = pipeline.PipelineUmmaAsync.create(
            num_stages=1,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, THREADS),
            barrier_storage=storage.acc_barriers.data_ptr(),
        ).make_participants()

        tmem.wait_for_alloc()  # every warp: the named barrier after warp 0 wrote the address
        tmem_ptr = tmem.retrieve_ptr(cutlass.Float32)
        tCtAcc = cute.make_tensor(tmem_ptr, acc_layout.layout)

        # --8<-- [start:tcgen05_mma]
        k_tiles = cute.size(gA, mode=[2])
        if warp_idx == 0:
            acc_slot = acc_producer.acquire_and_advance()
            tiled_mma.set(tcgen05.Field.ACCUMULATE, False)  # the first MMA overwrites TMEM
            for _ in cutlass.range(k_tiles, prefetch_stages=self.stages - 2):
                empty = ab_producer.acquire_and_advance()  # a free SMEM stage
                cute.copy(
                    tma_atom_a,
                    tAgA[(None, empty.count)],
                    tAsA[(None, empty.index)],
                    tma_bar_ptr=empty.barrier,
                )
                cute.copy(
                    tma_atom_b,
                    tBgB[(None, empty.count)],
                    tBsB[(None, empty.index)],
                    tma_bar_ptr=empty.barrier,
                )
                full = ab_consumer.wait_and_advance()  # its bytes have landed
                for k_block in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                    k_coord = (None, None, k_block, full.index)
                    cute.gemm(tiled_mma, tCtAcc, tCrA[k_coord], tCrB[k_coord], tCtAcc)
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                full.release()  # tcgen05.commit: the stage is free once these MMAs are done
            acc_slot.commit()  # tcgen05.commit: the accumulator is complete
        # --8<-- [end:tcgen05_mma]

        # --8<-- [start:tmem_epilogue]
        tmem.relinquish_alloc_permit()
        # (EpiTile, subtiles): 128 rows x EPI_COLUMNS columns per tcgen05.ld round.
        epi_tiler = ((cute.size(tCtAcc, mode=[0, 0]), EPI_COLUMNS),)
        tCtAcc_epi = cute.zipped_divide(tCtAcc, epi_tiler)
        gC_epi = cute.zipped_divide(tCgC, epi_tiler)
        tmem_load = tcgen05.make_tmem_copy(
            cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x64), cutlass.Float32),
            tCtAcc_epi[None, 0],
        )
        thr_load = tmem_load.get_slice(tidx)
        tDtAcc = thr_load.partition_S(tCtAcc_epi)  # (TmemCpy, NumTmemCpy, subtiles)
        tDgC = thr_load.partition_D(gC_epi)
        acc_regs = cute.make_rmem_tensor(tDgC[None, None, 0].shape, cutlass.Float32)
        out_regs = cute.make_rmem_tensor(tDgC[None, None, 0].shape, mC.element_type)

        acc_full = acc_consumer.wait_and_advance()
        for subtile in cutlass.range(cute.size(tDtAcc, mode=[2])):
            cute.copy(tmem_load, tDtAcc[None, None, subtile], acc_regs)  # TMEM -> registers
            out_regs.store(acc_regs.load().to(mC.element_type))
            cute.autovec_copy(out_regs, tDgC[None, None, subtile])  # registers -> global, vectorized
        acc_full.release()

        pipeline.sync(barrier_id=TMEM_ALLOC_BARRIER_ID)  # every warp has read its lanes
        tmem.free(tmem_ptr)
        # --8<-- [end:tmem_epilogue]
