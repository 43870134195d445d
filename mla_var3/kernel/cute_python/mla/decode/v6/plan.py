"""Plan for ``mla_decode_v6``: v5's plan (split rule, workspace, longest-first order) with v6's kernel."""

from typing import Any

from mla_var3.kernel.cute_python.mla.decode.v5.plan import MlaDecodeV5Plan
from mla_var3.kernel.plan import Config, Shape


class MlaDecodeV6Plan(MlaDecodeV5Plan):
    name = "mla_decode_v6"
    description = (
        "MLA decode v6: v5 with the split path's fp32 partial O written as 64-bit stores (two adjacent "
        "columns per thread and store; v5 stores each value alone)"
    )

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v6.kernel import MlaDecodeV6

        return MlaDecodeV6(page=params["page"], split_kv=bool(params["split"]))


__all__ = ["MlaDecodeV6Plan"]
