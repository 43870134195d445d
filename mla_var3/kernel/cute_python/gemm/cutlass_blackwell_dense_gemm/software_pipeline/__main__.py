"""``python -m mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.software_pipeline [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.gemm.cutlass_blackwell_dense_gemm.software_pipeline.plan import (
    CutlassSm100DenseGemmSoftwarePipelinePlan,
)

raise SystemExit(benchmark_kernel_argparse(CutlassSm100DenseGemmSoftwarePipelinePlan))
