"""Plan for ``cutlass_rmsnorm``: CUTLASS's ``rmsnorm.py`` compiled for ``sm_90a`` with the SM version pinned to 90 (runs on the H200).

See :mod:`..common` for the workload and why the SM version is passed explicitly.
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.common import CutlassRmsNormPlan


class CutlassRmsNormSm90Plan(CutlassRmsNormPlan):
    name = "cutlass_rmsnorm"
    description = (
        "CUTLASS's rmsnorm.py with reduce.py's row_reduce (warp, SMEM, cluster/DSMEM for long rows), "
        "SM version pinned to 90 (runs on the H200)"
    )
    archs = ("sm_90a",)
    sm_version = 90


__all__ = ["CutlassRmsNormSm90Plan"]
