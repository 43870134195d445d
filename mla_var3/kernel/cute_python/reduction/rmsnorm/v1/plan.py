"""Plan for ``rmsnorm_v1``: persistent CTAs that load the weight once and prefetch the next rows.

``ctas_per_sm`` x the GPU's SM count CTAs (the SM count read from torch at launch) walk the row
blocks; a CTA has 256 threads (512 at N > 8192, so a thread still holds four vectors), several rows
per CTA where a row needs fewer threads.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.reduction.rmsnorm.common import RmsNormPlanBase, row_kernel
from mla_var3.kernel.cute_python.reduction.rmsnorm.v0.plan import BF16_BITS
from mla_var3.kernel.plan import Config, Shape


def persistent_tiling(n: int) -> Any:
    """Up to 512 threads per row (four vectors each up to N = 16384), several rows per CTA below 256."""
    from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import row_block_tiling

    return row_block_tiling(n, BF16_BITS, None, least=8, most=512)


class RmsNormV1Plan(RmsNormPlanBase):
    name = "rmsnorm_v1"
    description = (
        "RMSNorm (bf16 x, fp32 w): persistent CTAs, w loaded once into registers, next rows prefetched"
    )
    archs = ("sm_90a", "sm_80")

    def _autotune_configs(self) -> list[Config]:
        return [{"ctas_per_sm": 2}, {"ctas_per_sm": 1}, {"ctas_per_sm": 4}]

    def plan(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.reduction.rmsnorm.v1.kernel import RmsNormPersistent

        def host_for(shape: Shape) -> RmsNormPersistent:
            return RmsNormPersistent(persistent_tiling(shape["n"]))

        def ctas(x: Any) -> int:
            import torch

            sms = torch.cuda.get_device_properties(x.device).multi_processor_count
            blocks = -(-x.shape[0] // persistent_tiling(x.shape[1]).rows_per_cta)
            return min(blocks, config["ctas_per_sm"] * sms)

        return row_kernel(host_for, ctas)


__all__ = ["RmsNormV1Plan", "persistent_tiling"]
