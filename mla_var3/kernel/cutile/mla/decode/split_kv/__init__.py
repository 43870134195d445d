"""``mla_decode_cutile``: our cuTile MLA decode, split-KV plus combine over a paged KV cache."""

from mla_var3.kernel.cutile.mla.decode.split_kv.plan import MlaDecodeCuTilePlan

PLAN = MlaDecodeCuTilePlan
