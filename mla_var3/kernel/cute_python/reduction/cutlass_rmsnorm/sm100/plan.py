"""Plan for ``cutlass_rmsnorm_sm100``: CUTLASS's ``rmsnorm.py`` compiled for ``sm_100a`` with the SM version pinned to 100 (compile-only here).

See :mod:`..common` for the workload and why the SM version is passed explicitly.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.common import CutlassRmsNormPlan


class CutlassRmsNormSm100Plan(CutlassRmsNormPlan):
    name = "cutlass_rmsnorm_sm100"
    description = (
        "CUTLASS's rmsnorm.py with reduce.py's row_reduce (warp, SMEM, cluster/DSMEM for long rows), "
        "SM version pinned to 100 (compile-only here)"
    )
    archs = ("sm_100a",)
    sm_version = 100


__all__ = ["CutlassRmsNormSm100Plan"]
