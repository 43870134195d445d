"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.v2 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.v2.plan import HopperGemmV2Plan

raise SystemExit(benchmark_kernel_argparse(HopperGemmV2Plan))
