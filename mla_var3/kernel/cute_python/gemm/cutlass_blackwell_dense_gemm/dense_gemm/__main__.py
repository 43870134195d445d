"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.dense_gemm [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.dense_gemm.plan import (
    CutlassSm100DenseGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100DenseGemmPlan))
