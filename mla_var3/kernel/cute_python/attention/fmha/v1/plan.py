"""Plan for ``fmha_hopper_v1``: v0 + a producer warpgroup, two consumer warpgroups with register
reallocation and multistage K and V TMA pipelines (see ``kernel.py``)."""

from typing import Any

from mla_var3.kernel.cute_python.attention.fmha.plan_common import FmhaHopperPlanBase


class FmhaHopperV1Plan(FmhaHopperPlanBase):
    name = "fmha_hopper_v1"
    description = (
        "FMHA forward v1: v0 + warp specialization (TMA producer warpgroup, two consumer warpgroups, setmaxnreg), "
        "K and V rings of 3 stages (2 at tile_n 176)"
    )

    def make_kernel(self, causal: bool, tile_n: int) -> Any:
        from mla_var3.kernel.cute_python.attention.fmha.v1.kernel import FmhaHopperV1

        return FmhaHopperV1(causal=causal, tile_n=tile_n)


__all__ = ["FmhaHopperV1Plan"]
