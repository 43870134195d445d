"""``python -m mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized [flags]``."""

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan

raise SystemExit(HopperGemmWSPlan().benchmark_kernel_argparse())
