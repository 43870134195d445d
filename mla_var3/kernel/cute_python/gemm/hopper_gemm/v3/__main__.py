"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.v3 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.v3.plan import HopperGemmV3Plan

raise SystemExit(benchmark_kernel_argparse(HopperGemmV3Plan))
