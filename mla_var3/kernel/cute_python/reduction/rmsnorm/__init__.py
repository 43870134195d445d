"""Our RMSNorm forward (bf16 x, fp32 weight, fp32 math, bf16 y), in steps: ``rmsnorm_v0`` one row per
CTA, ``rmsnorm_v1`` persistent CTAs with the weight kept in registers, ``rmsnorm_v2`` long rows split
over a cluster that reduces through distributed SMEM."""
