"""Plan for ``hopper_gemm_auto``: the v5 kernel (``hopper_gemm_ws``, unchanged) with the config rule's pick.

Config 0 is the rule itself: at every shape, ``config_rule.pick_config(M, N, K, dtype, SMs)``
chooses the tile, cluster, stages and tile order, and the v5 kernel is compiled for that
choice (so the binary depends on the shape: ``static_shape_params`` is all of M, N and K).
The SM count is the GPU's when there is one, else the H200's 132; it is part of the config,
so a record names the GPU size the rule was evaluated for. Configs 1.. are every candidate the
rule scores, fixed, for measuring the rule against the alternatives (``--config N``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled, CuteKernel
from mla_var3.kernel.cute_python.gemm.hopper_gemm.config_rule import candidates, pick_config
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    COMPILE_SM_COUNT,
    HopperGemmWSPlan,
)
from mla_var3.kernel.plan import Config, Shape, Tensors

if TYPE_CHECKING:
    from collections.abc import Callable

    from mla_var3.profile.timeline import Timeline

RULE = "pick_config"
# The fixed candidates of configs 1..: the rule's candidate set at a shape every tile and cluster fits.
SWEEP_SHAPE = {"m": 8192, "n": 8192}


def device_sm_count() -> int:
    """The SM count of GPU 0, or the H200's when there is no GPU (compiling on a CPU)."""
    import torch

    if not torch.cuda.is_available():
        return COMPILE_SM_COUNT
    return torch.cuda.get_device_properties(0).multi_processor_count


class RuleKernel:
    """The backend kernel of the rule's config: at each shape, the v5 kernel the rule picks."""

    backend: ClassVar[str] = "cute"

    def __init__(self, plan: HopperGemmAutoPlan, config: Config) -> None:
        self.plan, self.config = plan, config

    def for_shape(self, shape: Shape) -> CuteKernel:
        return self.plan.plan(self.plan.resolve(shape, self.config))

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        return self.for_shape(shape).compile(shape, arch)

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        (m, k), n = inputs["a"].shape, inputs["b"].shape[0]
        return self.for_shape({"m": m, "n": n, "k": k}).bind(compiled, inputs, outputs)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.bind(compiled, inputs, outputs)()


class HopperGemmAutoPlan(HopperGemmWSPlan):
    name = "hopper_gemm_auto"
    description = (
        "hopper_gemm_ws (unchanged) with the tile, cluster, stages and tile order config_rule picks per shape"
    )
    static_shape_params: ClassVar[tuple[str, ...] | None] = None  # the rule's pick depends on M, N and K

    def _autotune_configs(self) -> list[Config]:
        fixed = [c.kernel_kwargs() for c in candidates(SWEEP_SHAPE["m"], SWEEP_SHAPE["n"], self.dtype)]
        return [{"rule": RULE, "sm_count": device_sm_count()}, *fixed]

    def resolve(self, shape: Shape, config: Config) -> Config:
        """The fixed config ``config`` stands for at ``shape`` (itself unless it is the rule)."""
        if "rule" not in config:
            return config
        picked = pick_config(shape["m"], shape["n"], shape["k"], self.dtype, config["sm_count"])
        return picked.kernel_kwargs()

    def plan(self, config: Config) -> Any:
        if "rule" in config:
            return RuleKernel(self, config)
        return super().plan(config)

    def record_timeline(self, shape: Shape, config: Config) -> Timeline:
        return super().record_timeline(shape, self.resolve(shape, config))


__all__ = ["RULE", "HopperGemmAutoPlan", "RuleKernel", "device_sm_count"]
