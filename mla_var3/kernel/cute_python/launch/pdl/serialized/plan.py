"""Plan for ``pdl_pair_serialized``: the pair launched plainly, the baseline of the ``pdl_pair`` group."""

from __future__ import annotations

from mla_var3.kernel.cute_python.launch.pdl.common import PdlPairPlanBase


class PdlPairSerializedPlan(PdlPairPlanBase):
    name = "pdl_pair_serialized"
    description = (
        "row scale then row dot without PDL (no launch attribute, no griddepcontrol): the dot starts "
        "once the scale has drained"
    )
    use_pdl = False


__all__ = ["PdlPairSerializedPlan"]
