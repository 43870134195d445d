"""Plan for ``mla_decode_v4``: the seesaw schedule over two warpgroups with per-piece KV barriers,
and a combine launched with PDL (see ``kernel.py``). Split count and workspace as v1: the shared
rule (``plan_common.default_splits``) keeps the grid within one wave; the kernel rounds each
split's share up to an even number of blocks (its pairs)."""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan
from mla_var3.kernel.plan import Config, Shape


class MlaDecodeV4Plan(MlaDecodeV1Plan):
    name = "mla_decode_v4"
    description = (
        "MLA decode v4: FlashMLA-style seesaw (2 warpgroups alternate QK^T/softmax/PV over block pairs), "
        "per-64-column KV barriers, P in registers/SMEM, PDL combine"
    )

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v4.kernel import MlaDecodeV4

        return MlaDecodeV4(page=params["page"], split_kv=bool(params["split"]))


__all__ = ["MlaDecodeV4Plan"]
