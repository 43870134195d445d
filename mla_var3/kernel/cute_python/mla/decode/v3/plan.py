"""Plan for ``mla_decode_v3``: v2 + the softmax warpgroup overlaps block j's softmax with block
j+1's ``Q K^T`` (see ``kernel.py``). Splits and workspace as v1."""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.v1.plan import MlaDecodeV1Plan
from mla_var3.kernel.plan import Config, Shape


class MlaDecodeV3Plan(MlaDecodeV1Plan):
    name = "mla_decode_v3"
    description = "MLA decode v3: v2 + softmax of block j overlapped with Q K^T of block j+1 (two S accumulators)"

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v3.kernel import MlaDecodeV3

        return MlaDecodeV3(page=params["page"], split_kv=bool(params["split"]))


__all__ = ["MlaDecodeV3Plan"]
