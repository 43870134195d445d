"""The plan every SM100 GEMM step shares: the workload, the shapes its tiles take, compile/launch args.

Each step's ``plan.py`` names its kernel class and configs; everything else is here. The plans
are compile-verified only: our GPU is an H200 (sm_90), which has no tcgen05 or TMEM, so the arch
rule never launches them here and ``--compile-only --arch sm_100a`` (or any run on a non-SM100
machine) compiles them and reports registers, SMEM and SASS. The workload methods are the GEMM
family's (:class:`~mla_var3.kernel.cute_python.gemm.common.GemmPlanBase`), so a B200 could run
and check them as they are. No CuTe DSL import at module level: the kernel module is imported
in :meth:`Sm100GemmStepPlan.plan`.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, fake_dynamic_tensor, to_cute_dynamic

CTA_TILE_M = 128  # accumulator rows per CTA (the 128 TMEM lanes); kept equal to common.CTA_TILE_M
K_DIVISIBILITY = 8  # 16-byte rows of 16-bit elements, as TMA requires


def tile_multiples(config: Config) -> tuple[int, int]:
    """M and N must be multiples of a cluster's tile: 128 rows per CTA, the MMA's N per CTA column.

    The direct-store epilogues store without predication, and every step keeps the same rule.
    """
    cluster_m, cluster_n = config.get("cluster_mn", (1, 1))
    return CTA_TILE_M * cluster_m, config["mma_tiler_mn"][1] * cluster_n


class Sm100GemmStepPlan(GemmPlanBase):
    """C = A @ B^T on sm_100a with one of our tcgen05 kernels; subclasses name the kernel and configs."""

    # Multiples of a 2 x 2 cluster's tile (256 x 512 with N = 256); K = 520 leaves a zero-filled
    # last K tile; 4096^2 has more 256 x 256 tiles (256) than a B200 holds pairs (74).
    check_shapes: ClassVar[tuple[Shape, ...]] = (
        {"m": 256, "n": 512, "k": 64},
        {"m": 512, "n": 1024, "k": 520},
        {"m": 4096, "n": 4096, "k": 4096},
    )
    archs: ClassVar[tuple[str, ...]] = ("sm_100a",)
    dtypes: ClassVar[tuple[str, ...]] = ("float16", "bfloat16")
    backend: ClassVar[str] = "cute"
    kernel_class: ClassVar[str]  # "package.module:Class", constructed with the config as keywords
    configs: ClassVar[tuple[Config, ...]]  # the first is the default

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)
        if shape["m"] % CTA_TILE_M:
            raise UnsupportedShapeError(
                f"{self.name} needs --m (={shape['m']}) to be a multiple of {CTA_TILE_M}; "
                "pad M with zero rows"
            )

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in self.configs]

    def check_config_shape(self, shape: Shape, config: Config) -> None:
        """The tile rule of one config (the CLI's ``--config`` picks it), as a one-line error."""
        m_multiple, n_multiple = tile_multiples(config)
        for dim, multiple in (("m", m_multiple), ("n", n_multiple)):
            if shape[dim] % multiple:
                raise UnsupportedShapeError(
                    f"{self.name} with {config} needs --{dim} (={shape[dim]}) to be a multiple of "
                    f"{multiple}; "
                    f"pad {dim.upper()} or pick another --config"
                )

    def make_kernel(self, config: Config) -> Any:
        module, cls = self.kernel_class.split(":")
        return getattr(importlib.import_module(module), cls)(**config)

    def plan(self, config: Config) -> CuteKernel:
        kernel = self.make_kernel(config)
        dtype = cute_dtype(self.dtype)
        _, n_multiple = tile_multiples(config)
        marks = ((CTA_TILE_M, K_DIVISIBILITY), (n_multiple, K_DIVISIBILITY), (CTA_TILE_M, n_multiple))

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            self.check_config_shape(shape, config)
            return tuple(fake_dynamic_tensor(dtype, mark) for mark in marks)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            tensors = (inputs["a"], inputs["b"], outputs["c"])
            return tuple(to_cute_dynamic(t, mark) for t, mark in zip(tensors, marks, strict=True))

        return CuteKernel(
            host_fn=kernel,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: kernel.budget.total,
        )


__all__ = ["CTA_TILE_M", "K_DIVISIBILITY", "Sm100GemmStepPlan", "tile_multiples"]
