"""``python -m mla_var3.kernel.torch_ref.gemm.cublas.small_int_data [flags]``."""

from mla_var3.kernel.torch_ref.gemm.cublas.small_int_data.plan import CublasGemmSmallIntPlan

raise SystemExit(CublasGemmSmallIntPlan().benchmark_kernel_argparse())
