"""``python -m mla_var3.kernel.cute_python.attention.cutlass_ampere_fa2.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_ampere_fa2.imported.plan import CutlassAmpereFa2Plan

raise SystemExit(benchmark_kernel_argparse(CutlassAmpereFa2Plan))
