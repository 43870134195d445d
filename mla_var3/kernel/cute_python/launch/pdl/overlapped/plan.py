"""Plan for ``pdl_pair``: the row scale and row dot with PDL, the consumer's z row loaded before its wait."""

from __future__ import annotations

from mla_var3.kernel.cute_python.launch.pdl.common import PdlPairPlanBase


class PdlPairPlan(PdlPairPlanBase):
    name = "pdl_pair"
    description = (
        "row scale then row dot, the dot launched with PDL; it loads its independent z row, then "
        "griddepcontrol.wait, then the scaled rows (PREEXIT / ACQBULK)"
    )
    use_pdl = True
    overlap_prologue = True


__all__ = ["PdlPairPlan"]
