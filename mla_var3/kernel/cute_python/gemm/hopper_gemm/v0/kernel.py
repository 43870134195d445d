"""Step v0 of the Hopper GEMM worklog: TMA loads and WGMMA, one stage, one warpgroup.

C[M,N] = A[M,K] @ B[N,K]^T on sm_90a, fp16/bf16 in, fp32 accumulation in registers. One CTA
per output tile; for every K tile one thread arms a single mbarrier with the tile's bytes and
issues two TMA loads, every thread waits on the barrier's phase, the warpgroup issues its
WGMMAs and waits for them, and only then may the next load overwrite the buffer. Loads and
math never overlap: that is what step v1 fixes. The epilogue stores the accumulator straight
from registers to global memory, predicated at the ragged edges.

The later steps subclass this class and replace what they change; the WGMMA atoms and the
SMEM budget are the v5 kernel's (``warp_specialized/kernel.py``), imported, not copied.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    SMEM_ALIGN,
    SMEM_CAPACITY_SM90,
    TILE_K,
    WARPGROUP_THREADS,
    WGMMA_M,
    HopperGemmWS,
    smem_budget,
)


class HopperGemmV0:
    """One CTA per ``tile_mn`` tile of C, ``tile_m / 64`` warpgroups (one at the default 64 x 256),
    one SMEM stage guarded by one mbarrier."""

    stages = 1
    min_blocks_per_mp = 0  # no launch bound (v2 sets 1 for setmaxnreg)

    def __init__(self, tile_mn: tuple[int, int] = (64, 256)) -> None:
        self.tile_mnk = (tile_mn[0], tile_mn[1], TILE_K)
        self.consumer_wgs = tile_mn[0] // WGMMA_M
        self.threads = WARPGROUP_THREADS * self.consumer_wgs
        self._check_tile()

    # --- host-side set-up -------------------------------------------------------------
    def _check_tile(self) -> None:
        tile_m, tile_n, _ = self.tile_mnk
        if tile_m not in (64, 128) or tile_n not in (64, 128, 256):
            raise ValueError(
                f"tile must be {{64, 128}} x {{64, 128, 256}} (64 rows per warpgroup), got {tile_m}x{tile_n}"
            )
        need = self.dynamic_smem_bytes()
        if need > SMEM_CAPACITY_SM90:
            raise ValueError(
                f"{self.stages} stages of {tile_m}x{tile_n}x64 need {need} B of SMEM, more than {SMEM_CAPACITY_SM90} B"
            )

    def dynamic_smem_bytes(self) -> int:
        return smem_budget(self.tile_mnk, self.stages, epi_stages=0).total

    _make_tiled_mma = HopperGemmWS._make_tiled_mma  # 64 x tile_n x 16 atoms, one per 64 rows

    def _make_ab_layouts(
        self, ab_dtype: type[cutlass.Numeric]
    ) -> tuple[cute.ComposedLayout, cute.ComposedLayout]:
        """A (tile_m, 64, stages) and B (tile_n, 64, stages), 128-byte swizzled as WGMMA reads them."""
        return (
            sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, self.tile_mnk, ab_dtype, self.stages),
            sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, self.tile_mnk, ab_dtype, self.stages),
        )

    def _make_load_atom(
        self, x: cute.Tensor, layout: cute.ComposedLayout, rows: int
    ) -> tuple[cute.CopyAtom, cute.Tensor]:
        """The TMA descriptor that loads one (rows, 64) stage of ``x`` into ``layout``'s swizzle."""
        stage = cute.slice_(layout, (None, None, 0))
        return cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, stage, (rows, TILE_K))

    def _make_shared_storage(
        self, ab_dtype: type[cutlass.Numeric], a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout
    ) -> type:
        barriers = 2 * self.stages if self.stages > 1 else 1  # v0: one "full" barrier, no "empty" one

        @cute.struct
        class SharedStorage:
            ab_barriers: cute.struct.MemRange[cutlass.Int64, barriers]
            sA: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(a_layout)], SMEM_ALIGN]
            sB: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(b_layout)], SMEM_ALIGN]

        return SharedStorage

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream: cuda.CUstream) -> None:
        """Launch one CTA per tile of C."""
        grid = (cute.ceil_div(c.shape[0], self.tile_mnk[0]), cute.ceil_div(c.shape[1], self.tile_mnk[1]), 1)
        self._launch(a, b, c, grid, stream)

    @cute.jit
    def _launch(
        self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, grid: tuple, stream: cuda.CUstream
    ) -> None:
        """Build the SMEM layouts and TMA descriptors, then launch ``grid`` CTAs."""
        a_layout, b_layout = self._make_ab_layouts(a.element_type)
        tma_a, gA = self._make_load_atom(a, a_layout, self.tile_mnk[0])
        tma_b, gB = self._make_load_atom(b, b_layout, self.tile_mnk[1])
        self.shared_storage = self._make_shared_storage(a.element_type, a_layout, b_layout)
        self.kernel(tma_a, gA, tma_b, gB, c, a_layout, b_layout).launch(
            grid=grid, block=(self.threads, 1, 1), min_blocks_per_mp=self.min_blocks_per_mp, stream=stream
        )

    # --- device side ------------------------------------------------------------------
    @cute.jit
    def _operand(self, tma: cute.CopyAtom, mX: cute.Tensor, sX: cute.Tensor, rows: int) -> tuple:
        """``(tma, tXgX, tXsX)``: ``mX`` in (rows, 64) tiles and its SMEM ring, partitioned for TMA:
        global (TMA, rest_rows, rest_k), SMEM (TMA, stage)."""
        gX = cute.local_tile(mX, (rows, TILE_K), (None, None))
        sX_tma, gX_tma = cute.group_modes(sX, 0, 2), cute.group_modes(gX, 0, 2)
        tXsX, tXgX = cpasync.tma_partition(tma, 0, cute.make_layout(1), sX_tma, gX_tma)
        return tma, tXgX, tXsX

    @cute.jit
    def _smem_operands(
        self,
        tma_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_b: cute.CopyAtom,
        mB: cute.Tensor,
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
    ) -> tuple:
        """The CTA's SMEM (barriers and the A/B rings), and A and B as :meth:`_operand` loads them."""
        if cute.arch.make_warp_uniform(cute.arch.warp_idx()) == 0:
            cpasync.prefetch_descriptor(tma_a)
            cpasync.prefetch_descriptor(tma_b)
        storage = SmemAllocator().allocate(self.shared_storage)
        sA = storage.sA.get_tensor(a_layout.outer, swizzle=a_layout.inner)  # (tile_m, 64, stages)
        sB = storage.sB.get_tensor(b_layout.outer, swizzle=b_layout.inner)  # (tile_n, 64, stages)
        a_load = self._operand(tma_a, mA, sA, self.tile_mnk[0])
        b_load = self._operand(tma_b, mB, sB, self.tile_mnk[1])
        return storage, sA, sB, a_load, b_load

    @cute.jit
    def _mma_fragments(self, sA: cute.Tensor, sB: cute.Tensor, thread: cutlass.Int32) -> tuple:
        """``(tiled_mma, thr_mma, tCrA, tCrB, acc)`` for MMA thread ``thread``: WGMMA's SMEM
        descriptors of A and B per stage, and the fp32 accumulator in registers."""
        tiled_mma = self._make_tiled_mma(sA.element_type, self.consumer_wgs)
        thr_mma = tiled_mma.get_slice(thread)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc = cute.make_rmem_tensor(tiled_mma.partition_shape_C(self.tile_mnk[:2]), cutlass.Float32)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        return tiled_mma, thr_mma, tCrA, tCrB, acc

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
        tile_m, tile_n, tile_k = self.tile_mnk
        tidx, _, _ = cute.arch.thread_idx()
        m_tile, n_tile, _ = cute.arch.block_idx()
        storage, sA, sB, (_, tAgA, tAsA), (_, tBgB, tBsB) = self._smem_operands(
            tma_a, mA, tma_b, mB, a_layout, b_layout
        )
        tiled_mma, thr_mma, tCrA, tCrB, acc = self._mma_fragments(sA, sB, tidx)
        acc.fill(0.0)

        # --8<-- [start:single_stage_loop]
        # One mbarrier: one lane of warp 0 arms it with the bytes both loads will write
        # (expect_tx) and warp 0 issues them; the TMA unit completes the barrier's phase when the
        # bytes have landed. The whole warp enters the branch: the DSL issues a TMA copy under
        # elect.sync, which needs every lane of the warp (from one thread, the load never starts
        # and every thread waits on the barrier forever).
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        full = storage.ab_barriers.data_ptr()
        if tidx == 0:
            cute.arch.mbarrier_init(full, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()
        stage_bytes = (tile_m + tile_n) * tile_k * sA.element_type.width // 8
        phase = cutlass.Int32(0)
        for k in cutlass.range(cute.size(tAgA, mode=[2]), unroll=1):
            if warp == 0:
                with cute.arch.elect_one():
                    cute.arch.mbarrier_arrive_and_expect_tx(full, stage_bytes)
                cute.copy(tma_a, tAgA[(None, m_tile, k)], tAsA[(None, 0)], tma_bar_ptr=full)
                cute.copy(tma_b, tBgB[(None, n_tile, k)], tBsB[(None, 0)], tma_bar_ptr=full)
            cute.arch.mbarrier_wait(full, phase)
            phase ^= 1
            warpgroup.fence()
            for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(tiled_mma, acc, tCrA[(None, None, kb, 0)], tCrB[(None, None, kb, 0)], acc)
            warpgroup.commit_group()
            # The buffer is free only when every warpgroup's WGMMAs have read it.
            warpgroup.wait_group(0)
            cute.arch.sync_threads()
        # --8<-- [end:single_stage_loop]
        self._store_direct(thr_mma, acc, mC, m_tile, n_tile)

    # --8<-- [start:direct_epilogue]
    @cute.jit
    def _store_direct(
        self,
        thr_mma: cute.ThrMma,
        acc: cute.Tensor,
        mC: cute.Tensor,
        m_tile: cutlass.Int32,
        n_tile: cutlass.Int32,
    ) -> None:
        """Registers -> global: each thread converts its accumulator fragment to C's dtype and
        stores the elements whose coordinates (from an identity tensor, partitioned like the
        accumulator) fall inside C."""
        tile_mn = (self.tile_mnk[0], self.tile_mnk[1])
        tCgC = thr_mma.partition_C(cute.local_tile(mC, tile_mn, (m_tile, n_tile)))
        tCcC = thr_mma.partition_C(
            cute.local_tile(cute.make_identity_tensor(mC.shape), tile_mn, (m_tile, n_tile))
        )
        out = cute.make_rmem_tensor(acc.shape, mC.element_type)
        out.store(acc.load().to(mC.element_type))
        for i in cutlass.range(cute.size(out), unroll_full=True):
            if cute.elem_less(tCcC[i], mC.shape):
                tCgC[i] = out[i]

    # --8<-- [end:direct_epilogue]


__all__ = ["HopperGemmV0"]
