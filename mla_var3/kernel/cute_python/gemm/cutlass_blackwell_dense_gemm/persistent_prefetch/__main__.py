"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_prefetch [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_prefetch.plan import (
    CutlassSm100DenseGemmPersistentPrefetchPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100DenseGemmPersistentPrefetchPlan))
