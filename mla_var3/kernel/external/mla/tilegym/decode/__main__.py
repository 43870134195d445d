"""``python -m mla_var3.kernel.external.mla.tilegym.decode [flags]``."""

from mla_var3.kernel.cli import benchmark_kernel_argparse
from mla_var3.kernel.external.mla.tilegym.decode.plan import TileGymMlaDecodePlan

raise SystemExit(benchmark_kernel_argparse(TileGymMlaDecodePlan))
