"""``sm100_gemm_tcgen05``: TMA loads, tcgen05 MMA into TMEM, TMEM -> registers -> global epilogue."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05.plan import Sm100GemmTcgen05Plan

PLAN = Sm100GemmTcgen05Plan
