"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_dynamic [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_dynamic.plan import (
    CutlassSm100DenseGemmPersistentDynamicPlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100DenseGemmPersistentDynamicPlan))
