"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.blockwise [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.blockwise.plan import (
    CutlassSm100BlockwiseGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100BlockwiseGemmPlan))
