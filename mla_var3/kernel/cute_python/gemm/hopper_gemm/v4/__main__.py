"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.v4 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.plan import HopperGemmV4Plan

raise SystemExit(benchmark_kernel_argparse(HopperGemmV4Plan))
