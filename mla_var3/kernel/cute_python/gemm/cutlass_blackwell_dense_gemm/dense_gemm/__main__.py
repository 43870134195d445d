"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.dense_gemm [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.dense_gemm.plan import (
    CutlassSm100DenseGemmPlan,
)

raise SystemExit(CutlassSm100DenseGemmPlan().benchmark_kernel_argparse())
