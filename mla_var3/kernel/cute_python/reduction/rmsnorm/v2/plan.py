"""Plan for ``rmsnorm_v2``: ``rmsnorm_v0``'s row-block kernel with several rows per CTA and, for
long rows, a cluster of CTAs that splits each row and reduces through distributed SMEM.

A CTA takes at most ``cta_cols`` columns of a row: rows longer than that go to a (1, cluster_n)
cluster, cluster_n the power of two that brings each CTA's share under ``cta_cols`` (at most 8, the
portable cluster size). The default 8192 bf16 columns (16 KiB per row and CTA) puts N = 16384 on
2 CTAs and N = 65536 on 8; shorter rows run in one CTA, several rows per CTA.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.reduction.rmsnorm.common import RmsNormPlanBase, row_kernel
from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.plan import BF16_BITS
from mla_var3.kernel.plan import Config, Shape


class RmsNormV2Plan(RmsNormPlanBase):
    name = "rmsnorm_v2"
    description = (
        "RMSNorm (bf16 x, fp32 w): rows per CTA, long rows split over a cluster reducing through DSMEM"
    )
    archs = ("sm_90a",)
    max_n = 2**16
    check_shapes = (*RmsNormPlanBase.check_shapes, {"m": 199, "n": 16384}, {"m": 7, "n": 65536})

    def _autotune_configs(self) -> list[Config]:
        return [{"cta_cols": 8192}, {"cta_cols": 16384}, {"cta_cols": 4096}]

    def plan(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.kernel import RmsNormRowBlock
        from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import cluster_size, row_block_tiling

        def host_for(shape: Shape) -> RmsNormRowBlock:
            n = shape["n"]
            return RmsNormRowBlock(
                row_block_tiling(n, BF16_BITS, None, cluster_size(n, config["cta_cols"]), least=8)
            )

        return row_kernel(host_for)


__all__ = ["RmsNormV2Plan"]
