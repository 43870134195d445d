"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.persistent [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.persistent.plan import (
    CutlassSm100BlockscaledGemmPersistentPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100BlockscaledGemmPersistentPlan))
