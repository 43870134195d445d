"""``python -m mla_var3.kernel.external.mla.tilegym.decode [flags]``."""

from mla_var3.kernel.external.mla.tilegym.decode.plan import TileGymMlaDecodePlan

raise SystemExit(TileGymMlaDecodePlan().benchmark_kernel_argparse())
