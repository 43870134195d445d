"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_dynamic [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent_dynamic.plan import (
    CutlassSm100DenseGemmPersistentDynamicPlan,
)

raise SystemExit(CutlassSm100DenseGemmPersistentDynamicPlan().benchmark_kernel_argparse())
