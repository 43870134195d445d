"""Plan for ``fmha_hopper_v3``: v2 + O rescaled only when a warp's rows moved their running max
(a warp vote; see ``kernel.py``)."""

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.fmha.plan_common import FmhaHopperPlanBase


class FmhaHopperV3Plan(FmhaHopperPlanBase):
    name = "fmha_hopper_v3"
    description = "FMHA forward v3: v2 + the O rescale skipped (warp vote) when no row's running max moved"
    tile_ns: ClassVar[tuple[int, ...]] = (128,)  # 176 spills (see kernel.py)

    def make_kernel(self, causal: bool, tile_n: int) -> Any:
        from mla_var3.kernel.cute_python.attention.fmha.v3.kernel import FmhaHopperV3

        return FmhaHopperV3(causal=causal, tile_n=tile_n)


__all__ = ["FmhaHopperV3Plan"]
