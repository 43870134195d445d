"""Plan for ``row_reduce``: row sum and row max in one pass, long rows split over a cluster.

Rows of up to ``cta_cols`` columns run in one CTA (several rows per CTA for short rows); longer rows
go to a (1, cluster_n) cluster whose CTAs each reduce a share and exchange partials through
distributed SMEM (:mod:`..reduce`). The default 16384 columns per CTA clusters N = 32768 on 2 CTAs,
65536 on 4 and 131072 on 8.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.reduction.row_reduce.common import (
    RowReducePlanBase,
    fake_rows,
    fake_vector,
    rows,
    vector,
)
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size


class RowReducePlan(RowReducePlanBase):
    name = "row_reduce"
    description = (
        "row sum and max (fp32 out) in one pass; long rows split over a cluster reducing through DSMEM"
    )
    archs = ("sm_90a",)

    def _autotune_configs(self) -> list[Config]:
        return [{"cta_cols": 16384}, {"cta_cols": 8192}]

    def tiling(self, n: int, config: Config) -> Any:
        from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import cluster_size, row_block_tiling

        bits = 8 * element_size(self.dtype)
        return row_block_tiling(n, bits, None, cluster_size(n, config["cta_cols"]), least=8)

    def plan(self, config: Config) -> Any:
        import cutlass

        from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
        from mla_var3.kernel.cute_python.reduction.row_reduce.cluster.kernel import RowSumMax

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (
                fake_rows(cute_dtype(self.dtype), shape["n"]),
                fake_vector(cutlass.Float32),
                fake_vector(cutlass.Float32),
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return (
                rows(inputs["x"]),
                vector(outputs["sum"], dynamic=True),
                vector(outputs["max"], dynamic=True),
            )

        return ExampleKernel(
            host_for=lambda shape: RowSumMax(self.tiling(shape["n"], config)),
            compile_args=compile_args,
            launch_args=launch_args,
        )


__all__ = ["RowReducePlan"]
