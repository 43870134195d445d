"""``python -m mla_var3.kernel.cute_python.gemm.fp8_gemm.promoted [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.fp8_gemm.promoted.plan import HopperGemmFp8Plan

raise SystemExit(benchmark_kernel_argparse(HopperGemmFp8Plan))
