"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.v4_fused [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4_fused.plan import HopperGemmV4FusedPlan

raise SystemExit(benchmark_kernel_argparse(HopperGemmV4FusedPlan))
