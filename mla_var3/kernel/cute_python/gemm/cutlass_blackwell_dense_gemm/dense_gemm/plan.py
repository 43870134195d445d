"""Plan for ``cutlass_sm100_dense_gemm``: CUTLASS's Blackwell ``dense_gemm.py``, imported from ``CUTLASS_DIR``.

The first of the series (``cute/blackwell/kernel/dense_gemm/`` at the pinned commit): one output
tile per CTA, 128 threads. Warp 0 issues the TMA loads and, in the leader CTA of a pair, the
tcgen05 MMAs, which accumulate in TMEM; all four warps then move the accumulator TMEM ->
registers -> SMEM -> global (TMA store). Its K loop is pipelined by hand: a prologue loads
``stages - 2`` K tiles, then each iteration loads one ahead and multiplies one, peeking at both
barriers with ``try_wait`` before it blocks on them.

Compile-only (no SM100 GPU here); :mod:`..common` holds the adapter.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.common import (
    BlackwellDenseGemmPlan,
    accepted_in_parts,
)


class CutlassSm100DenseGemmPlan(BlackwellDenseGemmPlan):
    name = "cutlass_sm100_dense_gemm"
    description = "CUTLASS's Blackwell dense_gemm.py from CUTLASS_DIR: one tile per CTA, 2-CTA tcgen05 MMA into TMEM, TMA store"
    example_file = "dense_gemm.py"
    kernel_class = "DenseGemmKernel"

    def example_accepts(self, gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
        return accepted_in_parts(gemm, mnkl, ab)


__all__ = ["CutlassSm100DenseGemmPlan"]
