"""``python -m mla_var3.kernel.cute_python.attention.cutlass_fmha_bwd.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_fmha_bwd.imported.plan import CutlassFmhaBwdSm100Plan

raise SystemExit(benchmark_kernel_argparse(CutlassFmhaBwdSm100Plan))
