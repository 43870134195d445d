"""Plan for ``mla_decode_v4``: the seesaw schedule over two warpgroups with per-piece KV barriers,
and a combine launched with PDL (see ``kernel.py``). Workspace as v1; the split count is v4's own.

**Split rule.** v1's :func:`~mla_var3.kernel.cute_python.mla.decode.plan_common.default_splits`
rounds ``SMs / tiles`` *up*: at b = 8, h_q = 128 it picks 9 splits, 144 CTAs for 132 SMs, so one
CTA per SM takes a second wave of 12. v4 rounds **down** (8 splits, 128 CTAs, one wave): each CTA
walks 1/8 instead of 1/9 of the cache, but no CTA waits for a second wave that costs a whole
split's time. Where the tiles alone fill about one wave (b = 128, h_q = 16: 128 tiles) v4 does not
split at all, where v1 picks 2 splits and 256 CTAs.
"""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.plan_common import TILE_M, TILE_N, sm_count
from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan
from mla_var3.kernel.plan import Config, Shape


def one_wave_splits(batch: int, query_tiles: int, kv_blocks: int, sm_count: int) -> int:
    """KV splits per (sequence, query tile) that keep the grid within one wave of ``sm_count`` CTAs
    (one CTA per SM): ``floor(SMs / tiles)``, at least 1, at most the sequence's KV blocks."""
    return max(1, min(kv_blocks, sm_count // (batch * query_tiles)))


class MlaDecodeV4Plan(MlaDecodeV1Plan):
    name = "mla_decode_v4"
    description = (
        "MLA decode v4: FlashMLA-style seesaw (2 warpgroups alternate QK^T/softmax/PV over block pairs), "
        "per-64-column KV barriers, P in registers/SMEM, one-wave split rule, PDL combine"
    )

    def splits(self, shape: Shape) -> int:
        query_tiles = -(-shape["h"] * shape["s"] // TILE_M)
        kv_blocks = -(-shape["t"] // TILE_N)
        return one_wave_splits(shape["b"], query_tiles, kv_blocks, sm_count())

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v4.kernel import MlaDecodeV4

        return MlaDecodeV4(page=params["page"], split_kv=bool(params["split"]))


__all__ = ["MlaDecodeV4Plan", "one_wave_splits"]
