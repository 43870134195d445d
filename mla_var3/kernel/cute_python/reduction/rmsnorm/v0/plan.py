"""Plan for ``rmsnorm_v0``: one row per CTA, the row's share of x and w in each thread's registers.

The first step: 128-bit copies of x (8 bf16) and of the fp32 weight (two copies per 8 columns)
through one tiled copy, an N predicate from the identity tensor, the sum of squares reduced by warp
shuffles and across the row's warps in SMEM. Every row re-reads w (4 bytes per column, from L2)
beside its 2 bytes of x from DRAM; ``rmsnorm_v1`` stops that.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.reduction.rmsnorm.common import RmsNormPlanBase, row_kernel
from mla_var3.kernel.plan import Config, Shape

BF16_BITS = 16


class RmsNormV0Plan(RmsNormPlanBase):
    name = "rmsnorm_v0"
    description = "RMSNorm (bf16 x, fp32 w): one row per CTA, 128-bit copies, warp + SMEM reduction"
    archs = ("sm_90a", "sm_80")

    def _autotune_configs(self) -> list[Config]:
        return [{"rows_per_cta": 1}]

    def plan(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.kernel import RmsNormRowBlock
        from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import row_block_tiling

        def host_for(shape: Shape) -> RmsNormRowBlock:
            return RmsNormRowBlock(row_block_tiling(shape["n"], BF16_BITS, config["rows_per_cta"]))

        return row_kernel(host_for)


__all__ = ["BF16_BITS", "RmsNormV0Plan"]
