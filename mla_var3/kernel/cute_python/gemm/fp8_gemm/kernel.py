"""FP8 (e4m3) GEMM on sm_90a: our warp-specialized Hopper GEMM with e4m3 operands and per-tensor scales.

C[M,N] = s_a * s_b * (A[M,K] @ B[N,K]^T), A and B e4m3 and K-major, fp32 accumulation, C bf16.
:class:`HopperFp8GemmWS` is ``hopper_gemm_ws`` (``hopper_gemm/warp_specialized/kernel.py``,
imported, never copied) with four changes, each at one of that kernel's seams:

- **Operands.** A K tile is 128 e4m3 values: one 128-byte swizzle row, as 64 16-bit values are,
  so the SMEM layouts, TMA boxes and the stage budget in bytes are the 16-bit kernel's. The
  WGMMA atom of e4m3 is 64 x N x 32 (SASS ``QGMMA.64xNx32.F32.E4M3.E4M3``): four per K tile.
  SM90 reads FP8 operands of WGMMA from SMEM only in K-major layout; ``make_trivial_tiled_mma``
  with ``OperandMajorMode.K`` for both is the only legal choice.
- **Scales** (``_attach_probes``). The kernel's one tensor argument for subclasses (``extra``
  in kernel.py, whose instrumented timeline variant was its first user) carries ``[s_a, s_b]``;
  the hook, called in kernel scope, loads their product once per thread. The host checks the
  e4m3 operands and hands the scales to kernel.py's shared launch body (``_launch``).
- **Epilogue** (``_store_tile``). The accumulator is multiplied by ``s_a * s_b`` in registers,
  then stored by the 16-bit kernel's epilogue (bf16, stmatrix, TMA store).
- **Promotion** (``_mma_k_tile``, when ``promote``). FP8 WGMMA does not keep a full fp32
  accumulator while it adds products: long K sums lose bits. CUTLASS's answer ("2xAcc",
  ``dense_gemm_fp8_2xacc.py``) is to let WGMMA accumulate only a short run of K into a
  temporary accumulator and add that into the real one with fp32 FADDs. Here the run is one K
  tile (4 WGMMAs, K = 128, CUTLASS's default promotion interval): kernel.py's K tile issued on a
  zeroed fragment (ptxas folds the zeroing into the first WGMMA's no-accumulate form). It costs
  a second accumulator (registers) and a ``wait_group(0)`` per K tile; with ``promote=False``
  ("fast accumulation") WGMMA accumulates the whole K in place, as the 16-bit kernel does.

Learned from CUTLASS ``examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm_fp8_2xacc.py``
at the pinned commit (promotion every ``mma_promotion_interval`` MMAs into a second accumulator,
scales applied to the accumulator before the epilogue); reusing the 16-bit kernel through its
seams, and the promotion as its own K tile on a zeroed fragment, are ours.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import warpgroup

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    TILE_K,
    Epilogue,
    HopperGemmWS,
    smem_budget,
)

FP8_TILE_K = 128  # e4m3 values in one 128-byte swizzle row: a K tile
C_DTYPES = (cutlass.BFloat16, cutlass.Float16)  # what the 16-bit epilogue (stmatrix 8x8x16b) stores


class HopperFp8GemmWS(HopperGemmWS):
    """C = s_a s_b (A @ B^T) on sm_90a, A and B e4m3, fp32 accumulation, C bf16 or fp16.

    Takes ``hopper_gemm_ws``'s configuration (``tile_mn``, ``cluster_mn``, ``stages``, ...);
    ``promote``: add each K tile's WGMMA sum into the accumulator with fp32 FADDs (2xAcc),
    instead of letting WGMMA accumulate all of K in place.
    """

    AB_DTYPES: ClassVar[tuple[type, ...]] = (cutlass.Float8E4M3FN,)

    def __init__(self, promote: bool = True, **gemm_kwargs: Any) -> None:
        # The base class checks the config and sizes the stages for its 16-bit K tile of 64:
        # the same bytes as an e4m3 K tile of 128, so its budget is this kernel's.
        super().__init__(**gemm_kwargs)
        self.promote = promote
        self.tile_mnk = (self.tile_mnk[0], self.tile_mnk[1], FP8_TILE_K)

    def dynamic_smem_bytes(self) -> int:
        """kernel.py's budget for the 16-bit tile of the same bytes (K 64 x 2 B = K 128 x 1 B)."""
        return smem_budget((self.tile_mnk[0], self.tile_mnk[1], TILE_K), self.stages, self.epi_stages).total

    # --8<-- [start:fp8_host]
    @cute.jit
    def __call__(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        scales: cute.Tensor,
        max_clusters: cutlass.Int32,
        stream: cuda.CUstream,
    ) -> None:
        """kernel.py's host with e4m3 operands and ``scales = [s_a, s_b]`` (fp32, two values),
        handed to the kernel as its subclass tensor argument."""
        if cutlass.const_expr(a.element_type not in self.AB_DTYPES or b.element_type != a.element_type):
            raise TypeError(f"A and B must be Float8E4M3FN, got {a.element_type} and {b.element_type}")
        if cutlass.const_expr(c.element_type not in C_DTYPES or scales.element_type != cutlass.Float32):
            raise TypeError(
                f"C must be BFloat16 or Float16 and scales Float32, got {c.element_type}, {scales.element_type}"
            )
        self._launch(a, b, c, max_clusters, stream, scales)

    # --8<-- [end:fp8_host]

    # --8<-- [start:scales_in_kernel]
    def _attach_probes(
        self, ab_pipeline: pipeline.PipelineTmaAsync, scales: cute.Tensor
    ) -> pipeline.PipelineTmaAsync:
        """Called by kernel.py's kernel in kernel scope with its subclass tensor argument: here
        the scales. Every thread loads ``s_a * s_b`` once; the epilogue of each tile uses it."""
        self.scale_ab = scales[0] * scales[1]
        return ab_pipeline

    # --8<-- [end:scales_in_kernel]

    # --8<-- [start:promoted_k_tile]
    @cute.jit
    def _mma_k_tile(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        read: pipeline.PipelineState,
        tiled_mma: cute.TiledMma,
        acc: cute.Tensor,
        tCrA: cute.Tensor,
        tCrB: cute.Tensor,
    ) -> None:
        """One K tile. Fast accumulation: kernel.py's (WGMMA adds into ``acc``, left in flight).
        Promoted: kernel.py's K tile into a zeroed fp32 fragment, a wait until its WGMMAs are
        done, then one fp32 FADD per value into ``acc``."""
        if cutlass.const_expr(not self.promote):
            HopperGemmWS._mma_k_tile(self, ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
        else:
            part = cute.make_rmem_tensor(acc.layout, cutlass.Float32)
            part.fill(0.0)
            HopperGemmWS._mma_k_tile(self, ab_pipeline, read, tiled_mma, part, tCrA, tCrB)
            warpgroup.wait_group(0)  # the fragment is read right away: no batch stays in flight
            acc.store(acc.load() + part.load())

    # --8<-- [end:promoted_k_tile]

    # --8<-- [start:scaled_epilogue]
    @cute.jit
    def _store_tile(
        self, epi: Epilogue, m_tile: cutlass.Int32, n_tile: cutlass.Int32, stored: cutlass.Int32
    ) -> cutlass.Int32:
        """Scale the fp32 accumulator by ``s_a * s_b`` in registers, then kernel.py's epilogue
        (convert to C's dtype, stmatrix into the SMEM ring, TMA store)."""
        epi.tRS_acc.store(epi.tRS_acc.load() * self.scale_ab)
        return HopperGemmWS._store_tile(self, epi, m_tile, n_tile, stored)

    # --8<-- [end:scaled_epilogue]


__all__ = ["C_DTYPES", "FP8_TILE_K", "HopperFp8GemmWS"]
