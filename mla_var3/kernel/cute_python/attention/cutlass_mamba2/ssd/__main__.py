"""``python -m mla_var3.kernel.cute_python.attention.cutlass_mamba2.ssd [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_mamba2.ssd.plan import CutlassMamba2SsdPlan

raise SystemExit(benchmark_kernel_argparse(CutlassMamba2SsdPlan))
