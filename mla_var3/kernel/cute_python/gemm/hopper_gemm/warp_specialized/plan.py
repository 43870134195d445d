"""Plan for ``hopper_gemm_ws``: our warp-specialized, persistent TMA + WGMMA GEMM for sm_90a.

Configs are the CTA tile, the cluster shape and the pipeline depth; the first is the one
expected to be fastest at 8192^3 (128x256 tile with two consumer warpgroups, a 2x1 cluster
multicasting B, 4 stages). The kernel is compiled once per config for dynamic M, N and K
(each with the divisibility the kernel relies on), so every shape reuses one binary.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype

# Compile-only runs have no GPU to ask: use an H100/H200's 132 SMs (only the grid size
# depends on it, and the grid is a launch argument, not part of the binary).
COMPILE_SM_COUNT = 132


def _gemm_operand(dtype: Any, rows_divisibility: int) -> Any:
    """A tensor-free row-major (rows, cols) operand: dynamic extents, cols a multiple of 8."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    shape = (cute.sym_int(divisibility=rows_divisibility), cute.sym_int(divisibility=8))
    return make_fake_compact_tensor(dtype, shape, stride_order=(1, 0), assumed_align=16)


def _as_gemm_operand(t: Any, rows_divisibility: int) -> Any:
    """A real row-major torch tensor marked exactly like :func:`_gemm_operand`."""
    from cutlass.cute.runtime import from_dlpack

    return (
        from_dlpack(t, assumed_align=16)
        .mark_compact_shape_dynamic(mode=0, stride_order=(0, 1), divisibility=rows_divisibility)
        .mark_compact_shape_dynamic(mode=1, stride_order=(0, 1), divisibility=8)
    )


def gemm_from_config(config: Config, timeline: Any = None) -> Any:
    """The kernel object of a config (``timeline``: a ``TimelineLayout`` to compile the probes in)."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import HopperGemmWS

    return HopperGemmWS(
        tile_mn=tuple(config["tile_mn"]),
        cluster_mn=tuple(config["cluster_mn"]),
        stages=config["stages"],
        timeline=timeline,
    )


@cache
def _sm_count(device_index: int) -> int:
    import torch

    return torch.cuda.get_device_properties(device_index).multi_processor_count


class HopperGemmWSPlan(GemmPlanBase):
    name = "hopper_gemm_ws"
    description = "warp-specialized persistent GEMM: TMA multicast, mbarrier pipeline, WGMMA, setmaxnreg, TMA-store epilogue"
    archs = ("sm_90a",)
    backend = "cute"

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
        ab = cute_dtype(self.dtype)
        cluster_size = gemm.cluster_mn[0] * gemm.cluster_mn[1]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (
                _gemm_operand(ab, 1),
                _gemm_operand(ab, 8),
                _gemm_operand(ab, 1),
                COMPILE_SM_COUNT // cluster_size,
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            a, b, c = inputs["a"], inputs["b"], outputs["c"]
            max_clusters = _sm_count(a.device.index or 0) // cluster_size
            return (_as_gemm_operand(a, 1), _as_gemm_operand(b, 8), _as_gemm_operand(c, 1), max_clusters)

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: gemm.dynamic_smem_bytes(),
        )

    def record_timeline(self, shape: Shape, config: Config) -> tuple[list[Any], Any, str]:
        """The in-kernel timeline of one launch on this GPU: spans, TMA overlap, SVG
        (``--prof_type=annotation`` calls it; see ``timeline.py`` beside this file)."""
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.timeline import record_timeline

        return record_timeline(shape, config, dtype=self.dtype)


__all__ = ["HopperGemmWSPlan"]
