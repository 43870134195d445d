"""``python -m mla_var3.kernel.cute_python.attention.cutlass_fmha.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_fmha.imported.plan import CutlassFmhaSm100Plan

raise SystemExit(benchmark_kernel_argparse(CutlassFmhaSm100Plan))
