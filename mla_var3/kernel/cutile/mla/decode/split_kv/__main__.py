"""``python -m mla_var3.kernel.cutile.mla.decode.split_kv [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.cutile.mla.decode.split_kv.plan import MlaDecodeCuTilePlan

raise SystemExit(benchmark_kernel_argparse(MlaDecodeCuTilePlan))
