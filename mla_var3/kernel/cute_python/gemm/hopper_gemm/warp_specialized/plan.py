"""Plan for ``hopper_gemm_ws``: our warp-specialized, persistent TMA + WGMMA GEMM for sm_90a.

Configs are the CTA tile, the cluster shape and the pipeline depth; the first is the one
expected to be fastest at 8192^3 (128x256 tile with two consumer warpgroups, a 2x1 cluster
multicasting B, 4 stages). The kernel is compiled once per config for dynamic M, N and K
(each with the divisibility the kernel relies on), so every shape reuses one binary.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, fake_dynamic_tensor, to_cute_dynamic

if TYPE_CHECKING:
    from mla_var3.profile.timeline import Timeline

# Divisibility of (rows, cols) the binary assumes for A, B and C: 16-byte rows (8 16-bit
# elements) for TMA, and B's rows a multiple of 8 as well.
A_DIVISIBILITY, B_DIVISIBILITY, C_DIVISIBILITY = (1, 8), (8, 8), (1, 8)
# The persistent grid's size is a launch argument (an Int32), not part of the binary: a
# compile-only build passes this stand-in, the H100/H200 SM count.
COMPILE_SM_COUNT = 132


def gemm_from_config(config: Config) -> Any:
    """The kernel object of a config."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import HopperGemmWS

    return HopperGemmWS(**gemm_kwargs(config))


def gemm_kwargs(config: Config) -> dict[str, Any]:
    """The kernel's constructor arguments for a config (the timeline variant takes the same)."""
    kwargs = {"tile_mn": tuple(config["tile_mn"]), "cluster_mn": tuple(config["cluster_mn"]), "stages": config["stages"]}
    if "raster_group_m" in config:
        kwargs["raster_group_m"] = config["raster_group_m"]
    return kwargs


def compile_operands(dtype: str) -> tuple[Any, Any, Any]:
    """Fake A, B and C with the divisibility the binary assumes (tensor-free)."""
    ab = cute_dtype(dtype)
    return (
        fake_dynamic_tensor(ab, A_DIVISIBILITY),
        fake_dynamic_tensor(ab, B_DIVISIBILITY),
        fake_dynamic_tensor(ab, C_DIVISIBILITY),
    )


def launch_operands(a: Any, b: Any, c: Any) -> tuple[Any, Any, Any]:
    """Real A, B and C marked like :func:`compile_operands`."""
    return to_cute_dynamic(a, A_DIVISIBILITY), to_cute_dynamic(b, B_DIVISIBILITY), to_cute_dynamic(c, C_DIVISIBILITY)


@cache
def max_active_clusters(cluster_size: int, device_index: int = 0) -> int:
    """How many clusters of ``cluster_size`` CTAs (one CTA per SM) the GPU runs at once: the
    persistent grid. Asks the driver's occupancy calculator (``HardwareInfo``), which knows
    how clusters pack into GPCs; needs a GPU."""
    import torch
    from cutlass.utils import HardwareInfo

    with torch.cuda.device(device_index):
        return HardwareInfo(device_index).get_max_active_clusters(cluster_size)


class HopperGemmWSPlan(GemmPlanBase):
    name = "hopper_gemm_ws"
    description = "warp-specialized persistent GEMM: TMA multicast, mbarrier pipeline, WGMMA, setmaxnreg, TMA-store epilogue"
    archs = ("sm_90a",)
    backend = "cute"
    static_shape_params = ()  # M, N and K are dynamic: one binary per config and dtype

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)

    def _autotune_configs(self) -> list[Config]:
        return [
            {"tile_mn": (128, 256), "cluster_mn": (2, 1), "stages": 4},
            {"tile_mn": (128, 256), "cluster_mn": (1, 1), "stages": 4},
            {"tile_mn": (128, 128), "cluster_mn": (2, 1), "stages": 6},
            {"tile_mn": (128, 128), "cluster_mn": (1, 2), "stages": 6},
        ]

    def plan(self, config: Config) -> CuteKernel:
        gemm = gemm_from_config(config)
        cluster_size = gemm.cluster_mn[0] * gemm.cluster_mn[1]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (*compile_operands(self.dtype), COMPILE_SM_COUNT // cluster_size)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            a, b, c = inputs["a"], inputs["b"], outputs["c"]
            max_clusters = max_active_clusters(cluster_size, a.device.index or 0)
            return (*launch_operands(a, b, c), max_clusters)

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: gemm.dynamic_smem_bytes(),
        )

    def record_timeline(self, shape: Shape, config: Config) -> Timeline:
        """The in-kernel timeline of one launch on this GPU (see ``timeline.py`` beside this file)."""
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.timeline import record_timeline

        return record_timeline(shape, config, dtype=self.dtype)


__all__ = ["HopperGemmWSPlan"]
