"""``fmha_hopper_v2``: v1 + ping-pong between the consumer warpgroups and softmax overlapped with P V."""

from mla_var3.kernel.cute_python.attention.fmha.v2.plan import FmhaHopperV2Plan

PLAN = FmhaHopperV2Plan
