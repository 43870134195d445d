"""``python -m mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05 [flags]``."""

from mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05.plan import Sm100GemmTcgen05Plan

raise SystemExit(Sm100GemmTcgen05Plan().benchmark_kernel_argparse())
