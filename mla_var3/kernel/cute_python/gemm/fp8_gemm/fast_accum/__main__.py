"""``python -m mla_var3.kernel.cute_python.gemm.fp8_gemm.fast_accum [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.fp8_gemm.fast_accum.plan import HopperGemmFp8FastAccumPlan

raise SystemExit(benchmark_kernel_argparse(HopperGemmFp8FastAccumPlan))
