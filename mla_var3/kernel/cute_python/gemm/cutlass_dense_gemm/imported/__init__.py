"""``cutlass_hopper_dense_gemm``: CUTLASS's Hopper ``dense_gemm.py`` loaded from ``CUTLASS_DIR`` (TMA, WGMMA, TMA store)."""

from mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported.plan import CutlassHopperDenseGemmPlan

PLAN = CutlassHopperDenseGemmPlan
