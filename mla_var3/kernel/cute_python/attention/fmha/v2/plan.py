"""Plan for ``fmha_hopper_v2``: v1 + the consumer warpgroups take turns issuing WGMMAs (named
barriers) and each overlaps its softmax with its previous block's ``P V`` (see ``kernel.py``)."""

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.fmha.plan_common import FmhaHopperPlanBase


class FmhaHopperV2Plan(FmhaHopperPlanBase):
    name = "fmha_hopper_v2"
    description = (
        "FMHA forward v2: v1 + ping-pong of the two consumer warpgroups on named barriers and intra-warpgroup "
        "overlap (block i's softmax while block i-1's P V runs)"
    )
    tile_ns: ClassVar[tuple[int, ...]] = (128,)  # 176 spills (see kernel.py)

    def make_kernel(self, causal: bool, tile_n: int) -> Any:
        from mla_var3.kernel.cute_python.attention.fmha.v2.kernel import FmhaHopperV2

        return FmhaHopperV2(causal=causal, tile_n=tile_n)


__all__ = ["FmhaHopperV2Plan"]
