"""Plan for ``cutlass_sm100_dense_gemm_persistent_prefetch``: CUTLASS's ``dense_gemm_persistent_prefetch.py``.

The persistent kernel plus TMA prefetches into L2: before each tile the TMA warp prefetches its
first ``prefetch_dist`` K tiles of A and B, and with every load it prefetches the tile
``prefetch_dist`` ahead (default distance: the number of A/B stages). Its ``run()`` passes tensors
with no alignment hint, so this plan compiles against element-aligned operands as well.
Compile-only (no SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.common import BlackwellDenseGemmPlan


class CutlassSm100DenseGemmPersistentPrefetchPlan(BlackwellDenseGemmPlan):
    name = "cutlass_sm100_dense_gemm_persistent_prefetch"
    description = (
        "CUTLASS's Blackwell dense_gemm_persistent_prefetch.py: the persistent GEMM with TMA prefetch into L2"
    )
    example_file = "dense_gemm_persistent_prefetch.py"
    kernel_class = "PersistentDenseGemmKernel"
    operand_align = None
    takes_max_active_clusters = True

    def example_accepts(self, gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
        return bool(gemm.can_implement(mnkl, ab, ab, "k", "k", "n"))


__all__ = ["CutlassSm100DenseGemmPersistentPrefetchPlan"]
