"""``sm100_gemm_tmem_double_buffer``: persistent CLC tcgen05 GEMM with a double-buffered TMEM accumulator."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.tmem_double_buffer.plan import Sm100GemmTmemDoubleBufferPlan

PLAN = Sm100GemmTmemDoubleBufferPlan
