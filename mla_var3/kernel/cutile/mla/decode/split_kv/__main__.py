"""``python -m mla_var3.kernel.cutile.mla.decode.split_kv [flags]``."""

from mla_var3.kernel.cutile.mla.decode.split_kv.plan import MlaDecodeCuTilePlan

raise SystemExit(MlaDecodeCuTilePlan().benchmark_kernel_argparse())
