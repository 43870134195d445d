"""Plan for ``rmsnorm_v3``: x staged in SMEM by bulk copies, a ring of stages per persistent CTA.

The steps before hold x in registers from the load to the store, so the bytes an SM has in flight
are bounded by registers: at N = 16384 ``rmsnorm_v0`` fits one CTA per SM and loses to quack;
``rmsnorm_v2`` buys residency back with a cluster. Here x lands in SMEM through ``cp.async.bulk``
(one instruction per row, completing on an mbarrier), and each CTA keeps up to ``stages - 1`` row
blocks in flight while it reduces and stores another: the in-flight bytes are set by the SMEM
ring, not by registers. The rule (threads, rows per stage, stages, CTAs per SM, grid) is
:mod:`.tiling`'s, a function of N, M and the SM count; the configs choose the SMEM budget and the
CTA layout (:data:`.tiling.LAYOUTS`: the default schedules many 256-thread CTAs where a row needs
at most 256 threads; ``"one_per_sm"`` is the rule of the first GPU run).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.reduction.rmsnorm.common import RmsNormPlanBase, row_kernel
from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.tiling import (
    DEFAULT_SMEM_BUDGET,
    StagedRows,
    staged_rows,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape

MAX_N = 20480  # five vectors of x and 40 fp32 weights per thread (512 threads): no spills (tests/test_rmsnorm_v3.py)
MAX_ELEMENTS = 2**31 - 1  # row offsets (row * N) are 32-bit in the kernel


class RmsNormV3Plan(RmsNormPlanBase):
    name = "rmsnorm_v3"
    description = (
        "RMSNorm (bf16 x, fp32 w): x staged in an SMEM ring by cp.async.bulk + mbarriers (many 256-thread CTAs "
        "up to N = 8192, one persistent CTA per SM above), w in registers"
    )
    archs = ("sm_90a",)
    max_n = MAX_N
    check_shapes = (
        {"m": 199, "n": 1000},
        {"m": 199, "n": 4096},
        {"m": 7, "n": 16384},
        {"m": 133, "n": 20000},
    )

    def validate_shape(self, shape: Shape) -> None:
        m, n = shape["m"], shape["n"]
        staged_rows(n)  # N must be a multiple of 8 and two stages must fit
        if n > self.max_n:
            raise UnsupportedShapeError(
                f"rmsnorm_v3 keeps a row's weights and x per thread in registers up to --n {self.max_n}, got {n}; "
                "use rmsnorm_v2 (rows split over a cluster) for longer rows"
            )
        if m * n > MAX_ELEMENTS:
            raise UnsupportedShapeError(
                f"rmsnorm_v3 addresses x and y with 32-bit element offsets: --m x --n must be at most {MAX_ELEMENTS}, "
                f"got {m} x {n}; split the rows into several launches"
            )

    def _autotune_configs(self) -> list[Config]:
        return [
            {"smem_budget": DEFAULT_SMEM_BUDGET, "layout": "scheduled"},
            {"smem_budget": 3 * 32 * 1024, "layout": "scheduled"},
            {"smem_budget": DEFAULT_SMEM_BUDGET, "layout": "two_per_sm"},
            {"smem_budget": DEFAULT_SMEM_BUDGET, "layout": "one_per_sm"},
        ]

    def plan(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.reduction.rmsnorm.v3.kernel import RmsNormStaged

        def rule(n: int) -> StagedRows:
            return staged_rows(n, config["smem_budget"], config["layout"])

        def host_for(shape: Shape) -> RmsNormStaged:
            return RmsNormStaged(rule(shape["n"]))

        def ctas(x: Any) -> int:
            import torch

            sms = torch.cuda.get_device_properties(x.device).multi_processor_count
            return rule(x.shape[1]).ctas(x.shape[0], sms)

        return row_kernel(host_for, ctas)


class RmsNormV3TwoPerSmPlan(RmsNormV3Plan):
    """``rmsnorm_v3`` with two persistent 256-thread CTAs per SM where a row needs at most 256
    threads: a group member of its own, so one run times it beside the default layout."""

    name = "rmsnorm_v3_two_per_sm"
    description = "rmsnorm_v3 with two persistent CTAs per SM (256 threads each) up to N = 8192"

    def _autotune_configs(self) -> list[Config]:
        return [{"smem_budget": DEFAULT_SMEM_BUDGET, "layout": "two_per_sm"}]


class RmsNormV3OnePerSmPlan(RmsNormV3Plan):
    """``rmsnorm_v3`` with one persistent 512-thread CTA per SM at every N (the first GPU run's rule)."""

    name = "rmsnorm_v3_one_per_sm"
    description = "rmsnorm_v3 with one persistent 512-thread CTA per SM at every N (its first rule)"

    def _autotune_configs(self) -> list[Config]:
        return [{"smem_budget": DEFAULT_SMEM_BUDGET, "layout": "one_per_sm"}]


__all__ = ["MAX_N", "RmsNormV3OnePerSmPlan", "RmsNormV3Plan", "RmsNormV3TwoPerSmPlan"]
