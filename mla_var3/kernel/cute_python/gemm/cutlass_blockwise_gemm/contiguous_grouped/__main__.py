"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.contiguous_grouped [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.contiguous_grouped.plan import (
    CutlassSm100BlockwiseContiguousGroupedGemmPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100BlockwiseContiguousGroupedGemmPlan))
