"""Step v4 of the Hopper GEMM worklog: a TMA-store epilogue, and an optional fused bias + activation.

Until v3 every consumer thread stored its accumulator fragment straight to global memory: two
16-bit values per store, rows 8 apart, each store predicated -- hundreds of narrow stores per
thread and tile while the tensor cores wait. Now each consumer warpgroup converts its
64 x tile_n slice subtile by subtile (64 x 32), writes it into a small SMEM ring with
``stmatrix``, and one warp stores the subtile with a single TMA store, which also clips at the
matrix edges. This is the v5 kernel's epilogue, imported unchanged -- its consumer
(``_consume``: mainloop, then ``_store_tile``), its SMEM layouts, TMA atoms and shared storage
-- running here with 1 x 1 clusters; what v4 adds is the C ring and the store descriptor in
its own launch and kernel.

**Fused epilogue** (``activation="relu"`` or ``"gelu"``): C = act(A B^T + bias), bias one value
per column of C. It runs in registers just before the store, on the fp32 accumulator: each
element's column comes from an identity tensor partitioned like the accumulator and retiled like
the epilogue's view of it, so one more load per element and a few FLOPs replace a second kernel
that would read and write all of C again.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from mla_var3.kernel.cute_python.gemm.hopper_gemm.v3.kernel import HopperGemmV3
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    EPI_TILE_N,
    TILE_K,
    WARPGROUP_THREADS,
    WGMMA_M,
    Epilogue,
    HopperGemmWS,
    max_stages,
    smem_budget,
)

ACTIVATIONS = ("relu", "gelu")
INV_SQRT2 = 0.7071067811865476


class HopperGemmV4(HopperGemmV3):
    """v3 with the v5 kernel's TMA-store epilogue; ``epi_stages`` SMEM subtiles per consumer
    warpgroup; ``activation``: ``None`` (C = A B^T) or ``"relu"``/``"gelu"`` (C = act(A B^T + bias))."""

    def __init__(
        self,
        tile_mn: tuple[int, int] = (128, 256),
        stages: int | None = None,
        raster_group_m: int = 8,
        epi_stages: int = 4,
        activation: str | None = None,
    ) -> None:
        if activation is not None and activation not in ACTIVATIONS:
            raise ValueError(f"activation must be None or one of {ACTIVATIONS}, got {activation!r}")
        self.epi_stages = epi_stages
        self.activation = activation
        stages = stages if stages is not None else max_stages((*tile_mn, TILE_K), epi_stages)
        super().__init__(tile_mn, stages, raster_group_m)

    def dynamic_smem_bytes(self) -> int:
        return smem_budget(self.tile_mnk, self.stages, self.epi_stages).total

    # The v5 kernel's host helpers (1 x 1 clusters: plain TMA loads) and its consumer.
    _make_smem_layouts = HopperGemmWS._make_smem_layouts
    _make_tma_atoms = HopperGemmWS._make_tma_atoms
    _make_shared_storage = HopperGemmWS._make_shared_storage
    _consume = HopperGemmWS._consume

    @cute.jit
    def __call__(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        max_ctas: cutlass.Int32,
        bias: cute.Tensor | None,
        stream: cuda.CUstream,
    ) -> None:
        """As v3; ``bias`` (N values, C's dtype) exactly when the kernel fuses an activation."""
        if cutlass.const_expr((bias is not None) != (self.activation is not None)):
            raise ValueError("pass a bias exactly when the kernel fuses an activation")
        tiles = cute.ceil_div(c.shape[0], self.tile_mnk[0]) * cute.ceil_div(c.shape[1], self.tile_mnk[1])
        self._launch(a, b, c, (1, 1, cutlass.min(tiles, max_ctas)), stream, bias)

    # --8<-- [start:tma_store_launch]
    @cute.jit
    def _launch(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        grid: tuple,
        stream: cuda.CUstream,
        bias: cute.Tensor | None = None,
    ) -> None:
        """v3's launch plus the C ring in SMEM and the TMA store descriptor of (64, 32) subtiles."""
        a_layout, b_layout, c_layout = self._make_smem_layouts(a.element_type, c.element_type)
        tma_a, gA, tma_b, gB, tma_c, gC = self._make_tma_atoms(a, b, c, a_layout, b_layout, c_layout)
        self.shared_storage = self._make_shared_storage(
            a.element_type, c.element_type, a_layout, b_layout, c_layout
        )
        self.kernel(tma_a, gA, tma_b, gB, tma_c, gC, a_layout, b_layout, c_layout, bias).launch(
            grid=grid, block=(self.threads, 1, 1), min_blocks_per_mp=self.min_blocks_per_mp, stream=stream
        )

    # --8<-- [end:tma_store_launch]

    @cute.kernel
    def kernel(
        self,
        tma_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_b: cute.CopyAtom,
        mB: cute.Tensor,
        tma_c: cute.CopyAtom,
        mC: cute.Tensor,
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
        c_layout: cute.ComposedLayout,
        bias: cute.Tensor | None,
    ) -> None:
        storage, sA, sB, a_load, b_load = self._smem_operands(tma_a, mA, tma_b, mB, a_layout, b_layout)
        ab_pipeline = self._make_pipeline(storage, sA.element_type, self.consumer_wgs * WARPGROUP_THREADS)
        # --8<-- [start:tma_store_partition]
        # The C ring (64, 32, epi_stages per consumer warpgroup) and C in (64, 32) subtiles,
        # partitioned for the TMA store: (TMA, slot) and (TMA, rest_m64, rest_n32).
        sC = storage.sC.get_tensor(c_layout.outer, swizzle=c_layout.inner)
        gC = cute.local_tile(mC, (WGMMA_M, EPI_TILE_N), (None, None))
        sC_tma, gC_tma = cute.group_modes(sC, 0, 2), cute.group_modes(gC, 0, 2)
        bSG_sC, bSG_gC = cpasync.tma_partition(tma_c, 0, cute.make_layout(1), sC_tma, gC_tma)
        # --8<-- [end:tma_store_partition]
        self.bias = bias  # read by _store_tile (the epilogue seam), like shared_storage by kernel
        tiles_mn = (
            cute.ceil_div(mC.shape[0], self.tile_mnk[0]),
            cute.ceil_div(mC.shape[1], self.tile_mnk[1]),
        )
        self._run_roles(ab_pipeline, a_load, b_load, (sA, sB, sC, (tma_c, bSG_sC, bSG_gC)), tiles_mn)

    # --8<-- [start:fused_epilogue]
    @cute.jit
    def _store_tile(
        self, epi: Epilogue, m_tile: cutlass.Int32, n_tile: cutlass.Int32, stored: cutlass.Int32
    ) -> cutlass.Int32:
        """The v5 kernel's epilogue of one tile, after the fused bias + activation (if any)."""
        if cutlass.const_expr(self.activation is not None):
            self._bias_activation(epi, n_tile)
        return HopperGemmWS._store_tile(self, epi, m_tile, n_tile, stored)

    @cute.jit
    def _bias_activation(self, epi: Epilogue, n_tile: cutlass.Int32) -> None:
        """acc = act(acc + bias[column]) in fp32, in place. The accumulator's coordinates come from
        an identity tensor partitioned by this thread's MMA slice and retiled like ``epi.tRS_acc``;
        columns past N read the last bias value (the TMA store clips them anyway)."""
        tidx, _, _ = cute.arch.thread_idx()
        tiled_mma = self._make_tiled_mma(epi.sub_out.element_type, self.consumer_wgs)
        tile = cute.make_identity_tensor(self.tile_mnk[:2])
        coords = epi.r2s.retile(tiled_mma.get_slice(tidx - WARPGROUP_THREADS).partition_C(tile))
        first_n, last_n = n_tile * self.tile_mnk[1], self.bias.shape[0] - 1
        for i in cutlass.range(cute.size(epi.tRS_acc), unroll_full=True):
            n = cutlass.min(first_n + coords[i][1], last_n)
            epi.tRS_acc[i] = epi.tRS_acc[i] + self.bias[n].to(cutlass.Float32)
        x = epi.tRS_acc.load()
        if cutlass.const_expr(self.activation == "relu"):
            x = cute.where(x > cute.full_like(x, 0.0), x, cute.full_like(x, 0.0))
        else:  # gelu, erf form (torch.nn.functional.gelu's default)
            x = (
                cute.full_like(x, 0.5)
                * x
                * (cute.full_like(x, 1.0) + cute.erf(x * cute.full_like(x, INV_SQRT2)))
            )
        epi.tRS_acc.store(x)

    # --8<-- [end:fused_epilogue]


__all__ = ["ACTIVATIONS", "HopperGemmV4"]
