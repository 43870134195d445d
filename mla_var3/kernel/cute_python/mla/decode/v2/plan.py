"""Plan for ``mla_decode_v2``: v1 + producer warpgroup, two consumer warpgroups with register
reallocation and a multistage KV TMA pipeline (see ``kernel.py``). Splits and workspace as v1."""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan
from mla_var3.kernel.plan import Config, Shape


class MlaDecodeV2Plan(MlaDecodeV1Plan):
    name = "mla_decode_v2"
    description = "MLA decode v2: v1 + warp specialization (TMA producer, 2 consumer WGs, setmaxnreg), 2-stage KV pipeline"

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v2.kernel import MlaDecodeV2

        return MlaDecodeV2(page=params["page"], split_kv=bool(params["split"]))


__all__ = ["MlaDecodeV2Plan"]
