"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_prefetch [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_prefetch.plan import (
    CutlassSm100DenseGemmPersistentPrefetchPlan,
)

raise SystemExit(CutlassSm100DenseGemmPersistentPrefetchPlan().benchmark_kernel_argparse())
