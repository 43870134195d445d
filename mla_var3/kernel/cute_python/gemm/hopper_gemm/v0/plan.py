"""Plans of the Hopper GEMM worklog: ``hopper_gemm_v0`` here, and the base every later step's plan shares.

Each step (``v0`` ... ``v4``, and ``v4_fused``) is a registered plan of the GEMM workload
(:class:`~mla_var3.kernel.cute_python.gemm.common.GemmPlanBase`: the inputs, reference and
roofline cuBLAS and ``hopper_gemm_ws`` use), compiled once per config for dynamic M, N and K
with the operand marks of the v5 plan (``warp_specialized/plan.py``), so all steps and v5 run
the same problem. A persistent step (v3 on) also takes the grid size the GPU holds at once.
The v5 step is ``hopper_gemm_ws`` itself. No CuTe DSL import at module level: each step's
``make_kernel`` imports its kernel class.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    COMPILE_SM_COUNT,
    compile_operands,
    launch_operands,
    max_active_clusters,
)
from mla_var3.kernel.plan import Config, Shape, Tensors


class HopperGemmStepPlan(GemmPlanBase):
    """C = A @ B^T on sm_90a with one step of the worklog; subclasses name the kernel and configs."""

    archs: ClassVar[tuple[str, ...]] = ("sm_90a",)
    backend: ClassVar[str] = "cute"
    static_shape_params: ClassVar[tuple[str, ...]] = ()  # M, N and K are dynamic: one binary per config
    configs: ClassVar[tuple[Config, ...]]  # the first is the default
    persistent: ClassVar[bool] = False  # the host function takes the persistent grid size

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in self.configs]

    def make_kernel(self, config: Config) -> Any:
        """The step's kernel object for ``config`` (its constructor takes the config as keywords)."""
        raise NotImplementedError

    def compile_extras(self) -> tuple[Any, ...]:
        """Host-function arguments after A, B and C when compiling (tensor-free)."""
        return (COMPILE_SM_COUNT,) if self.persistent else ()

    def launch_extras(self, inputs: Tensors) -> tuple[Any, ...]:
        """The same arguments for a launch on the GPU that holds ``inputs``."""
        return (max_active_clusters(1, inputs["a"].device.index or 0),) if self.persistent else ()

    def plan(self, config: Config) -> CuteKernel:
        gemm = self.make_kernel(config)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (*compile_operands(self.dtype), *self.compile_extras())

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return (*launch_operands(inputs["a"], inputs["b"], outputs["c"]), *self.launch_extras(inputs))

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: gemm.dynamic_smem_bytes(),
        )


class HopperGemmV0Plan(HopperGemmStepPlan):
    name = "hopper_gemm_v0"
    description = "Hopper GEMM worklog step 0: TMA + WGMMA, one SMEM stage, one warpgroup, direct stores"
    configs = ({"tile_mn": (64, 256)}, {"tile_mn": (64, 128)})

    def make_kernel(self, config: Config) -> Any:
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.kernel import HopperGemmV0

        return HopperGemmV0(**config)


__all__ = ["HopperGemmStepPlan", "HopperGemmV0Plan"]
