"""Plan for ``mla_decode_v0``: the baseline CuTe DSL MLA decode (see ``kernel.py`` beside it)."""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.plan_common import MlaDecodeCutePlanBase
from mla_var3.kernel.plan import Config, Shape


class MlaDecodeV0Plan(MlaDecodeCutePlanBase):
    name = "mla_decode_v0"
    description = "MLA decode v0: paged-KV TMA, WGMMA QK^T and PV (V a view of K), online softmax; no overlap, no split"

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v0.kernel import MlaDecodeV0

        return MlaDecodeV0(page=params["page"])


__all__ = ["MlaDecodeV0Plan"]
