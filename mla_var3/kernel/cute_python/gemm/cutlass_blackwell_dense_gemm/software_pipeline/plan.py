"""Plan for ``cutlass_sm100_dense_gemm_software_pipeline``: CUTLASS's ``dense_gemm_software_pipeline.py``.

The same kernel as ``dense_gemm.py`` but for the K loop: one ``cutlass.range(k_tiles,
prefetch_stages=stages - 2)`` loop that loads and multiplies the same K tile, and the compiler
builds the load-ahead prologue that ``dense_gemm.py`` writes by hand (and drops its ``try_wait``
peeks). Compile-only (no SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.common import (
    BlackwellDenseGemmPlan,
    accepted_in_parts,
)


class CutlassSm100DenseGemmSoftwarePipelinePlan(BlackwellDenseGemmPlan):
    name = "cutlass_sm100_dense_gemm_software_pipeline"
    description = "CUTLASS's Blackwell dense_gemm_software_pipeline.py: the K loop pipelined by cutlass.range(prefetch_stages=)"
    example_file = "dense_gemm_software_pipeline.py"
    kernel_class = "DenseGemmKernel"

    def example_accepts(self, gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
        return accepted_in_parts(gemm, mnkl, ab)


__all__ = ["CutlassSm100DenseGemmSoftwarePipelinePlan"]
