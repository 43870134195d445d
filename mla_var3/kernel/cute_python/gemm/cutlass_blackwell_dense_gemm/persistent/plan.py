"""Plan for ``cutlass_sm100_dense_gemm_persistent``: CUTLASS's ``dense_gemm_persistent.py``.

Warp-specialized and persistent: 192 threads (four epilogue warps, one MMA warp, one TMA warp),
a grid of at most one wave of clusters walking tiles with ``StaticPersistentTileScheduler``, and
two TMEM accumulator stages so the epilogue of one tile overlaps the MMAs of the next. Its
``__call__`` takes ``max_active_clusters`` as a compile-time constant: the SM count of a B200
over the cluster size (the example asks ``HardwareInfo``, which needs the GPU).
Compile-only (no SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.common import BlackwellDenseGemmPlan


class CutlassSm100DenseGemmPersistentPlan(BlackwellDenseGemmPlan):
    name = "cutlass_sm100_dense_gemm_persistent"
    description = "CUTLASS's Blackwell dense_gemm_persistent.py: TMA/MMA/epilogue warps, static persistent tiles, 2 TMEM accumulators"
    example_file = "dense_gemm_persistent.py"
    kernel_class = "PersistentDenseGemmKernel"
    takes_max_active_clusters = True

    def example_accepts(self, gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
        return bool(gemm.can_implement(mnkl, ab, ab, ab, "k", "k", "n"))


__all__ = ["CutlassSm100DenseGemmPersistentPlan"]
