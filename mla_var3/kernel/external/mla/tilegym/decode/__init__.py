"""``tilegym_mla_decode``: TileGym's cuTile MLA decode (non-paged, bf16), compiled ahead of time."""

from mla_var3.kernel.external.mla.tilegym.decode.plan import TileGymMlaDecodePlan

PLAN = TileGymMlaDecodePlan
