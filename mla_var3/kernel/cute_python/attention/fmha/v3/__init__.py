"""``fmha_hopper_v3``: v2 + the O rescale skipped by whole warps when no row's running max moved."""

from mla_var3.kernel.cute_python.attention.fmha.v3.plan import FmhaHopperV3Plan

PLAN = FmhaHopperV3Plan
