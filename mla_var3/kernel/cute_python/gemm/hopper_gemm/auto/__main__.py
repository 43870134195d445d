"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.auto [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.auto.plan import HopperGemmAutoPlan

raise SystemExit(benchmark_kernel_argparse(HopperGemmAutoPlan))
