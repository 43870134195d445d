"""``cutlass_rmsnorm_sm100``: CUTLASS's RMSNorm example for ``sm_100a`` (SM version pinned to 100)."""

from mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.sm100.plan import CutlassRmsNormSm100Plan

PLAN = CutlassRmsNormSm100Plan
