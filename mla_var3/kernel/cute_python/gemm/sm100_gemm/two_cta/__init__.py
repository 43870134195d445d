"""``sm100_gemm_two_cta``: tcgen05 GEMM whose 256-row MMA spans a CTA pair, with TMA multicast."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.two_cta.plan import Sm100GemmTwoCtaPlan

PLAN = Sm100GemmTwoCtaPlan
