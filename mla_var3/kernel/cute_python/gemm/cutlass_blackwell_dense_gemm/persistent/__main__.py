"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent [flags]``."""

from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.persistent.plan import (
    CutlassSm100DenseGemmPersistentPlan,
)

raise SystemExit(CutlassSm100DenseGemmPersistentPlan().benchmark_kernel_argparse())
