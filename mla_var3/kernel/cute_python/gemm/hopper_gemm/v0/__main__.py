"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.v0 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.plan import HopperGemmV0Plan

raise SystemExit(benchmark_kernel_argparse(HopperGemmV0Plan))
