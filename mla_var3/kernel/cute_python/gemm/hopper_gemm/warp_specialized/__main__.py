"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan

raise SystemExit(benchmark_kernel_argparse(HopperGemmWSPlan))
