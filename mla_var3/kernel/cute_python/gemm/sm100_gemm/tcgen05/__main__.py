"""``python -m mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05.plan import Sm100GemmTcgen05Plan

raise SystemExit(benchmark_kernel_argparse(Sm100GemmTcgen05Plan))
