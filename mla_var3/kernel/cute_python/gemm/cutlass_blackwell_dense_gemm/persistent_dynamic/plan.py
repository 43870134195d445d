"""Plan for ``cutlass_sm100_dense_gemm_persistent_dynamic``: CUTLASS's ``dense_gemm_persistent_dynamic.py``.

The persistent kernel with a Cluster Launch Control (CLC) scheduler: the grid covers every tile,
and a scheduler warp in the first CTA of each cluster asks the hardware to cancel a cluster
that has not started yet and take over its tile, so no ``max_active_clusters`` is needed.
224 threads (one more warp). The example's cluster split-K (``split_k``) stays at its default 1.
Compile-only (no SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.common import BlackwellDenseGemmPlan


class CutlassSm100DenseGemmPersistentDynamicPlan(BlackwellDenseGemmPlan):
    name = "cutlass_sm100_dense_gemm_persistent_dynamic"
    description = "CUTLASS's Blackwell dense_gemm_persistent_dynamic.py: persistent GEMM with CLC dynamic tile scheduling"
    example_file = "dense_gemm_persistent_dynamic.py"
    kernel_class = "PersistentDenseGemmKernel"

    def example_accepts(self, gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
        return bool(gemm.can_implement(mnkl, ab, ab, ab, "k", "k", "n"))


__all__ = ["CutlassSm100DenseGemmPersistentDynamicPlan"]
