"""Plan for ``cutlass_sm100_blockscaled_gemm_persistent_prefetch``: CUTLASS's ``dense_blockscaled_gemm_persistent_prefetch.py``.

The block-scaled persistent GEMM with TMA prefetches into L2 ahead of the loads (``prefetch_dist``:
``None`` means the number of A/B stages, 0 turns them off). An older API than the persistent
example: ``__call__`` takes tensors, marked as its ``run()`` marks them (every extent dynamic, the
K extent of A and B and the N extent of C a multiple of 32 for fp4 or 16 for fp8, 16-byte
alignment); only the scale tensors' base pointers matter, the kernel rebuilds their layouts. A and
B must share one type. Compile-only (no SM100 GPU here); :mod:`..common` holds the workload.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.common import TensorApiBlockScaledGemmPlan
from mla_var3.kernel.plan import Config


class CutlassSm100BlockscaledGemmPersistentPrefetchPlan(TensorApiBlockScaledGemmPlan):
    name = "cutlass_sm100_blockscaled_gemm_persistent_prefetch"
    description = (
        "CUTLASS's Blackwell dense_blockscaled_gemm_persistent_prefetch.py: the block-scaled persistent GEMM "
        "with TMA prefetch into L2 (compile-only here)"
    )
    example_file = "dense_blockscaled_gemm_persistent_prefetch.py"

    def kernel_object(self, example: Any, config: Config) -> Any:
        fmt = self._format(config)
        return example.Sm100BlockScaledPersistentDenseGemmKernel(
            fmt.vec, tuple(config["mma_tiler_mn"]), tuple(config["cluster_shape_mn"]), None
        )


__all__ = ["CutlassSm100BlockscaledGemmPersistentPrefetchPlan"]
