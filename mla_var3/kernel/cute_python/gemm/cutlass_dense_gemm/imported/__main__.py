"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_dense_gemm.imported.plan import CutlassHopperDenseGemmPlan

raise SystemExit(CutlassHopperDenseGemmPlan().benchmark_kernel_argparse())
