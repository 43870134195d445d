"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.v1 [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.v1.plan import HopperGemmV1Plan

raise SystemExit(benchmark_kernel_argparse(HopperGemmV1Plan))
