"""``cutlass_rmsnorm``: CUTLASS's RMSNorm example for ``sm_90a`` (SM version pinned to 90)."""

from mla_var3.kernel.cute_python.reduction.cutlass_rmsnorm.sm90.plan import CutlassRmsNormSm90Plan

PLAN = CutlassRmsNormSm90Plan
