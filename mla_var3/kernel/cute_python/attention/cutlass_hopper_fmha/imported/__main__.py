"""``python -m mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported.plan import CutlassHopperFmhaPlan

raise SystemExit(benchmark_kernel_argparse(CutlassHopperFmhaPlan))
