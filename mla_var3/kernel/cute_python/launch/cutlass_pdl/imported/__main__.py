"""``python -m mla_var3.kernel.cute_python.launch.cutlass_pdl.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.launch.cutlass_pdl.imported.plan import CutlassPdlElementwiseAddPlan

raise SystemExit(benchmark_kernel_argparse(CutlassPdlElementwiseAddPlan))
