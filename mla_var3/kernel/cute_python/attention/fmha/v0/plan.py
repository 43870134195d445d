"""Plan for ``fmha_hopper_v0``: the baseline SM90 FMHA forward (see ``kernel.py`` beside it)."""

from typing import Any

from mla_var3.kernel.cute_python.attention.fmha.plan_common import FmhaHopperPlanBase


class FmhaHopperV0Plan(FmhaHopperPlanBase):
    name = "fmha_hopper_v0"
    description = (
        "FMHA forward v0: two WGMMA warpgroups on 64-row Q tiles, one K and one V TMA buffer, online softmax and P in "
        "registers, causal tile skipping; every load waited for"
    )

    def make_kernel(self, causal: bool, tile_n: int) -> Any:
        from mla_var3.kernel.cute_python.attention.fmha.v0.kernel import FmhaHopperV0

        return FmhaHopperV0(causal=causal, tile_n=tile_n)


__all__ = ["FmhaHopperV0Plan"]
