"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.plan import HopperGemmSplitKPlan

raise SystemExit(benchmark_kernel_argparse(HopperGemmSplitKPlan))
