"""Plan for ``pdl_pair_wait_first``: the pair with PDL, but the consumer waits before any work of its own."""

from __future__ import annotations

from mla_var3.kernel.cute_python.launch.pdl.common import PdlPairPlanBase


class PdlPairWaitFirstPlan(PdlPairPlanBase):
    name = "pdl_pair_wait_first"
    description = (
        "row scale then row dot, the dot launched with PDL but executing griddepcontrol.wait first: "
        "only the second launch overlaps, none of its work"
    )
    use_pdl = True
    overlap_prologue = False


__all__ = ["PdlPairWaitFirstPlan"]
